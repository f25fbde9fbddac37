"""The run pages as an auditor reads them: who started a run, released content rendered like the
chat with its Markdown a click away, re-renders as diffs, times in the viewer's zone, links to and
from the chat, and a history whose pages cost the same few queries however long it grows."""
from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from bench.history_seed import SEEDER, seed_history
from beyond_site.audit.presenters import draft_diff
from beyond_site.lib.timezones import zone_from
from beyond_site.runs.models import Run, Step
from beyond_site.workspaces.models import Membership, Workspace
from pipeline.topology import parse_shorthand
from tests.scripting import PASS, fail
from tests.site.audit_support import run_task

pytestmark = pytest.mark.django_db(transaction=True)

ROW_IDS = re.compile(r'<td><a href="/w/(?:[\w-]+)/audit/runs/(\d+)/">')


def html_of(client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, url
    return response.content.decode()


def queries_for(client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured.captured_queries)


# -- the list -------------------------------------------------------------------------------------

def test_the_list_says_who_started_each_run_and_escapes_the_task(auditor_client, acme, bob):
    Run.objects.create(workspace=acme, task='<script>alert("task")</script> & <b>bold</b>', created_by=bob,
                       topology=parse_shorthand("offline").as_json())
    Run.objects.create(workspace=acme, task="From the command line", topology=parse_shorthand("offline").as_json())
    html = html_of(auditor_client, "/w/acme/audit/")
    assert "<th>Started by</th>" in html
    rows = html.split("<tbody>")[1].split("</tbody>")[0].split("</tr>")
    assert '<td class="audit-who">bob</td>' in rows[1]
    assert "not recorded" in rows[1 - 1] or "not recorded" in rows[0]
    assert "<script>alert" not in html and "<b>bold</b>" not in html
    assert "&lt;script&gt;alert(&quot;task&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in html


def test_the_list_costs_the_same_queries_for_2_runs_and_for_30(auditor, client):
    small, _ = seed_history("small", 2)
    large, _ = seed_history("large", 30)
    for workspace in (small, large):
        Membership.objects.create(user=auditor, workspace=workspace, role=Membership.AUDITOR)
    client.force_login(auditor)
    assert len(ROW_IDS.findall(html_of(client, "/w/large/audit/"))) == 30
    counts = {slug: queries_for(client, f"/w/{slug}/audit/") for slug in ("small", "large")}
    assert counts["small"] == counts["large"], counts
    filtered = {slug: queries_for(client, f"/w/{slug}/audit/?badge=passed_after_rerender&q=a&status=completed")
                for slug in ("small", "large")}
    assert filtered["small"] == filtered["large"] == counts["small"], filtered


def test_a_run_with_several_matching_steps_is_listed_once_and_counted_once(auditor_client, tmp_path):
    trace = run_task(tmp_path, {1: {"executor": ["A.", "B."], "verifier": [fail("x"), fail("y")]},
                                2: {"executor": ["C.", "D."], "verifier": [fail("x"), fail("y")]}})
    assert [s["badge"] for s in trace["steps"]] == ["warning", "warning"]
    html = html_of(auditor_client, "/w/acme/audit/?badge=warning")
    assert [int(i) for i in ROW_IDS.findall(html)] == [trace["run"]["id"]]
    assert "Matching runs: 1." in html


def test_the_date_filter_reads_days_in_the_viewers_zone(auditor_client, acme):
    # 23:30 UTC on 14 January is already 15 January in Tokyo (UTC+9).
    run = Run.objects.create(workspace=acme, task="Late evening run", topology=parse_shorthand("offline").as_json())
    Run.objects.filter(pk=run.pk).update(created_at=datetime(2024, 1, 14, 23, 30, tzinfo=timezone.utc))
    query = "/w/acme/audit/?date_from=2024-01-15&date_to=2024-01-15"
    assert ROW_IDS.findall(html_of(auditor_client, query)) == []
    auditor_client.cookies["tz"] = "Asia/Tokyo"
    assert ROW_IDS.findall(html_of(auditor_client, query)) == [str(run.pk)]


# -- time zones -------------------------------------------------------------------------------------

def test_times_are_shown_in_the_viewers_zone_with_the_utc_instant_on_hover(auditor_client, acme):
    run = Run.objects.create(workspace=acme, task="A run", topology=parse_shorthand("offline").as_json())
    Run.objects.filter(pk=run.pk).update(created_at=datetime(2024, 7, 1, 12, 0, 5, 123456, tzinfo=timezone.utc))
    exact = "2024-07-01T12:00:05.123456+00:00"
    html = html_of(auditor_client, "/w/acme/audit/")
    assert f'<time datetime="{exact}" title="{exact} (UTC)">2024-07-01 12:00:05 UTC</time>' in html
    assert "Times are in UTC" in html
    auditor_client.cookies["tz"] = "Europe/Paris"
    for url in ("/w/acme/audit/", f"/w/acme/audit/runs/{run.pk}/"):
        html = html_of(auditor_client, url)
        assert f'<time datetime="{exact}" title="{exact} (UTC)">2024-07-01 14:00:05 CEST</time>' in html
        assert "Times are in Europe/Paris" in html


@pytest.mark.parametrize("cookie", ["../../../etc/passwd", "Not/AZone", "Europe/Paris<script>", "x" * 500, "",
                                    "/usr/share/zoneinfo/UTC", "Europe%2F..%2F..%2Fetc"])
def test_a_cookie_that_names_no_known_zone_means_utc(auditor_client, acme, cookie):
    assert zone_from(cookie) is None
    Run.objects.create(workspace=acme, task="A run", topology=parse_shorthand("offline").as_json())
    auditor_client.cookies["tz"] = cookie
    assert "Times are in UTC" in html_of(auditor_client, "/w/acme/audit/")


def test_a_known_zone_is_read_from_the_cookie_encoded_or_not():
    assert str(zone_from("America/Argentina/Buenos_Aires")) == "America/Argentina/Buenos_Aires"
    assert str(zone_from("Europe%2FParis")) == "Europe/Paris"
    assert str(zone_from("Etc/GMT+5")) == "Etc/GMT+5"


# -- the run page ---------------------------------------------------------------------------------

HOSTILE = 'Intro <img src=x onerror="alert(1)"> and <script>alert(2)</script>'


def test_released_content_is_rendered_like_the_chat_with_the_raw_markdown_a_click_away(auditor_client, tmp_path):
    content = f"## Access\n\n- **Managers** approve access.\n- [policy](javascript:alert(3))\n\n{HOSTILE}\n"
    trace = run_task(tmp_path, {1: {"executor": [content], "verifier": [PASS]}})
    html = html_of(auditor_client, f"/w/acme/audit/runs/{trace['run']['id']}/")
    rendered = html.split('<div class="audit-rendered prose">')[1].split("</div>")[0]
    assert "<h2>Access</h2>" in rendered and "<strong>Managers</strong>" in rendered
    assert 'href="javascript' not in rendered and "<script" not in rendered and "<img" not in rendered
    raw = html.split('<details class="audit-raw"><summary>Raw Markdown')[1].split("</details>")[0]
    assert "## Access" in raw and "- **Managers** approve access." in raw
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in raw
    assert "<script>alert(2)" not in html and "<img src=x" not in html


def test_a_rerender_is_shown_as_a_diff_against_the_attempt_before(auditor_client, tmp_path):
    first = "Line one.\nManagers approve access.\nLine three.\nLine four.\nLine five.\nLine six.\nLine seven."
    second = f"Line one.\nThe security officer approves access.\n{HOSTILE}\nLine three.\nLine four.\nLine five.\nLine six.\nLine seven."
    trace = run_task(tmp_path, {1: {"executor": [first, second], "verifier": [fail("Who approves?"), PASS]}})
    html = html_of(auditor_client, f"/w/acme/audit/runs/{trace['run']['id']}/")
    attempt2 = html.split("<h4>Attempt 2 (re-render)</h4>")[1].split('<div class="audit-verdict">')[0]
    diff = attempt2.split('class="audit-text audit-diff"')[1].split("</div>")[0]
    assert ('<del class="audit-diff-line"><span class="audit-diff-mark" aria-label="removed">-</span>'
            "Managers approve access.</del>") in diff
    assert ('<ins class="audit-diff-line"><span class="audit-diff-mark" aria-label="added">+</span>'
            "The security officer approves access.</ins>") in diff
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in diff and "<script>" not in html
    assert "… 3 unchanged lines …" in diff  # lines five to seven fold away
    assert "Line seven." not in diff
    assert "Full draft of attempt 2" in attempt2 and "Line seven." in attempt2  # the whole draft, folded


def test_draft_diff_marks_lines_and_folds_what_did_not_change():
    assert draft_diff("a\nb", "a\nb") == []
    lines = draft_diff("\n".join("abcdefghij"), "\n".join("abcdeXghij"), context=1)
    assert lines == [{"kind": "skipped", "text": "… 4 unchanged lines …"}, {"kind": "same", "text": "e"},
                     {"kind": "removed", "text": "f"}, {"kind": "added", "text": "X"}, {"kind": "same", "text": "g"},
                     {"kind": "skipped", "text": "… 3 unchanged lines …"}]
    assert draft_diff("", "new") == [{"kind": "added", "text": "new"}]


def test_the_calls_table_shows_the_essentials_and_keeps_the_rest_per_row(auditor_client, tmp_path):
    trace = run_task(tmp_path, {1: {"executor": ["One."], "verifier": [{"error": "timeout"}, PASS]}})
    html = html_of(auditor_client, f"/w/acme/audit/runs/{trace['run']['id']}/")
    calls = html.split('<section id="calls">')[1].split("</section>")[0]
    head = calls.split("<thead>")[1].split("</thead>")[0]
    assert re.findall(r"<th>([^<]*)</th>", head) == ["Role", "Model", "Status", "Latency (s)", "Tokens in / out",
                                                      "Cost", "More"]
    assert calls.count('<details class="audit-call-more">') == len(trace["model_calls"])
    assert 'audit-call-error">error</span>' in calls and "<dt>Error</dt>" in calls
    assert "<dt>Transport retries</dt>" in calls and "what this call was given" in calls


def test_the_run_page_costs_the_same_queries_for_a_small_and_a_large_run(auditor, client):
    workspace, _ = seed_history("hist", 12)
    Membership.objects.create(user=auditor, workspace=workspace, role=Membership.AUDITOR)
    client.force_login(auditor)
    runs = Run.objects.filter(workspace=workspace, status=Run.COMPLETED, lease_owner=SEEDER)
    small = next(r for r in runs if r.steps.count() == 2 and not r.steps.filter(attempts__attempt=2).exists())
    large = next(r for r in runs if r.steps.count() == 3 or r.steps.filter(attempts__attempt=2).exists())
    assert large.model_calls.count() > small.model_calls.count()
    assert (queries_for(client, f"/w/hist/audit/runs/{small.pk}/")
            == queries_for(client, f"/w/hist/audit/runs/{large.pk}/"))


def test_a_run_links_to_its_conversation_and_the_chat_links_back(client, people, tmp_path):
    trace = run_task(tmp_path, {1: {"executor": ["One."], "verifier": [PASS]}})
    run_id, conversation = trace["run"]["id"], trace["run"]["conversation"]
    for role in ("admin", "member", "auditor"):
        client.force_login(people[role])
        chat = html_of(client, f"/w/acme/c/{conversation}/")
        assert f'href="/w/acme/audit/runs/{run_id}/"' in chat, role
        audit = html_of(client, f"/w/acme/audit/runs/{run_id}/")
        assert f'href="/w/acme/c/{conversation}/#run-{run_id}"' in audit, role
    client.force_login(people["stranger"])
    assert client.get(f"/w/acme/audit/runs/{run_id}/").status_code == 404


def test_a_deleted_conversation_is_named_but_not_linked(auditor_client, tmp_path):
    from beyond_site.workspaces.models import Conversation
    trace = run_task(tmp_path, {1: {"executor": ["One."], "verifier": [PASS]}})
    Conversation.objects.filter(pk=trace["run"]["conversation"]).update(deleted_at=datetime.now(timezone.utc))
    html = html_of(auditor_client, f"/w/acme/audit/runs/{trace['run']['id']}/")
    assert "deleted from the chat" in html and f'/c/{trace["run"]["conversation"]}/' not in html


# -- the history seeder (bench/history_seed.py) ---------------------------------------------------

def test_the_seeder_refuses_an_existing_workspace_unless_told(acme):
    with pytest.raises(ValueError):
        seed_history("acme", 3)
    _, made = seed_history("acme", 3, into_existing=True)
    assert made == 3 and Run.objects.filter(workspace=acme, lease_owner=SEEDER).count() == 3


def test_seeded_runs_are_finished_and_read_back_like_real_ones(auditor, client):
    workspace, _ = seed_history("hist", 20)
    runs = Run.objects.filter(workspace=workspace)
    assert runs.count() == 20 and not runs.exclude(status__in=Run.FINISHED).exists()
    assert Step.objects.filter(run__workspace=workspace, status=Step.RELEASED).exists()
    Membership.objects.create(user=auditor, workspace=workspace, role=Membership.AUDITOR)
    client.force_login(auditor)
    for run in runs:
        html_of(client, f"/w/hist/audit/runs/{run.pk}/")
    assert Workspace.objects.get(slug="hist").name == "hist (seeded history)"


def test_drafts_too_long_to_compare_are_shown_whole():
    from beyond_site.audit.presenters import DIFF_MAX_LINES, attempt_views
    long = "\n".join(f"line {i}" for i in range(DIFF_MAX_LINES + 1))
    views = attempt_views([{"attempt": 1, "draft": "short"}, {"attempt": 2, "draft": long}])
    assert views[0]["diff"] is None and views[1]["diff"] is None
    views = attempt_views([{"attempt": 1, "draft": "a"}, {"attempt": 2, "draft": "b"}])
    assert views[1]["diff"] == [{"kind": "removed", "text": "a"}, {"kind": "added", "text": "b"}]
