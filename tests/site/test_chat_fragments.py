"""What a live page's doorbell reads: few queries, whatever the run's size (docs/architecture.md)."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from pipeline import events as ev
from pipeline.events import Event
from beyond_site.chat import fragments
from beyond_site.runs.models import Run
from beyond_site.runs.queue import claim_run
from tests.site.chat_support import brief_ready, new_run, record, released, workspace_with


def member_page(user, run) -> str:
    client = Client()
    client.force_login(user)
    return client.get(f"/w/{run.workspace.slug}/c/{run.conversation_id}/").content.decode()


def fragment(html: str, element_id: str, oob: bool = False) -> str:
    """The element with `element_id` in `html`, as the page would have it (without the out-of-band mark)."""
    start = html.index(f'id="{element_id}"')
    start = html.rindex("<", 0, start)
    tag = html[start + 1:html.index(" ", start)]
    end = html.index(f"</{tag}>", start) + len(tag) + 3
    return html[start:end].replace(' hx-swap-oob="true"', "") if oob else html[start:end]

pytestmark = pytest.mark.django_db


@pytest.fixture
def running(alice):
    run = new_run(workspace_with(member=alice), alice)
    record(run, Event(ev.RunStarted(topology={}, offline=False)), brief_ready(6), released(1, "First part."))
    return run


def tail(user, run, last_seq):
    with CaptureQueriesContext(connection) as queries:
        pushed = fragments.since_for(user, run.pk, last_seq)
    return pushed, len(queries)


def test_a_tail_reads_the_new_events_with_the_check_and_the_run_then_the_steps(running, alice):
    last = running.events.order_by("-seq").first().seq
    rows = record(running, Event(ev.StepRendering(step=2, attempt=1, total=6)), released(2, "Second part."))
    (html, seq, finished), queries = tail(alice, running, last)
    assert queries == 2
    assert seq == rows[-1].seq and not finished
    assert f'id="run-{running.pk}-step-2"' in html and "Second part." in html
    assert "First part." not in html  # only the step that changed
    assert "Released step 2 of 6 · 2 of 6 released" in html  # the counts, from the same read of the steps


def test_nothing_new_costs_the_check_and_one_read(running, alice):
    last = running.events.order_by("-seq").first().seq
    assert tail(alice, running, last) == (("", last, False), 2)


def test_a_non_member_gets_nothing(running, bob):
    assert tail(bob, running, 0) == (None, 2)  # no event for them, and the check says why


def test_a_member_removed_mid_run_gets_nothing_more(running, alice):
    last = running.events.order_by("-seq").first().seq
    record(running, released(2, "Second part."))
    running.workspace.memberships.filter(user=alice).delete()
    assert tail(alice, running, last)[0] is None


def test_the_brief_draws_every_planned_step_without_reading_the_whole_run(alice):
    run = new_run(workspace_with(member=alice), alice)
    started = record(run, Event(ev.RunStarted(topology={}, offline=False)))
    record(run, brief_ready(4))
    (html, _, finished), queries = tail(alice, run, started[-1].seq)
    assert queries == 2 and not finished
    assert f'id="run-{run.pk}-steps"' in html
    assert [f'id="run-{run.pk}-step-{k}"' in html for k in range(1, 5)] == [True] * 4
    assert "Brief ready: 4 steps to draft" in html


def test_the_pages_access_check_reads_the_run_by_id_without_an_ordering(running, alice, bob):
    with CaptureQueriesContext(connection) as queries:
        assert fragments.snapshot_for(alice, running.pk) is not None
        assert fragments.snapshot_for(bob, running.pk) is None  # not a member
    checks = [q["sql"] for q in queries.captured_queries if 'JOIN "workspaces_membership"' in q["sql"]]
    assert len(checks) == 2 and not [sql for sql in checks if "ORDER BY" in sql]


def snapshot(user, run):
    with CaptureQueriesContext(connection) as queries:
        pushed = fragments.snapshot_for(user, run.pk)
    return pushed, len(queries)


@pytest.mark.parametrize("research", [False, True])
@pytest.mark.parametrize("claimed", [False, True])
def test_a_run_that_has_not_started_sends_nothing_the_page_does_not_already_show(alice, bob, research, claimed):
    """Whatever drew the page drew the run queued: the submission's answer, or a load of the
    conversation (both from the same run view); the socket has nothing to add until an event.
    So with a run claimed but with no event yet (a submission's run is created claimed)."""
    run = new_run(workspace_with(member=alice), alice)
    Run.objects.filter(pk=run.pk).update(research=research)
    if claimed:
        assert claim_run(run.pk, "test-runner")
    assert snapshot(alice, run) == (("", 0, False), 2)  # the check with the live fields, any event?
    page = member_page(alice, run)
    drawn = fragments.snapshot(run.pk)[0]  # the queued state, as reading the whole run draws it
    assert 'data-run-status="running"' in page and "Queued: starting soon" in page
    for part in ("progress", "steps", "recap", "sources"):
        assert fragment(drawn, f"run-{run.pk}-{part}", oob=True) == fragment(page, f"run-{run.pk}-{part}")
    assert snapshot(bob, run) == (None, 1)


@pytest.mark.parametrize("claimed", [True, False])
def test_a_run_with_events_gets_the_whole_snapshot_whatever_its_status_says(alice, claimed):
    run = new_run(workspace_with(member=alice), alice)
    if claimed:
        assert claim_run(run.pk, "test-runner")
    record(run, Event(ev.RunStarted(topology={}, offline=False)), brief_ready(2))
    (html, seq, finished), queries = snapshot(alice, run)
    assert seq == run.events.order_by("-seq").first().seq and f'id="run-{run.pk}-step-2"' in html
    assert queries > 2


def test_the_snapshot_of_a_started_run_draws_its_whole_state(running, alice, bob):
    (html, seq, finished), _ = snapshot(alice, running)
    assert seq == running.events.order_by("-seq").first().seq and not finished
    assert f'id="run-{running.pk}-steps"' in html and "First part." in html
    assert snapshot(bob, running) == (None, 1)
