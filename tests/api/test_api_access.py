"""Who the API lets in, and what each may do (docs/api.md, "Tokens" and "Permissions"): a token is
its person with their roles and never more, the pages' rules decide, and every refusal is a
problem+json the client can read."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from beyond_site.workspaces import tokens
from beyond_site.workspaces.models import ApiToken, Memory, Membership, WorkspaceEvent
from tests.api.conftest import api_client, token_for
from tests.site.chat_support import new_run
from tests.site.export_support import rich_run

# transaction=True: the events' stream reads on threads of its own (database_sync_to_async,
# thread_sensitive=False), which see only what is committed.
pytestmark = pytest.mark.django_db(transaction=True)

PROBLEM = "application/problem+json"


def is_problem(response, status: int) -> dict:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"] == PROBLEM
    body = response.json()
    assert body["status"] == status and body["title"] and body["detail"]
    return body


# ---- getting in ----------------------------------------------------------------------------------

def test_without_a_token_it_is_401_with_the_scheme_to_use(people):
    response = api_client(None).get("/api/v1/workspaces")
    is_problem(response, 401)
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_a_session_cookie_never_authenticates_the_api(people, client):
    client.force_login(people["admin"])
    assert client.get("/").status_code == 200  # the cookie is a live login for the pages
    is_problem(client.get("/api/v1/workspaces"), 401)
    is_problem(client.post("/api/v1/workspaces/acme/memories", {"text": "x"}, content_type="application/json"), 401)


@pytest.mark.parametrize("sent", ["byd_not-a-real-token", "not even the prefix", "byd_" + "x" * 500, ""])
def test_an_unknown_or_malformed_token_is_401(people, sent):
    is_problem(api_client(sent).get("/api/v1/workspaces"), 401)


def test_a_token_works_until_it_is_revoked_then_never_again(people):
    row, secret = tokens.create_token(people["member"], "sync")
    client = api_client(secret)
    assert client.get("/api/v1/workspaces").status_code == 200
    tokens.revoke_token(row, people["member"])
    is_problem(client.get("/api/v1/workspaces"), 401)


def test_an_expired_token_is_401(people):
    row, secret = tokens.create_token(people["member"], "sync", days=1)
    ApiToken.objects.filter(pk=row.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    is_problem(api_client(secret).get("/api/v1/workspaces"), 401)


def test_a_deactivated_accounts_tokens_stop_working(people):
    secret = token_for(people["member"])
    assert api_client(secret).get("/api/v1/workspaces").status_code == 200
    people["member"].is_active = False
    people["member"].save()
    is_problem(api_client(secret).get("/api/v1/workspaces"), 401)


def test_only_a_hash_is_kept_and_the_last_use_is_recorded(people):
    row, secret = tokens.create_token(people["member"], "sync")
    assert secret.startswith("byd_") and len(secret) > 40
    stored = ApiToken.objects.filter(pk=row.pk).values().get()
    assert secret not in {str(v) for v in stored.values()}
    assert stored["prefix"] == secret[:10] and stored["last_used_at"] is None
    api_client(secret).get("/api/v1/workspaces")
    assert ApiToken.objects.get(pk=row.pk).last_used_at is not None


def test_making_and_revoking_a_token_are_in_the_change_log(people):
    row, _ = tokens.create_token(people["admin"], "GRC sync", read_only=True)
    tokens.revoke_token(row, people["admin"])
    logged = list(WorkspaceEvent.objects.filter(workspace__slug="acme").values_list("action", "detail"))
    made = [d for a, d in logged if a == "api_token_created"]
    assert made and made[0]["name"] == "GRC sync" and made[0]["read_only"] is True
    assert any(a == "api_token_revoked" and d["token"] == row.prefix for a, d in logged)


@pytest.mark.parametrize("options, words", [({"days": 0}, "1 to 365"), ({"days": 366}, "1 to 365"),
                                            ({"name": "  "}, "needs a name")])
def test_a_token_outside_the_rules_is_refused(people, options, words):
    with pytest.raises(tokens.TokenRefused, match=words):
        tokens.create_token(people["member"], options.pop("name", "x"), **options)


def test_a_token_cannot_reach_a_workspace_its_person_is_not_in(people, globex):
    with pytest.raises(tokens.TokenRefused, match="member of"):
        tokens.create_token(people["member"], "x", workspaces=[globex])


# ---- what each role may do -----------------------------------------------------------------------

def test_the_workspaces_are_the_callers_with_their_roles(clients):
    assert clients["auditor"].get("/api/v1/workspaces").json() == [{"slug": "acme", "name": "Acme", "role": "auditor"}]
    assert clients["stranger"].get("/api/v1/workspaces").json() == [{"slug": "globex", "name": "Globex", "role": "member"}]


def test_an_auditors_token_reads_but_cannot_start_runs_or_write(clients, people):
    run = new_run(people["admin"].memberships.get().workspace, people["admin"])
    auditor = clients["auditor"]
    assert auditor.get(f"/api/v1/runs/{run.pk}").status_code == 200
    assert auditor.get("/api/v1/workspaces/acme/runs").status_code == 200
    assert auditor.get("/api/v1/workspaces/acme/changes").status_code == 200
    assert auditor.get("/api/v1/workspaces/acme/usage").status_code == 200
    assert auditor.post("/api/v1/workspaces/acme/verify").json()["intact"] is True
    is_problem(auditor.post("/api/v1/workspaces/acme/runs", {"task": "Draft a note"}, content_type="application/json"),
               403)
    is_problem(auditor.post("/api/v1/workspaces/acme/memories", {"text": "A fact"}, content_type="application/json"),
               403)
    is_problem(auditor.post(f"/api/v1/runs/{run.pk}/regenerate"), 403)


def test_verify_names_a_run_whose_record_was_changed(clients, people):
    run = rich_run(people["admin"].memberships.get().workspace, people["admin"])  # its topology rewritten after
    verdict = clients["auditor"].post("/api/v1/workspaces/acme/verify").json()
    assert verdict["intact"] is False and verdict["broken_runs"] == [run.pk]
    assert "BROKEN" in verdict["summary"]


def test_a_members_token_may_not_read_the_audit_record(clients):
    for path in ("/api/v1/workspaces/acme/runs", "/api/v1/workspaces/acme/changes", "/api/v1/workspaces/acme/usage"):
        is_problem(clients["member"].get(path), 403)
    is_problem(clients["member"].post("/api/v1/workspaces/acme/verify"), 403)


def test_another_workspaces_objects_are_404_whether_or_not_they_exist(clients, people):
    run = rich_run(people["admin"].memberships.get().workspace, people["admin"])
    memory = Memory.objects.create(workspace=run.workspace, text="A fact")
    stranger = clients["stranger"]
    missing = is_problem(stranger.get("/api/v1/runs/999999"), 404)
    hidden = is_problem(stranger.get(f"/api/v1/runs/{run.pk}"), 404)
    assert hidden["detail"] == missing["detail"]  # nothing tells an existing run from a missing one
    for path in (f"/api/v1/runs/{run.pk}/events", f"/api/v1/runs/{run.pk}/export?format=pdf&edition=client",
                 "/api/v1/workspaces/acme/files", "/api/v1/workspaces/acme/memories",
                 "/api/v1/workspaces/acme/conversations", "/api/v1/workspaces/acme/runs",
                 "/api/v1/workspaces/nope/files"):
        is_problem(stranger.get(path), 404)
    is_problem(stranger.delete(f"/api/v1/workspaces/acme/memories/{memory.pk}"), 404)
    is_problem(stranger.post(f"/api/v1/runs/{run.pk}/stop"), 404)
    is_problem(stranger.post("/api/v1/workspaces/acme/runs", {"task": "x"}, content_type="application/json"), 404)
    assert Memory.objects.filter(pk=memory.pk).exists()


def test_leaving_a_workspace_ends_the_tokens_reach_at_once(clients, people):
    assert clients["member"].get("/api/v1/workspaces/acme/memories").status_code == 200
    Membership.objects.filter(user=people["member"]).delete()
    is_problem(clients["member"].get("/api/v1/workspaces/acme/memories"), 404)


def test_a_read_only_token_reads_and_writes_nothing(people):
    client = api_client(token_for(people["member"], read_only=True))
    memory = Memory.objects.create(workspace=people["member"].memberships.get().workspace, text="A fact")
    assert client.get("/api/v1/workspaces/acme/memories").status_code == 200
    refusals = [client.post("/api/v1/workspaces/acme/memories", {"text": "x"}, content_type="application/json"),
                client.delete(f"/api/v1/workspaces/acme/memories/{memory.pk}"),
                client.post("/api/v1/workspaces/acme/runs", {"task": "Draft a note"}, content_type="application/json")]
    for response in refusals:
        assert "read-only" in is_problem(response, 403)["detail"]
    assert list(Memory.objects.values_list("text", flat=True)) == ["A fact"]


def test_a_token_limited_to_one_workspace_finds_no_other(people, globex):
    Membership.objects.create(user=people["admin"], workspace=globex, role=Membership.MEMBER)
    client = api_client(token_for(people["admin"], workspaces=[globex]))
    assert [w["slug"] for w in client.get("/api/v1/workspaces").json()] == ["globex"]
    run = new_run(people["admin"].memberships.get(workspace__slug="acme").workspace, people["admin"])
    is_problem(client.get("/api/v1/workspaces/acme/memories"), 404)
    is_problem(client.get(f"/api/v1/runs/{run.pk}"), 404)
    assert client.get("/api/v1/workspaces/globex/memories").status_code == 200


def test_a_member_may_stop_only_their_own_run_an_admin_any(clients, people):
    run = new_run(people["admin"].memberships.get().workspace, people["admin"])
    is_problem(clients["member"].post(f"/api/v1/runs/{run.pk}/stop"), 403)
    assert clients["admin"].post(f"/api/v1/runs/{run.pk}/stop").json()["stopping"] is True


# ---- errors a client can read --------------------------------------------------------------------

def test_an_invalid_body_is_400_naming_the_field(clients):
    body = is_problem(clients["member"].post("/api/v1/workspaces/acme/runs", {"task": ""},
                                             content_type="application/json"), 400)
    assert "task" in body["detail"]
    is_problem(clients["member"].post("/api/v1/workspaces/acme/runs", b"{not json", content_type="application/json"),
               400)


def test_an_unknown_address_and_a_wrong_method_are_problems_too(clients):
    is_problem(clients["member"].get("/api/v1/no-such-thing"), 404)
    response = clients["member"].delete("/api/v1/workspaces")
    is_problem(response, 405)
    assert "GET" in response["Allow"]


@override_settings(BEYOND_API_RATE="3/min")
def test_past_the_rate_a_token_gets_429_with_retry_after(people):
    client = api_client(token_for(people["member"]))
    other = api_client(token_for(people["admin"]))
    assert [client.get("/api/v1/workspaces").status_code for _ in range(3)] == [200, 200, 200]
    response = client.get("/api/v1/workspaces")
    is_problem(response, 429)
    assert 1 <= int(response["Retry-After"]) <= 60
    assert other.get("/api/v1/workspaces").status_code == 200  # the limit is per token


def test_csrf_does_not_apply_to_token_requests(people):
    from django.test import Client
    client = Client(enforce_csrf_checks=True, headers={"Authorization": f"Bearer {token_for(people['member'])}"})
    response = client.post("/api/v1/workspaces/acme/memories", {"text": "A fact"}, content_type="application/json")
    assert response.status_code == 201 and response.json()["text"] == "A fact"


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1024)
def test_a_body_over_the_limit_is_413(clients):
    response = clients["member"].post("/api/v1/workspaces/acme/memories", {"text": "x" * 5000},
                                      content_type="application/json")
    is_problem(response, 413)
