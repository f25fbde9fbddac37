"""What a live page's doorbell reads: few queries, whatever the run's size (docs/architecture.md)."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from pipeline import events as ev
from pipeline.events import Event
from beyond_site.chat import fragments
from beyond_site.runs.models import Run
from beyond_site.runs.services import claim_run
from tests.site.chat_support import brief_ready, new_run, record, released, workspace_with

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


def test_a_tail_reads_the_check_with_the_run_the_new_events_and_the_steps(running, alice):
    last = running.events.order_by("-seq").first().seq
    rows = record(running, Event(ev.StepRendering(step=2, attempt=1, total=6)), released(2, "Second part."))
    (html, seq, finished), queries = tail(alice, running, last)
    assert queries == 3
    assert seq == rows[-1].seq and not finished
    assert f'id="run-{running.pk}-step-2"' in html and "Second part." in html
    assert "First part." not in html  # only the step that changed
    assert "Released step 2 of 6 · 2 of 6 released" in html  # the counts, from the same read of the steps


def test_nothing_new_costs_the_check_and_one_read(running, alice):
    last = running.events.order_by("-seq").first().seq
    assert tail(alice, running, last) == (("", last, False), 2)


def test_a_non_member_gets_nothing_after_one_query(running, bob):
    assert tail(bob, running, 0) == (None, 1)


def test_the_brief_draws_every_planned_step_without_reading_the_whole_run(alice):
    run = new_run(workspace_with(member=alice), alice)
    started = record(run, Event(ev.RunStarted(topology={}, offline=False)))
    record(run, brief_ready(4))
    (html, _, finished), queries = tail(alice, run, started[-1].seq)
    assert queries == 3 and not finished
    assert f'id="run-{run.pk}-steps"' in html
    assert [f'id="run-{run.pk}-step-{k}"' in html for k in range(1, 5)] == [True] * 4
    assert "Brief ready: 4 steps to draft" in html


def snapshot(user, run):
    with CaptureQueriesContext(connection) as queries:
        pushed = fragments.snapshot_for(user, run.pk)
    return pushed, len(queries)


def test_the_snapshot_of_a_run_that_has_not_started_draws_it_queued_without_reading_the_whole_run(alice, bob):
    run = new_run(workspace_with(member=alice), alice)
    (html, seq, finished), queries = snapshot(alice, run)
    assert (seq, finished) == (0, False) and f'id="run-{run.pk}-progress"' in html and "Queued" in html
    assert queries == 2  # the check with the run's live fields, and whether it has any event
    assert html == fragments.snapshot(run.pk)[0]  # what reading the whole run draws
    assert snapshot(bob, run) == (None, 1)


def test_the_snapshot_of_a_research_run_that_has_not_started_is_drawn_as_the_whole_read_draws_it(alice):
    run = new_run(workspace_with(member=alice), alice)
    Run.objects.filter(pk=run.pk).update(research=True)
    (html, seq, finished), queries = snapshot(alice, run)
    assert queries == 2 and html == fragments.snapshot(run.pk)[0]


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
