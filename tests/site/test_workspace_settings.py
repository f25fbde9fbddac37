"""The workspace settings page: admins only; frameworks, models per role and members, through the
workspace services; no API key shown or accepted; names escaped."""
from __future__ import annotations

import re

import pytest
from django.test import Client

from beyond_site.runs.queue import resolve_topology
from beyond_site.workspaces import configuration
from beyond_site.workspaces import knowledge
from beyond_site.workspaces import members
from beyond_site.runs.context import assemble_context
from beyond_site.workspaces.models import Membership, Workspace, WorkspaceEvent
from pipeline.topology import ROLES, TopologyError
from tests.site.chat_support import client_for, new_run, workspace_with
from tests.site.context_support import queued_run

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("queued_runs_stay_queued")]

SECRET = "sk-or-v1-do-not-show-0123456789"


@pytest.fixture
def acme(alice, bob, carol):
    return workspace_with("acme", admin=alice, member=bob, auditor=carol)


def topology_post(**per_role) -> dict:
    """A custom-topology form: every role openrouter z-ai/glm-5.3 unless `per_role` says otherwise."""
    data = {"mode": "custom"}
    for role in ROLES:
        cfg = {"provider": "openrouter", "model": "z-ai/glm-5.3", "effort": "low", "base_url": "",
               "max_tokens": ""}
        cfg.update(per_role.get(role, {}))
        data.update({f"{role}_{name}": value for name, value in cfg.items()})
    return data


def every_url(workspace):
    s = workspace.slug
    member = workspace.memberships.get(role="member")
    return [
        ("get", f"/w/{s}/settings/", {}),
        ("post", f"/w/{s}/settings/frameworks/", {"frameworks": ["gdpr"]}),
        ("post", f"/w/{s}/settings/topology/", topology_post()),
        ("post", f"/w/{s}/settings/members/", {"username": "dave", "role": "admin"}),
        ("post", f"/w/{s}/settings/members/{member.pk}/role/", {"role": "admin"}),
        ("post", f"/w/{s}/settings/members/{member.pk}/remove/", {}),
    ]


def state(workspace: Workspace) -> tuple:
    workspace.refresh_from_db()
    return (workspace.topology, workspace.enabled_frameworks,
            sorted(workspace.memberships.values_list("user__username", "role")))


# ---------------------------------------------------------------------------- who may

def test_an_admin_gets_the_page_and_the_chat_links_to_it(alice, acme):
    client = client_for(alice)
    page = client.get("/w/acme/settings/")
    assert page.status_code == 200
    html = page.content.decode()
    for part in ("Enabled frameworks", "Models per role", "Members", 'name="csrfmiddlewaretoken"'):
        assert part in html
    assert 'href="/w/acme/settings/"' in client.get("/w/acme/").content.decode()


def test_the_server_profiles_say_llamacpp_and_llama_cpp_python_are_different_servers(alice, acme):
    html = client_for(alice).get("/w/acme/settings/").content.decode()
    assert "llamacpp: llama.cpp&#x27;s own llama-server (NOT llama-cpp-python&#x27;s: it 500s on these schemas)" in html
    assert "llama-cpp-python&#x27;s server needs its own profile" in html
    assert "transformers: transformers serve: ignores response_format" in html


@pytest.mark.parametrize("who", ["bob", "carol"])
def test_members_and_auditors_get_403_and_change_nothing(request, acme, who):
    client = client_for(request.getfixturevalue(who))
    before = state(acme)
    for method, url, data in every_url(acme):
        assert getattr(client, method)(url, data).status_code == 403, url
    assert state(acme) == before
    assert "/settings/" not in client.get("/w/acme/").content.decode()  # no link for them


def test_non_members_get_404_and_anonymous_users_are_sent_to_log_in(acme, dave):
    before = state(acme)
    client = client_for(dave)
    for method, url, data in every_url(acme):
        assert getattr(client, method)(url, data).status_code == 404, url
    for method, url, data in every_url(acme):
        response = getattr(Client(), method)(url, data)
        assert response.status_code == 302 and response.url.startswith("/accounts/login/"), url
    assert state(acme) == before


def test_a_post_without_the_csrf_token_is_refused(alice, acme):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    before = state(acme)
    assert client.post("/w/acme/settings/frameworks/", {"frameworks": ["gdpr"]}).status_code == 403
    assert state(acme) == before


def test_get_only_and_post_only(alice, acme):
    client = client_for(alice)
    assert client.post("/w/acme/settings/", {}).status_code == 405
    assert client.get("/w/acme/settings/topology/").status_code == 405


# ---------------------------------------------------------------------------- frameworks

def test_narrowed_frameworks_persist_and_the_next_run_sees_only_them(alice, acme):
    client = client_for(alice)
    response = client.post("/w/acme/settings/frameworks/", {"frameworks": ["gdpr", "iso27001-2022"]}, follow=True)
    assert response.redirect_chain[-1][0] == "/w/acme/settings/"
    assert "Enabled frameworks saved: ISO/IEC 27001:2022, GDPR." in response.content.decode()
    acme.refresh_from_db()
    assert acme.enabled_frameworks == ["iso27001-2022", "gdpr"]
    ctx = assemble_context(queued_run(acme, "Write a GDPR record of processing"))
    assert ctx.enabled_frameworks == ("ISO/IEC 27001:2022", "GDPR")
    assert {e.framework for e in ctx.frameworks} <= {"ISO/IEC 27001:2022", "GDPR"}
    assert WorkspaceEvent.objects.get(action="frameworks_changed").user == alice


def test_none_enabled_is_allowed_with_a_warning(alice, acme):
    assert "No framework is enabled" not in client_for(alice).get("/w/acme/settings/").content.decode()
    response = client_for(alice).post("/w/acme/settings/frameworks/", {}, follow=True)
    assert "the planner will cite no framework" in response.content.decode()
    assert 'class="settings-note small">No framework is enabled' in response.content.decode()
    acme.refresh_from_db()
    assert acme.enabled_frameworks == []
    ctx = assemble_context(queued_run(acme, "Write a GDPR record of processing"))
    assert ctx.enabled_frameworks == () and ctx.frameworks == ()


def test_imported_packs_are_offered_by_name_and_unknown_keys_refused(alice, acme):
    knowledge.save_framework_pack({"key": "acme-controls", "name": "Acme Control Set",
                                  "entries": [{"ref": "AC-1", "kind": "control", "title": "Badges"}]})
    client = client_for(alice)
    html = client.get("/w/acme/settings/").content.decode()
    assert "Acme Control Set" in html and 'value="acme-controls"' in html
    before = state(acme)
    response = client.post("/w/acme/settings/frameworks/", {"frameworks": ["gdpr", "hipaa"]})
    assert response.status_code == 400 and "hipaa" in response.content.decode()
    assert state(acme) == before
    client.post("/w/acme/settings/frameworks/", {"frameworks": ["acme-controls"]})
    acme.refresh_from_db()
    assert acme.enabled_frameworks == ["acme-controls"]


# ---------------------------------------------------------------------------- topology

def test_a_saved_topology_is_used_by_the_next_run(alice, acme, settings):
    settings.BEYOND_ALLOWED_BASE_URLS = "http://localhost:11434/v1"  # the operator allowed this local endpoint
    client = client_for(alice)
    data = topology_post(planner={"effort": "high", "max_tokens": "4000"},
                         verifier={"provider": "openai", "model": "llama3.1", "base_url": "http://localhost:11434/v1"})
    response = client.post("/w/acme/settings/topology/", data, follow=True)
    assert response.redirect_chain[-1][0] == "/w/acme/settings/"
    assert "Models saved" in response.content.decode()
    topology = resolve_topology(Workspace.objects.get(slug="acme"))
    assert (topology.planner.provider, topology.planner.model, topology.planner.effort,
            topology.planner.max_tokens) == ("openrouter", "z-ai/glm-5.3", "high", 4000)
    assert (topology.verifier.provider, topology.verifier.base_url) == ("openai", "http://localhost:11434/v1")
    assert topology.executor.base_url is None
    run = new_run(Workspace.objects.get(slug="acme"), alice)
    assert run.topology["verifier"]["model"] == "llama3.1"
    assert WorkspaceEvent.objects.get(action="topology_changed").user == alice
    # the page shows the saved values back
    html = client.get("/w/acme/settings/").content.decode()
    assert 'value="http://localhost:11434/v1"' in html and 'value="llama3.1"' in html


@pytest.mark.parametrize("url", ["http://127.0.0.1:6379/v1", "http://localhost:11434/v1", "http://169.254.169.254/v1",
                                 "http://10.0.0.7/v1", "http://[::1]:8000/v1", "https://no-such-host.invalid/v1"])
def test_a_workspace_admin_cannot_point_a_role_at_the_servers_own_network(alice, acme, url):
    response = client_for(alice).post("/w/acme/settings/topology/", topology_post(
        verifier={"provider": "openai", "model": "m", "base_url": url}))
    assert response.status_code == 400
    assert "BEYOND_ALLOWED_BASE_URLS" in response.content.decode()
    acme.refresh_from_db()
    assert acme.topology is None


def test_a_public_endpoint_needs_no_allow_list(alice, acme):
    client_for(alice).post("/w/acme/settings/topology/", topology_post(
        verifier={"provider": "openai", "model": "m", "base_url": "https://8.8.8.8/v1"}))
    acme.refresh_from_db()
    assert acme.topology["verifier"]["base_url"] == "https://8.8.8.8/v1"


def test_back_to_the_server_default(alice, acme, settings):
    settings.BEYOND_PROVIDER = "offline"
    configuration.set_topology(acme, topology_post_dict())
    client_for(alice).post("/w/acme/settings/topology/", {"mode": "default"})
    acme.refresh_from_db()
    assert acme.topology is None
    assert resolve_topology(acme).planner.provider == "offline"


def topology_post_dict() -> dict:
    return {role: {"provider": "openrouter", "model": "z-ai/glm-5.3"} for role in ROLES}


def test_base_url_is_only_for_openai(alice, acme):
    client_for(alice).post("/w/acme/settings/topology/", topology_post(executor={"base_url": "http://x.example/v1"}))
    acme.refresh_from_db()
    assert "base_url" not in acme.topology["executor"]


def test_a_scripted_provider_is_refused_from_the_web(alice, acme):
    before = state(acme)
    data = topology_post(planner={"provider": "scripted"})
    data["planner_path"] = "/etc/passwd"
    response = client_for(alice).post("/w/acme/settings/topology/", data)
    assert response.status_code == 400
    assert "Select a valid choice" in response.content.decode()
    assert state(acme) == before
    with pytest.raises(TopologyError, match="scripted"):
        configuration.set_topology(acme, {role: {"provider": "scripted", "path": "/etc/passwd"} for role in ROLES})
    assert state(acme) == before


def test_an_invalid_topology_shows_errors_by_the_fields_and_changes_nothing(alice, acme):
    before = state(acme)
    response = client_for(alice).post("/w/acme/settings/topology/", topology_post(
        executor={"provider": "openai", "model": "m", "base_url": ""}, summarizer={"model": ""},
        verifier={"max_tokens": "0"}, planner={"provider": ""}))
    assert response.status_code == 400
    html = response.content.decode()
    assert "An openai provider needs &quot;base_url&quot;." in html
    assert "A openrouter provider needs &quot;model&quot;." in html
    assert "Choose a provider for this role." in html
    assert "greater than or equal to 1" in html
    assert state(acme) == before


def test_a_base_url_with_credentials_is_refused_and_not_echoed(alice, acme):
    before = state(acme)
    url = f"https://user:{SECRET}@api.example.com/v1"
    for bad in (url, f"https://api.example.com/v1?key={SECRET}"):
        response = client_for(alice).post("/w/acme/settings/topology/", topology_post(
            executor={"provider": "openai", "model": "gpt-x", "base_url": bad}))
        assert response.status_code == 400
        html = response.content.decode()
        assert "must not carry credentials" in html
        assert SECRET not in html
    assert state(acme) == before


def test_api_keys_are_never_shown_only_whether_they_are_set(alice, acme, monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    html = client_for(alice).get("/w/acme/settings/").content.decode()
    assert SECRET not in html
    assert "<code>OPENROUTER_API_KEY</code>: <span class=\"settings-keystate settings-keystate--set\">set</span>" in html
    assert "<code>OPENAI_API_KEY</code>: <span class=\"settings-keystate settings-keystate--unset\">not set</span>" in html
    assert 'name="api_key"' not in html and "password" not in html.split("<main", 1)[1]


def test_an_api_key_field_posted_anyway_is_not_stored(alice, acme):
    data = topology_post()
    data["planner_api_key"] = SECRET
    client_for(alice).post("/w/acme/settings/topology/", data)
    acme.refresh_from_db()
    assert acme.topology and SECRET not in str(acme.topology)


def test_a_scripted_topology_set_elsewhere_is_flagged(alice, acme):
    configuration.set_topology(acme, {role: {"provider": "scripted", "path": "/tmp/s.json"} for role in ROLES},
                          operator=True)
    html = client_for(alice).get("/w/acme/settings/").content.decode()
    assert "scripted provider for planner, executor, verifier, summarizer" in html
    assert "/tmp/s.json" not in html


# ---------------------------------------------------------------------------- members

def test_an_admin_adds_an_existing_user_they_share_a_workspace_with(alice, acme, dave):
    workspace_with("globex", admin=alice, member=dave)
    response = client_for(alice).post("/w/acme/settings/members/", {"username": "dave", "role": "auditor"},
                                      follow=True)
    assert "dave added as auditor." in response.content.decode()
    assert Membership.objects.get(workspace=acme, user=dave).role == "auditor"
    added = WorkspaceEvent.objects.get(action="member_added")
    assert (added.detail, added.before, added.after) == ({"username": "dave"}, None, "auditor")


def test_adding_an_unknown_user_or_an_existing_member_is_refused(alice, acme):
    before = state(acme)
    client = client_for(alice)
    response = client.post("/w/acme/settings/members/", {"username": "nobody", "role": "member"})
    assert response.status_code == 400 and "Send them an invitation link instead" in response.content.decode()
    response = client.post("/w/acme/settings/members/", {"username": "alice", "role": "auditor"})
    assert response.status_code == 400 and "already a member" in response.content.decode()
    response = client.post("/w/acme/settings/members/", {"username": "dave", "role": "owner"})
    assert response.status_code == 400
    assert state(acme) == before


def test_an_admin_changes_a_role_and_removes_a_member(alice, bob, carol, acme):
    client = client_for(alice)
    bob_m = Membership.objects.get(workspace=acme, user=bob)
    response = client.post(f"/w/acme/settings/members/{bob_m.pk}/role/", {"role": "auditor"}, follow=True)
    assert "bob is now auditor." in response.content.decode()
    bob_m.refresh_from_db()
    assert bob_m.role == "auditor"
    carol_m = Membership.objects.get(workspace=acme, user=carol)
    response = client.post(f"/w/acme/settings/members/{carol_m.pk}/remove/", follow=True)
    assert "carol removed from the workspace." in response.content.decode()
    assert not Membership.objects.filter(pk=carol_m.pk).exists()
    assert [e.action for e in WorkspaceEvent.objects.order_by("at", "id")] == ["member_role_changed",
                                                                               "member_removed"]


def test_the_last_admin_cannot_be_demoted_or_removed(alice, acme):
    client = client_for(alice)
    mine = Membership.objects.get(workspace=acme, user=alice)
    before = state(acme)
    for url, data in ((f"/w/acme/settings/members/{mine.pk}/role/", {"role": "member"}),
                      (f"/w/acme/settings/members/{mine.pk}/remove/", {})):
        response = client.post(url, data, follow=True)
        assert response.redirect_chain[-1][0] == "/w/acme/settings/"
        assert "alice is the workspace&#x27;s only admin: make another member an admin first" in \
            response.content.decode()
    assert state(acme) == before
    with pytest.raises(members.LastAdminError):
        members.change_role(mine, "auditor")
    with pytest.raises(members.LastAdminError):
        members.remove_member(mine)


def test_with_two_admins_one_may_step_down_and_lands_in_the_chat(alice, bob, acme):
    members.change_role(Membership.objects.get(workspace=acme, user=bob), "admin")
    mine = Membership.objects.get(workspace=acme, user=alice)
    response = client_for(alice).post(f"/w/acme/settings/members/{mine.pk}/role/", {"role": "member"})
    assert response.status_code == 302 and response.url == "/w/acme/"
    mine.refresh_from_db()
    assert mine.role == "member"
    with pytest.raises(members.LastAdminError):  # bob is now the only admin
        members.remove_member(Membership.objects.get(workspace=acme, user=bob))


def test_members_are_looked_up_through_the_callers_workspace(alice, acme, dave):
    other = workspace_with("other", admin=dave)
    theirs = Membership.objects.get(workspace=other, user=dave)
    client = client_for(alice)
    assert client.post(f"/w/acme/settings/members/{theirs.pk}/remove/").status_code == 404
    assert client.post(f"/w/acme/settings/members/{theirs.pk}/role/", {"role": "auditor"}).status_code == 404
    assert Membership.objects.get(pk=theirs.pk).role == "admin"


# ---------------------------------------------------------------------------- escaping

def test_names_are_escaped(alice, acme, django_user_model):
    Workspace.objects.filter(pk=acme.pk).update(name="<script>alert('ws')</script>")
    evil = django_user_model.objects.create_user("<script>alert('user')</script>", password="x")
    Membership.objects.create(workspace=acme, user=evil, role="member")
    html = client_for(alice).get("/w/acme/settings/").content.decode()
    assert "<script>alert(" not in html
    assert "&lt;script&gt;alert(&#x27;ws&#x27;)&lt;/script&gt;" in html
    assert "&lt;script&gt;alert(&#x27;user&#x27;)&lt;/script&gt;" in html


def test_an_endpoint_profile_set_elsewhere_is_kept_while_the_provider_stays(alice, acme, settings):
    settings.BEYOND_ALLOWED_BASE_URLS = "http://localhost:8000/v1"
    topology = {role: {"provider": "openai", "model": "m", "base_url": "http://localhost:8000/v1",
                       "profile": {"reasoning_effort": False}} for role in ROLES}
    configuration.set_topology(acme, topology, operator=True)
    client = client_for(alice)
    html = client.get("/w/acme/settings/").content.decode()
    assert re.search(r'value="custom"[^>]*checked', html) and not re.search(r'value="default"[^>]*checked', html)
    assert "Endpoint profile overrides are set for planner, executor, verifier, summarizer" in html
    client.post("/w/acme/settings/topology/", topology_post(
        **{role: {"provider": "openai", "model": "m2", "base_url": "http://localhost:8000/v1"} for role in ROLES[:3]}))
    acme.refresh_from_db()
    assert acme.topology["planner"]["profile"] == {"reasoning_effort": False}
    assert acme.topology["planner"]["model"] == "m2"
    assert "profile" not in acme.topology["summarizer"]  # now openrouter: an openai profile does not apply


def test_the_add_form_answers_alike_for_a_stranger_and_a_name_nobody_has(alice, acme, dave):
    """dave exists but shares no workspace with alice: she learns no more than about a made-up name."""
    client = client_for(alice)

    def answer(username):
        html = client.post("/w/acme/settings/members/", {"username": username, "role": "member"}).content.decode()
        return re.search(r'id="id_username_error">([^<]*)<', html).group(1).replace(username, "NAME")

    assert answer("dave") == answer("nobody-at-all")
    assert not Membership.objects.filter(user=dave).exists()


def test_staff_may_add_anyone_directly(alice, acme, dave):
    alice.is_staff = True
    alice.save()
    response = client_for(alice).post("/w/acme/settings/members/", {"username": "dave", "role": "member"})
    assert response.status_code == 302 and Membership.objects.get(user=dave).role == "member"


def test_a_model_server_profile_is_chosen_by_name(alice, acme, settings):
    settings.BEYOND_ALLOWED_BASE_URLS = "http://localhost:8080/v1"
    client = client_for(alice)
    html = client.get("/w/acme/settings/").content.decode()
    assert '<option value="llamacpp">' in html and '<option value="litellm">' in html
    local = {"provider": "openai", "model": "qwen", "base_url": "http://localhost:8080/v1", "profile": "llamacpp"}
    response = client.post("/w/acme/settings/topology/", topology_post(planner=local, verifier=local))
    assert response.status_code == 302
    acme.refresh_from_db()
    assert acme.topology["planner"]["profile"] == "llamacpp" and acme.topology["verifier"]["profile"] == "llamacpp"
    assert "profile" not in acme.topology["executor"]
    page = client.get("/w/acme/settings/").content.decode()
    assert re.search(r'<option value="llamacpp" selected>', page)


def test_the_web_research_default_is_set_by_admins_and_starts_new_conversations(alice, bob, acme, monkeypatch,
                                                                                tmp_path):
    (tmp_path / "search.json").write_text('{"results": {"*": []}}')
    monkeypatch.setenv("BEYOND_SEARCH", f"static:{tmp_path / 'search.json'}")
    admin = client_for(alice)
    assert 'data-research-default' in admin.get("/w/acme/settings/").content.decode()
    assert client_for(bob).post("/w/acme/settings/research/", {"research_default": "on"}).status_code == 403
    assert admin.post("/w/acme/settings/research/", {"research_default": "on"}).status_code == 302
    acme.refresh_from_db()
    assert acme.research_default is True
    assert WorkspaceEvent.objects.filter(workspace=acme, action="research_default_changed").exists()
    chat = client_for(bob).get("/w/acme/").content.decode()
    assert re.search(r'name="research" data-research-toggle checked', chat)


def test_without_a_search_backend_the_research_default_cannot_be_set(alice, acme, monkeypatch):
    monkeypatch.delenv("BEYOND_SEARCH", raising=False)
    page = client_for(alice).get("/w/acme/settings/").content.decode()
    assert "not configured" in page and re.search(r'data-research-default[^>]*disabled', page)
