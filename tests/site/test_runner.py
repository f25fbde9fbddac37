"""Claiming, leases and the reaper: a crashed runner never releases an uninspected step."""
from __future__ import annotations

import asyncio
import io
import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from beyond_site.runs.models import AppendOnlyError, Run, RunEvent, Step
from beyond_site.runs.recorder import EventRecorder, RecordRefused
from beyond_site.runs.services import claim_next_run, claim_run, reap_stale_runs, start_run, work_once
from pipeline import events as ev
from pipeline.events import Event
from pipeline.topology import parse_shorthand
from tests import scripting
from tests.scripting import PASS

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_claims_a_queued_run_exactly_once(workspace):
    run, created = start_run(workspace, "task", topology=parse_shorthand("offline"))
    assert created and run.status == Run.QUEUED
    assert claim_run(run.pk, "a") is True
    assert claim_run(run.pk, "b") is False
    assert Run.objects.get(pk=run.pk).lease_owner == "a"
    assert claim_next_run("c") is None


def test_the_same_idempotency_key_never_starts_a_second_run(workspace):
    first, created = start_run(workspace, "task", idempotency_key="k-1", topology=parse_shorthand("offline"))
    again, created_again = start_run(workspace, "task", idempotency_key="k-1", topology=parse_shorthand("offline"))
    assert created and not created_again and first.pk == again.pk
    assert Run.objects.count() == 1


def test_the_reaper_fails_a_run_whose_runner_died_without_releasing_anything(workspace, tmp_path):
    run, _ = start_run(workspace, "task", topology=parse_shorthand("offline"))
    claim_run(run.pk, "dead-runner")
    Step.objects.create(run=run, index=1, title="One", content_spec="x")  # in flight when it died
    Run.objects.filter(pk=run.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert reap_stale_runs() == [run.pk]
    run.refresh_from_db()
    assert run.status == Run.FAILED and "interrupted" in run.halt_reason
    step = run.steps.get()
    assert step.status == Step.NOT_RELEASED and step.content is None
    assert list(RunEvent.objects.filter(run=run).values_list("type", flat=True)) == ["run_failed"]
    assert reap_stale_runs() == []


def test_a_live_lease_is_not_reaped(workspace):
    run, _ = start_run(workspace, "task", topology=parse_shorthand("offline"))
    claim_run(run.pk, "alive")
    assert reap_stale_runs() == []


def test_a_worker_drains_the_queue(workspace, tmp_path):
    path = scripting.write(tmp_path, scripting.script({1: {"executor": ["Only."], "verifier": [PASS]}}))
    run, _ = start_run(workspace, "task", topology=parse_shorthand(f"scripted:{path}"))
    call_command("beyond_worker", "--once", "--concurrency", "1")
    run.refresh_from_db()
    assert run.status == Run.COMPLETED
    assert run.steps.get().badge == "passed"


def test_a_finished_run_record_cannot_be_changed_or_deleted(workspace, tmp_path):
    path = scripting.write(tmp_path, scripting.script({1: {"executor": ["Only."], "verifier": [PASS]}}))
    out = io.StringIO()
    call_command("beyond_run", "--workspace", "acme", "--task", "t", "--provider", f"scripted:{path}", "--json",
                 stdout=out)
    run = Run.objects.get(pk=json.loads(out.getvalue())["run"]["id"])
    step = run.steps.get()
    event = run.events.first()
    attempt = step.attempts.get()
    for action in (lambda: run.save(), lambda: run.delete(), lambda: step.save(), lambda: event.save(),
                   lambda: event.delete(), lambda: attempt.save(), lambda: attempt.verdicts.first().delete()):
        with pytest.raises(AppendOnlyError):
            action()


def test_work_once_returns_none_when_idle(workspace):
    assert asyncio.run(work_once("idle")) is None


def test_a_runner_whose_run_was_reaped_writes_nothing_more(workspace, tmp_path):

    run, _ = start_run(workspace, "task", topology=parse_shorthand("offline"))
    claim_run(run.pk, "slow-runner")
    recorder = EventRecorder(run, owner="slow-runner")
    recorder.record(Event(ev.RunStarted(topology={}, offline=False)))
    Run.objects.filter(pk=run.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    reap_stale_runs()
    with pytest.raises(RecordRefused):
        recorder.record(Event(ev.BriefReady(brief=scripting.brief(1))))
    assert list(run.events.values_list("type", flat=True)) == ["run_started", "run_failed"]


def test_the_record_keeps_which_runner_executed_the_run(workspace, tmp_path):
    path = scripting.write(tmp_path, scripting.script({1: {"executor": ["Only."], "verifier": [PASS]}}))
    run, _ = start_run(workspace, "task", topology=parse_shorthand(f"scripted:{path}"))
    claim_run(run.pk, "worker-7")
    from beyond_site.runs.services import execute_run
    asyncio.run(execute_run(run.pk, "worker-7"))
    assert run.events.get(type="run_started").data["runner"] == "worker-7"
