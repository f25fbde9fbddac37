"""The recorder writes the events waiting behind each other in one transaction: all or nothing,
in order, with the lease checked once, and the rows they introduce inserted together."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from beyond_site.runs.models import Attempt, ModelCall, Run, RunEvent, Step, Verdict
from beyond_site.runs.recorder import EventRecorder
from beyond_site.runs.queue import claim_run, request_stop, start_run
from beyond_site.workspaces.models import Blob
from pipeline import events as ev
from pipeline.events import Event
from pipeline.providers.base import Message
from pipeline.topology import parse_shorthand
from tests import scripting
from tests.scripting import PASS

pytestmark = pytest.mark.django_db

CONTEXT = "# Workspace\n\n" + "Our assets are listed in the register. " * 200


@pytest.fixture
def claimed(workspace, alice):
    run, _ = start_run(workspace, "Draft a note", user=alice, topology=parse_shorthand("offline"))
    claim_run(run.pk, "runner")
    return Run.objects.get(pk=run.pk)


def step_events(index: int, call_text: str = CONTEXT) -> list[Event]:
    # The long context is a "# " section of its own (runs/contexts.py), shared by every step's call.
    messages = (Message("system", "You render one step."), Message("user", f"Step {index}.\n\n{call_text}"))
    return [
        Event(ev.ModelCall(role="executor", provider="offline", model="offline", effort=None, step=index,
                           attempt=1, usage={"input": 10, "output": 5}), messages=messages),
        Event(ev.AttemptDrafted(step=index, attempt=1, draft=f"Part {index} text.", truncated=False)),
        Event(ev.VerdictRecorded(step=index, attempt=1, source="model", raw=PASS, parsed={"pass": True, "issues": []},
                                 error=None)),
        Event(ev.StepReleased(step=index, title=f"Part {index}", badge="passed", content=f"Part {index} text.")),
    ]


def test_a_batch_is_recorded_in_order_with_the_rows_it_introduces(claimed):
    recorder = EventRecorder(claimed, owner="runner")
    batch = [Event(ev.BriefReady(brief=scripting.brief(3))), *step_events(1), *step_events(2), *step_events(3)]
    recorded = recorder.record_many(batch)
    assert [row.seq for row in recorded.rows] == list(range(1, 15))  # the run's request first, then the batch
    assert [row.pk for row in recorded.rows] == list(RunEvent.objects.filter(run=claimed).order_by("seq")
                                                     .values_list("pk", flat=True))
    assert not any(row._state.adding for row in recorded.rows)  # saved rows, not rows to insert
    assert list(RunEvent.objects.filter(run=claimed).order_by("seq").values_list("type", flat=True)) == \
        [ev.RUN_REQUESTED] + [event.type for event in batch]
    assert Verdict.objects.filter(attempt__step__run=claimed).count() == 3
    assert {(a.step.index, a.draft) for a in Attempt.objects.filter(step__run=claimed)} == \
        {(i, f"Part {i} text.") for i in (1, 2, 3)}
    calls = ModelCall.objects.filter(run=claimed).select_related("context")
    assert [call.context.sha256 for call in calls] == \
        [row.data["context"] for row in recorded.rows if row.type == ev.MODEL_CALL]
    assert set(Step.objects.filter(run=claimed).values_list("status", flat=True)) == {Step.RELEASED}


def test_an_error_in_a_batch_records_none_of_it_and_the_run_can_still_fail_cleanly(claimed, monkeypatch):
    recorder = EventRecorder(claimed, owner="runner")
    recorder.record_many([Event(ev.BriefReady(brief=scripting.brief(2))), *step_events(1)])

    def broken(self, payload, row):
        raise RuntimeError("disk full")

    monkeypatch.setattr(EventRecorder, "_on_verdict_recorded", broken)
    with pytest.raises(RuntimeError):
        recorder.record_many(step_events(2))
    assert RunEvent.objects.filter(run=claimed).count() == 6  # the request and the first batch
    assert not Attempt.objects.filter(step__run=claimed, step__index=2).exists()
    assert not ModelCall.objects.filter(run=claimed, step_index=2).exists()
    assert Step.objects.get(run=claimed, index=2).status == Step.PENDING

    monkeypatch.undo()
    recorder.record(Event(ev.RunFailed(reason="internal error")))
    assert list(RunEvent.objects.filter(run=claimed).order_by("seq").values_list("seq", flat=True)) == [1, 2, 3, 4, 5, 6, 7]
    assert Run.objects.get(pk=claimed.pk).status == Run.FAILED


def test_after_a_stop_the_batchs_releases_are_held_back_and_the_rest_is_recorded(claimed, alice):
    recorder = EventRecorder(claimed, owner="runner")
    recorder.record_many([Event(ev.BriefReady(brief=scripting.brief(2)))])
    request_stop(claimed.pk, alice)
    recorded = recorder.record_many(step_events(1))
    assert recorded.stop == "stopped by alice"
    assert [row.type for row in recorded.rows] == [ev.MODEL_CALL, ev.ATTEMPT_DRAFTED, ev.VERDICT_RECORDED]
    assert not Step.objects.filter(run=claimed, status=Step.RELEASED).exists()


def test_a_batch_costs_the_same_queries_whatever_its_number_of_calls(claimed):
    recorder = EventRecorder(claimed, owner="runner")
    recorder.record_many([Event(ev.BriefReady(brief=scripting.brief(8)))])

    def calls_only(indexes):
        return [event for i in indexes for event in step_events(i)[:3]]  # call, draft, verdict

    with CaptureQueriesContext(connection) as two:
        recorder.record_many(calls_only([1, 2]))
    with CaptureQueriesContext(connection) as six:
        recorder.record_many(calls_only([3, 4, 5, 6, 7, 8]))
    assert len(six) == len(two)


def test_bytes_already_stored_are_not_sent_again(claimed):
    recorder = EventRecorder(claimed, owner="runner")
    recorder.record_many([Event(ev.BriefReady(brief=scripting.brief(2))), *step_events(1)[:1]])
    blobs = Blob.objects.count()
    with CaptureQueriesContext(connection) as queries:
        recorder.record_many(step_events(2)[:1])  # same long context, another step line
    assert Blob.objects.count() == blobs + 1  # only the new part
    [sent] = [q["sql"] for q in queries if "INTO \"workspaces_blob\"" in q["sql"]]
    assert sent.count("kept_for_audit") == 1 and len(sent) < 1000, sent  # one small row: "Step 2."
    assert all(Blob.objects.filter(sha256=part["blob"]).exists()
               for call in ModelCall.objects.filter(run=claimed) for part in call.context.parts)


def test_a_second_recorder_of_the_same_run_continues_its_record(claimed):
    EventRecorder(claimed, owner="runner").record_many([Event(ev.BriefReady(brief=scripting.brief(1))),
                                                         *step_events(1)[:2]])
    later = EventRecorder(Run.objects.get(pk=claimed.pk), owner="runner")
    later.record_many(step_events(1)[2:])
    assert Verdict.objects.get(attempt__step__run=claimed).attempt.draft == "Part 1 text."
    assert Step.objects.get(run=claimed, index=1).status == Step.RELEASED
