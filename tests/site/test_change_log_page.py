"""The "Admin changes" audit page: auditors and admins only, filters, pages, readable and escaped."""
from __future__ import annotations

import datetime as dt
import re

import pytest
from django.test import Client
from django.utils import timezone

from beyond_site.workspaces import configuration
from beyond_site.workspaces import knowledge
from beyond_site.workspaces import members
from beyond_site.workspaces.changelog import record_change
from beyond_site.workspaces.models import WorkspaceEvent
from tests.site.chat_support import client_for, workspace_with

pytestmark = [pytest.mark.django_db]

URL = "/w/acme/audit/changes/"


@pytest.fixture
def acme(alice, bob, carol):
    return workspace_with("acme", admin=alice, member=bob, auditor=carol)


def rows_of(html: str) -> list[str]:
    """The page's change numbers, top to bottom."""
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return re.findall(r"<tr>\s*<td>(\d+)</td>", body)


def test_auditors_and_admins_read_it_members_and_strangers_do_not(acme, alice, bob, carol, dave):
    configuration.set_research_default(acme, True, user=alice)
    assert client_for(carol).get(URL).status_code == 200
    assert client_for(alice).get(URL).status_code == 200
    assert client_for(bob).get(URL).status_code == 403
    assert client_for(dave).get(URL).status_code == 404
    assert Client().get(URL).status_code == 302  # to the login page


def test_another_workspace_is_a_404_and_its_changes_never_show(acme, alice, carol, dave):
    globex = workspace_with("globex", admin=dave)
    configuration.rename_workspace(globex, "Globex secret name", user=dave)
    assert client_for(carol).get("/w/globex/audit/changes/").status_code == 404
    assert "Globex secret name" not in client_for(carol).get(URL).content.decode()


def test_the_audit_pages_link_to_it(acme, carol):
    html = client_for(carol).get("/w/acme/audit/").content.decode()
    assert f'href="{URL}"' in html


def test_members_are_shown_no_link_to_pages_they_may_not_read_on_any_audit_page(acme, bob, carol):
    from tests.site.chat_support import new_run

    run = new_run(acme, bob)
    for page in ("/w/acme/audit/", f"/w/acme/audit/runs/{run.pk}/", f"/w/acme/audit/runs/{run.pk}/seen?q=x"):
        member_html = client_for(bob).get(page).content.decode()
        assert URL not in member_html and "/w/acme/audit/usage/" not in member_html, page
        auditor_html = client_for(carol).get(page).content.decode()
        assert URL in auditor_html and "/w/acme/audit/usage/" in auditor_html, page


def test_it_shows_who_when_what_and_before_after_readably(acme, alice, carol):
    configuration.set_budget(acme, {"max_tokens_per_run": 40000}, user=alice)
    configuration.set_enabled_frameworks(acme, ["gdpr"], user=alice)
    members.add_member(acme, "erin", "auditor", create_user=True)  # as a command would
    html = client_for(carol).get(URL).content.decode()
    row = WorkspaceEvent.objects.get(action="budget_changed")
    assert f'title="{row.at.isoformat(timespec="microseconds")}"' in html
    assert "Budget changed" in html and "tokens per run:</span> <span class=\"audit-muted\">(none)</span> → <ins>40000</ins>" in html
    assert "Enabled frameworks changed" in html and "<ins>gdpr</ins>" in html
    assert "Member added" in html and "a command on the server" in html and "username: erin" in html
    table = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    assert "{" not in table and "[" not in table  # no raw JSON
    assert rows_of(html) == ["3", "2", "1"]  # newest first


def test_filters_by_kind_who_and_date(acme, alice, carol):
    configuration.set_budget(acme, {"max_tokens_per_run": 1000}, user=alice)
    configuration.set_research_default(acme, True, user=carol)  # not possible from the page; fine for the log
    configuration.rename_workspace(acme, "Acme Ltd")  # a command
    client = client_for(carol)
    assert rows_of(client.get(URL, {"kind": "budget"}).content.decode()) == ["1"]
    assert rows_of(client.get(URL, {"kind": "settings"}).content.decode()) == ["3", "2"]
    assert rows_of(client.get(URL, {"who": "alice"}).content.decode()) == ["1"]
    assert rows_of(client.get(URL, {"who": "-command"}).content.decode()) == ["3"]
    today = timezone.now().date()
    assert rows_of(client.get(URL, {"date_from": today, "date_to": today}).content.decode()) == ["3", "2", "1"]
    assert rows_of(client.get(URL, {"date_from": today + dt.timedelta(days=1)}).content.decode()) == []
    assert rows_of(client.get(URL, {"date_to": today - dt.timedelta(days=1)}).content.decode()) == []
    bad = client.get(URL, {"date_from": "not-a-date", "kind": "nonsense"})
    assert bad.status_code == 200 and rows_of(bad.content.decode()) == ["3", "2", "1"]
    assert "filter ignored" in bad.content.decode()
    reversed_range = client.get(URL, {"date_from": today, "date_to": today - dt.timedelta(days=3)}).content.decode()
    assert "The end comes before the start (filter ignored)" in reversed_range
    assert rows_of(reversed_range) == ["3", "2", "1"]


def test_pages_of_fifty_newest_first_in_a_constant_number_of_queries(acme, alice, carol,
                                                                     django_assert_max_num_queries):
    client = client_for(carol)
    for n in range(3):
        record_change(acme, alice, "workspace_renamed", before=f"name {n}", after=f"name {n + 1}")
    with django_assert_max_num_queries(10) as few:
        client.get(URL)
    for n in range(3, 120):
        record_change(acme, alice if n % 2 else None, "workspace_renamed", before=f"name {n}", after=f"name {n + 1}")
    with django_assert_max_num_queries(10) as many:
        first = client.get(URL).content.decode()
    assert len(many.captured_queries) == len(few.captured_queries)
    assert rows_of(first)[:2] == ["120", "119"] and len(rows_of(first)) == 50
    third = client.get(URL, {"page": 3}).content.decode()
    assert rows_of(third)[-1] == "1" and len(rows_of(third)) == 20


def test_names_and_values_are_escaped(acme, alice, carol):
    members.add_member(acme, "<script>alert(1)</script>", "member", create_user=True)
    memory = knowledge.add_memory(acme, "plain fact", user=alice)
    knowledge.edit_memory(memory, "<img src=x onerror=alert(2)>", user=alice)
    html = client_for(carol).get(URL).content.decode()
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(2)&gt;" in html
    filtered = client_for(carol).get(URL, {"who": "<script>alert(1)</script>"})
    assert filtered.status_code == 200
