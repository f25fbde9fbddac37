"""Claiming, leases and the reaper: a crashed runner never releases an uninspected step."""
from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from asgiref.sync import sync_to_async
from django.db import OperationalError, transaction
from django.db.backends.utils import CursorWrapper
from django.utils import timezone

from beyond_site.runs.models import AppendOnlyError, Run, RunEvent, Step
from beyond_site.runs.recorder import EventRecorder, RecordRefused
from beyond_site.runs.reaping import reap_stale_runs
from beyond_site.lib.runners import identity_of, runner_identity
from beyond_site.runs.queue import claim_next_run, claim_run, start_run
from beyond_site.runs import jobs
from beyond_site.runs.runner import execute_run, sweep_once
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
    assert list(RunEvent.objects.filter(run=run).values_list("type", flat=True)) == ["run_requested", "run_failed"]
    assert reap_stale_runs() == []


def test_a_live_lease_is_not_reaped(workspace):
    run, _ = start_run(workspace, "task", topology=parse_shorthand("offline"))
    claim_run(run.pk, "alive")
    assert reap_stale_runs() == []


def test_the_worker_refuses_to_start_without_the_job_engine(workspace):
    # The scaled mode's worker needs PostgreSQL; tests/site/scale_out_child.py runs it there.
    with pytest.raises(CommandError, match="PostgreSQL"):
        call_command("beyond_worker", "--once")


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


def test_a_sweep_with_nothing_left_behind_fails_nothing(workspace, serving):
    assert asyncio.run(sweep_once()) == []


def test_a_runner_whose_run_was_reaped_writes_nothing_more(workspace, tmp_path):

    run, _ = start_run(workspace, "task", topology=parse_shorthand("offline"))
    claim_run(run.pk, "slow-runner")
    recorder = EventRecorder(run, owner="slow-runner")
    recorder.record(Event(ev.RunStarted(topology={}, offline=False)))
    Run.objects.filter(pk=run.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    reap_stale_runs()
    with pytest.raises(RecordRefused):
        recorder.record(Event(ev.BriefReady(brief=scripting.brief(1))))
    assert list(run.events.values_list("type", flat=True)) == ["run_requested", "run_started", "run_failed"]


def test_the_record_keeps_which_runner_executed_the_run(workspace, tmp_path):
    path = scripting.write(tmp_path, scripting.script({1: {"executor": ["Only."], "verifier": [PASS]}}))
    run, _ = start_run(workspace, "task", topology=parse_shorthand(f"scripted:{path}"))
    claim_run(run.pk, "worker-7")
    asyncio.run(execute_run(run.pk, "worker-7"))
    assert run.events.get(type="run_started").data["runner"] == "worker-7"


def test_a_runner_that_restarted_fails_at_once_the_runs_of_its_previous_process(workspace, serving):
    # The previous process: alive at first, then gone, while its lease is still far from running out.
    previous = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        owners = {"previous": identity_of(previous.pid), "this": runner_identity(),
                  "elsewhere": "another-host:4242:0123abcd.99/job-7"}
        runs = {}
        for name, owner in owners.items():
            run, _ = start_run(workspace, name, topology=parse_shorthand("offline"))
            assert claim_run(run.pk, owner)
            Step.objects.create(run=run, index=1, title="One", content_spec="x")
            runs[name] = run.pk
        assert asyncio.run(sweep_once()) == []
        assert set(Run.objects.filter(status=Run.RUNNING).values_list("pk", flat=True)) == set(runs.values())
    finally:
        previous.kill()
        previous.wait(timeout=10)

    assert asyncio.run(sweep_once()) == [runs["previous"]]  # the embedded server's first sweep after a restart
    failed = Run.objects.get(pk=runs["previous"])
    assert failed.status == Run.FAILED and failed.halt_reason.startswith("interrupted: the server or worker")
    assert failed.steps.get().status == Step.NOT_RELEASED
    assert list(failed.events.values_list("type", flat=True)) == ["run_requested", "run_failed"]
    # A live runner (this very process) and one this machine cannot see are left alone.
    assert set(Run.objects.filter(status=Run.RUNNING).values_list("pk", flat=True)) == {runs["this"], runs["elsewhere"]}


@pytest.fixture
def refused_once(monkeypatch):
    """The database refuses the first query on the runs table once armed, as PostgreSQL out of
    connections does; every later query goes through."""
    armed = {"on": False}
    execute = CursorWrapper.execute

    def refusing(self, sql, params=None):
        if armed["on"] and "runs_run" in sql:
            armed["on"] = False
            raise OperationalError("sorry, too many clients already")
        return execute(self, sql, params)

    monkeypatch.setattr(CursorWrapper, "execute", refusing)
    return armed


def test_a_database_refusal_right_after_the_claim_fails_the_run_instead_of_leaving_it_running(
        workspace, tmp_path, refused_once):
    path = scripting.write(tmp_path, scripting.script({1: {"executor": ["Only."], "verifier": [PASS]}}))
    run, _ = start_run(workspace, "task", topology=parse_shorthand(f"scripted:{path}"))
    assert claim_run(run.pk, "worker-1", leased=False)
    refused_once["on"] = True
    assert asyncio.run(execute_run(run.pk, "worker-1", keep_lease=False)) == Run.FAILED
    run.refresh_from_db()
    assert not refused_once["on"]  # the refusal did happen, at the run's first query
    assert run.status == Run.FAILED and run.halt_reason == "the run could not start: internal error (OperationalError)"
    assert list(run.events.values_list("type", flat=True)) == ["run_requested", "run_failed"]


# -- a request's run: created claimed by the server, started from its commit (runs/jobs.py) ----

@pytest.fixture
def serving():
    """This process executes deferred work on the running loop, as the embedded server does once
    its runtime has started (jobs.serve_here); restored afterwards."""
    yield
    jobs.serve_here(None)


async def _until_finished(run_id: int, timeout: float = 20) -> Run:
    async with asyncio.timeout(timeout):
        while True:
            run = await sync_to_async(Run.objects.get)(pk=run_id)
            if run.status in Run.FINISHED:
                return run
            await asyncio.sleep(0.05)


def test_a_requests_run_is_created_claimed_by_this_process_and_runs_from_its_commit(workspace, tmp_path, serving):
    path = scripting.write(tmp_path, scripting.script({1: {"executor": ["Only."], "verifier": [PASS]}}))

    async def submit():
        jobs.serve_here(asyncio.get_running_loop())
        run, created = await sync_to_async(start_run)(workspace, "task", topology=parse_shorthand(f"scripted:{path}"))
        # Nobody else can take it: it was never queued.
        taken_by_another = await sync_to_async(claim_run)(run.pk, "another-runner")
        return run, created, taken_by_another, await _until_finished(run.pk)

    run, created, taken_by_another, finished = asyncio.run(submit())
    assert created and run.status == Run.RUNNING and run.lease_owner == runner_identity() and run.started_at
    assert not taken_by_another
    assert finished.status == Run.COMPLETED
    started = finished.events.get(type="run_started")
    assert started.data["runner"] == runner_identity()


def test_a_requests_run_whose_start_cannot_be_read_fails_at_once(workspace, tmp_path, refused_once, serving):
    path = scripting.write(tmp_path, scripting.script({1: {"executor": ["Only."], "verifier": [PASS]}}))

    async def submit():
        jobs.serve_here(asyncio.get_running_loop())

        # The refusal hits the start's read, made in the request's thread at the commit.
        def create():
            with transaction.atomic():
                run, _ = start_run(workspace, "task", topology=parse_shorthand(f"scripted:{path}"))
                refused_once["on"] = True
            return run

        run = await sync_to_async(create)()
        return await _until_finished(run.pk)

    finished = asyncio.run(submit())
    assert not refused_once["on"]  # the refusal did happen
    assert finished.status == Run.FAILED
    assert finished.halt_reason == "the run could not start: internal error (OperationalError)"
    assert list(finished.events.values_list("type", flat=True)) == ["run_requested", "run_failed"]


def test_a_run_is_handed_off_only_once_its_transaction_commits_and_only_when_created(workspace, monkeypatch, serving):
    handed = []
    monkeypatch.setattr(jobs._Home, "hand_off", lambda home, task, kwargs: handed.append((task.name, kwargs)))
    jobs.serve_here(asyncio.new_event_loop())
    with pytest.raises(RuntimeError), transaction.atomic():
        start_run(workspace, "rolled back", topology=parse_shorthand("offline"))
        assert handed == []  # not before the commit
        raise RuntimeError
    assert handed == [] and not Run.objects.exists()
    run, created = start_run(workspace, "task", idempotency_key="k", topology=parse_shorthand("offline"))
    assert created and handed == [("beyond.execute_run", {"run_id": run.pk})]
    again, created = start_run(workspace, "task", idempotency_key="k", topology=parse_shorthand("offline"))
    assert again.pk == run.pk and not created and len(handed) == 1  # a replay starts nothing


def test_a_run_created_as_the_server_stops_leaves_the_submission_intact(workspace, caplog, serving):
    stopping = asyncio.new_event_loop()
    jobs.serve_here(stopping)
    with transaction.atomic():
        run, created = start_run(workspace, "task", topology=parse_shorthand("offline"))
        stopping.close()  # between the run's creation and its commit
    assert created and Run.objects.get(pk=run.pk).lease_owner == runner_identity()  # the restart fails it
    assert "deferred as the server stopped" in caplog.text
    later, _ = start_run(workspace, "later", topology=parse_shorthand("offline"))
    assert Run.objects.get(pk=later.pk).status == Run.QUEUED  # a stopped server claims nothing more


def test_a_process_that_serves_no_loop_leaves_the_run_queued_for_a_server(workspace):
    run, created = start_run(workspace, "task", topology=parse_shorthand("offline"))
    assert created and Run.objects.get(pk=run.pk).status == Run.QUEUED
