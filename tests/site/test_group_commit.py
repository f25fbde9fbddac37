"""Group commit: the batches several runs have waiting are written in one transaction, and each
run still gets exactly what writing its batch alone would have given it (runs/group_commit.py)."""
from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from django.db import connection
from django.test.utils import CaptureQueriesContext

from beyond_site.runs import chain, group_commit
from beyond_site.runs.models import ModelCall, Run, RunEvent, Step, Verdict, WorkspaceLedger
from beyond_site.runs.recorder import EventRecorder, Recorded, RecordRefused, record_together
from beyond_site.runs.services import claim_run, request_stop, start_run
from pipeline import events as ev
from pipeline.events import Event
from pipeline.topology import parse_shorthand
from tests import scripting
from tests.site.test_recorder_batches import step_events

pytestmark = pytest.mark.django_db(transaction=True)


def claimed_runs(workspace, user, n: int) -> list[Run]:
    runs = []
    for k in range(n):
        run, _ = start_run(workspace, f"Draft note {k}", user=user, topology=parse_shorthand("offline"))
        assert claim_run(run.pk, "runner")
        runs.append(Run.objects.get(pk=run.pk))
    return runs


def whole_run(steps: int = 2) -> list[Event]:
    return [Event(ev.RunStarted(topology={}, offline=True)), Event(ev.BriefReady(brief=scripting.brief(steps))),
            *[event for k in range(1, steps + 1) for event in step_events(k)], Event(ev.RunCompleted())]


def test_a_group_is_one_transaction_with_one_lease_check_and_one_insert_per_table(workspace, alice):
    runs = claimed_runs(workspace, alice, 3)
    recorders = [EventRecorder(run, owner="runner") for run in runs]
    with CaptureQueriesContext(connection) as queries:
        results = record_together([(recorder, whole_run()) for recorder in recorders])
    sql = [q["sql"] for q in queries.captured_queries]
    assert sum(s.startswith("BEGIN") for s in sql) == 1
    assert sum('FROM "runs_run"' in s and '"lease_owner"' in s for s in sql) == 1
    for table in ("runs_runevent", "runs_attempt", "runs_verdict", "runs_modelcall"):
        assert sum(s.startswith(f'INSERT INTO "{table}"') for s in sql) == 1, table
    for run, result in zip(runs, results):
        assert isinstance(result, Recorded)
        assert [row.seq for row in result.rows] == list(range(1, len(whole_run()) + 1))
        assert all(row.run_id == run.pk for row in result.rows)
        run.refresh_from_db()
        assert run.status == Run.COMPLETED
        assert set(run.steps.values_list("status", flat=True)) == {Step.RELEASED}
        assert Verdict.objects.filter(attempt__step__run=run).count() == 2
        assert ModelCall.objects.filter(run=run).count() == 2
        assert chain.verify_run(run).ok  # every run's chain and the rows its events imply
    assert list(WorkspaceLedger.objects.order_by("seq").values_list("run_id", flat=True)) == [r.pk for r in runs]


def test_a_group_costs_fewer_queries_than_its_batches_alone(workspace, alice):
    alone, grouped = claimed_runs(workspace, alice, 3), claimed_runs(workspace, alice, 3)
    with CaptureQueriesContext(connection) as one_by_one:
        for run in alone:
            EventRecorder(run, owner="runner").record_many(whole_run())
    together = [EventRecorder(run, owner="runner") for run in grouped]
    with CaptureQueriesContext(connection) as in_one:
        record_together([(recorder, whole_run()) for recorder in together])
    assert len(in_one) < len(one_by_one) - 3 * 4  # a begin, a lease check and four inserts per batch, shared


def test_a_run_taken_over_is_refused_and_the_others_are_recorded(workspace, alice):
    kept, taken = claimed_runs(workspace, alice, 2)
    recorders = [EventRecorder(kept, owner="runner"), EventRecorder(taken, owner="runner")]
    Run.objects.filter(pk=taken.pk).update(lease_owner="reaper")
    results = record_together([(recorder, whole_run()) for recorder in recorders])
    assert isinstance(results[0], Recorded) and isinstance(results[1], RecordRefused)
    assert RunEvent.objects.filter(run=kept).count() == len(whole_run())
    assert not RunEvent.objects.filter(run=taken).exists() and recorders[1].seq == 0


def test_a_stop_holds_back_only_its_own_runs_releases(workspace, alice):
    running, stopped = claimed_runs(workspace, alice, 2)
    recorders = [EventRecorder(run, owner="runner") for run in (running, stopped)]
    record_together([(recorder, [Event(ev.BriefReady(brief=scripting.brief(1)))]) for recorder in recorders])
    assert request_stop(stopped.pk, alice)
    results = record_together([(recorder, step_events(1)) for recorder in recorders])
    assert results[0].stop is None and [row.type for row in results[0].rows][-1] == ev.STEP_RELEASED
    assert results[1].stop == "stopped by alice" and ev.STEP_RELEASED not in [row.type for row in results[1].rows]
    assert Step.objects.get(run=running).status == Step.RELEASED
    assert Step.objects.get(run=stopped).status == Step.PENDING


def test_one_runs_failure_costs_the_others_nothing(workspace, alice, monkeypatch):
    runs = claimed_runs(workspace, alice, 3)
    recorders = [EventRecorder(run, owner="runner") for run in runs]
    record_together([(recorder, [Event(ev.BriefReady(brief=scripting.brief(1)))]) for recorder in recorders])
    broken = runs[1].pk
    released = EventRecorder._on_step_released

    def fails_for_one_run(self, payload, row):
        if self.run.pk == broken:
            raise RuntimeError("disk full")
        released(self, payload, row)

    monkeypatch.setattr(EventRecorder, "_on_step_released", fails_for_one_run)
    results = record_together([(recorder, step_events(1)) for recorder in recorders])
    assert isinstance(results[1], RuntimeError)
    assert isinstance(results[0], Recorded) and isinstance(results[2], Recorded)
    assert [RunEvent.objects.filter(run=run).count() for run in runs] == [5, 1, 5]
    assert not ModelCall.objects.filter(run_id=broken).exists()
    monkeypatch.undo()
    # The failed run's recorder forgot what was rolled back: its next event follows its record.
    [failed] = record_together([(recorders[1], [Event(ev.RunFailed(reason="internal error"))])])
    assert [row.seq for row in failed.rows] == [2]
    assert all(chain.verify_run(run).ok for run in runs)


class Source:
    """What a run hands the writer: its recorder, made on the lane's thread on first use."""

    def __init__(self, run_id: int):
        self.run_id, self._recorder = run_id, None

    def recorder(self) -> EventRecorder:
        if self._recorder is None:
            self._recorder = EventRecorder(Run.objects.get(pk=self.run_id), owner="runner")
        return self._recorder


async def test_batches_waiting_together_are_written_as_one_group(workspace, alice):
    runs = await database_sync_to_async(claimed_runs)(workspace, alice, 5)
    writer = group_commit.writer()
    results = await asyncio.gather(*(writer.record(Source(run.pk), whole_run()) for run in runs))
    assert (writer.groups, writer.batches) == (1, 5)
    assert [[row.run_id for row in result.rows][0] for result in results] == [run.pk for run in runs]
    statuses = await database_sync_to_async(lambda: list(Run.objects.filter(pk__in=[r.pk for r in runs])
                                                         .values_list("status", flat=True)))()
    assert statuses == [Run.COMPLETED] * 5


async def test_a_batch_arriving_during_a_write_goes_in_the_next_group(workspace, alice):
    first, second, third = await database_sync_to_async(claimed_runs)(workspace, alice, 3)
    writer = group_commit.writer()
    alone = asyncio.ensure_future(writer.record(Source(first.pk), whole_run()))
    await asyncio.sleep(0)  # the writer has taken the first batch to the lane
    later = [writer.record(Source(run.pk), whole_run()) for run in (second, third)]
    results = await asyncio.gather(alone, *later)
    assert (writer.groups, writer.batches) == (2, 3) and all(isinstance(r, Recorded) for r in results)


async def test_a_run_that_cannot_be_read_fails_alone(workspace, alice):
    [run] = await database_sync_to_async(claimed_runs)(workspace, alice, 1)
    writer = group_commit.writer()
    results = await asyncio.gather(writer.record(Source(run.pk), whole_run()),
                                   writer.record(Source(10 ** 9), whole_run()), return_exceptions=True)
    assert isinstance(results[0], Recorded) and isinstance(results[1], Run.DoesNotExist)
