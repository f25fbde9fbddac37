"""The scaled mode with real parts: PostgreSQL (with the job engine's tables), Redis, and
`manage.py beyond_worker` processes.

Run by tests/site/test_scale_out.py in a child pytest whose DATABASE_URL is PostgreSQL, REDIS_URL
is Redis (under a channel-layer prefix of its own, tests/site/scale_out_settings.py) and
BEYOND_RUN_IN_PROCESS is false: this process only queues runs (each with its job) and watches them
(the database, and websockets through beyond_site.asgi.application or a real daphne), the worker
processes execute them. Not collected by the normal suite (its name does not start with test_).
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from channels.db import database_sync_to_async
from channels.layers import channel_layers, get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.db import connection, transaction
from django.test import AsyncClient
from django.urls import reverse
from procrastinate.contrib.django.models import ProcrastinateJob
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from beyond_site.asgi import application
from beyond_site.runs.jobs import RUN_TASK
from beyond_site.runs.models import ModelCall, Run, RunEvent, Step
from beyond_site.runs.reaping import JOB_ENDED, WORKER_SILENT, interrupted
from beyond_site.lib.runners import job_owner
from beyond_site.runs.bells import ring_doorbell
from beyond_site.runs.queue import claim_next_run, claim_run, request_stop, start_run
from beyond_site.runs.tasks import reap_interrupted_runs
from beyond_site.workspaces.models import Conversation
from pipeline.topology import parse_shorthand
from tests import scripting
from tests.scripting import PASS, fail
from tests.site.chat_support import session_headers, workspace_with

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
RELEASED = 'data-step-status="released"'
WAIT_S = 30  # the longest any single wait may take; each wait below has its own, shorter, bound


@pytest.fixture(autouse=True)
def real_parts():
    """Refuse to run on the embedded defaults: this module is only meaningful on real parts."""
    assert connection.vendor == "postgresql", "run through tests/site/test_scale_out.py (DATABASE_URL on PostgreSQL)"
    assert settings.CHANNEL_LAYERS["default"]["BACKEND"] == "channels_redis.core.RedisChannelLayer", "REDIS_URL unset"
    assert settings.BEYOND_RUN_IN_PROCESS is False, "this process must not execute runs itself"


@pytest.fixture
async def redis_layer():
    yield
    # The layer's connection pools belong to this test's event loop: close them with it.
    layer = channel_layers.backends.pop("default", None)
    if layer is not None:
        await layer.flush()  # only keys under this run's own prefix
        await layer.close_pools()


class Workers:
    """`manage.py beyond_worker` subprocesses on this test's database; always stopped at teardown."""

    def __init__(self, tmp_path: Path):
        self.tmp_path = tmp_path
        self.procs: list[subprocess.Popen] = []
        url = os.environ["DATABASE_URL"]
        # pytest-django made a test database beside the one DATABASE_URL names: use that one.
        self.database_url = url.rsplit("/", 1)[0] + "/" + connection.settings_dict["NAME"]

    def start(self, count: int, concurrency: int = 2, poll: float = 0.3, *options: str, **env: str
              ) -> list[subprocess.Popen]:
        full_env = {**os.environ, "DATABASE_URL": self.database_url, "BEYOND_RUN_IN_PROCESS": "false",
                    "BEYOND_LOG_LEVEL": "INFO", **env}
        started = []
        for _ in range(count):
            log = open(self.tmp_path / f"worker-{len(self.procs)}.log", "wb")
            proc = subprocess.Popen(
                [sys.executable, "manage.py", "beyond_worker", "--concurrency", str(concurrency), "--poll", str(poll),
                 *options], cwd=ROOT, env=full_env, stdout=log, stderr=subprocess.STDOUT)
            log.close()
            self.procs.append(proc)
            started.append(proc)
        return started

    def by_owner(self, owner: str) -> subprocess.Popen:
        return next(p for p in self.procs if p.pid == pid_of(owner))

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}"
                         for p in sorted(self.tmp_path.glob("worker-*.log")))

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)  # a stop lets runs in progress finish...
        deadline = time.monotonic() + 5
        for proc in self.procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()  # ...but a test does not wait for a long one
                proc.wait(timeout=5)


@pytest.fixture
def workers(tmp_path, transactional_db):
    pool = Workers(tmp_path)
    try:
        yield pool
    finally:
        pool.stop()  # before the database is flushed and dropped


def pid_of(owner: str) -> int:
    return int(owner.split(":")[1])  # a worker's identity is host:pid:place.start/job-N


async def within(seconds: float, check, what: str, workers: Workers | None = None):
    """Poll the database-reading `check` until it returns something truthy, at most `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        value = await database_sync_to_async(check)()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds} s: {what}\n{workers.logs() if workers else ''}")
        await asyncio.sleep(0.05)


def queue_runs(tmp_path: Path, user, scripts: list[dict], slug: str = "acme") -> list[Run]:
    workspace = workspace_with(slug, member=user)
    runs = []
    for n, script in enumerate(scripts, 1):
        path = scripting.write(tmp_path, script, name=f"{slug}-{n}.json")
        conversation = Conversation.objects.create(workspace=workspace, title=f"Task {n}", created_by=user)
        run, _ = start_run(workspace, f"Task {n}", user=user, conversation=conversation,
                           topology=parse_shorthand(f"scripted:{path}"))
        runs.append(run)
    return runs


async def open_socket(run: Run, user) -> WebsocketCommunicator:
    """A page's socket on a run no worker has started: it is sent nothing until the run's first
    event (whatever drew the page drew the run queued)."""
    headers = await database_sync_to_async(session_headers)(user)
    comm = WebsocketCommunicator(application, f"/ws/runs/{run.pk}/", headers=headers)
    connected, _ = await comm.connect(timeout=10)
    assert connected
    assert await comm.receive_nothing(timeout=0.5)
    return comm


def status(run_id: int) -> str:
    return Run.objects.values_list("status", flat=True).get(pk=run_id)


def event_types(run_id: int) -> list[str]:
    return list(RunEvent.objects.filter(run_id=run_id).order_by("seq").values_list("type", flat=True))


def three_steps(n: int, *, second_delay: float) -> dict:
    """Step 1 passes, step 2 passes after a re-render (its slow first draft makes step 3 finish
    first: release order must still be 1, 2, 3), step 3 is released with a warning."""
    return scripting.script({
        1: {"executor": [{"content": f"Run {n}, part one.", "delay_s": 0.2}], "verifier": [PASS]},
        2: {"executor": [{"content": "Too thin.", "delay_s": second_delay}, f"Run {n}, part two."],
            "verifier": [fail(), PASS]},
        3: {"executor": [f"Run {n}, part three.", f"Run {n}, part three again."], "verifier": [fail(), fail()]},
    }, planner=[{"content": json.dumps(scripting.brief(3)), "delay_s": 0.2}])


BADGES = ["passed", "passed_after_rerender", "warning"]
#: Worker timings that find a dead worker within seconds (the defaults take about 25 s).
QUICK_REAPING = {"BEYOND_WORKER_HEARTBEAT_S": "1", "BEYOND_WORKER_STALLED_S": "3", "BEYOND_REAP_EVERY_S": "1"}
CALLS_PER_RUN = 1 + 2 + 4 + 4 + 1  # planner, step 1, steps 2 and 3 (two drafts, two verdicts), summarizer


async def on_two_workers(tmp_path: Path, user, workers: Workers, script: dict, ready=None):
    """Queue a run of `script` for two workers with quick reaping; once `ready` (by default: step 1
    is released), return the run, the worker executing it and the other one."""
    (run,) = await database_sync_to_async(queue_runs)(tmp_path, user, [script])
    procs = workers.start(2, **QUICK_REAPING)
    await within(20, ready or (lambda: Step.objects.filter(run_id=run.pk, status=Step.RELEASED).exists()),
                 "the run under way", workers)
    executing = workers.by_owner(await database_sync_to_async(lambda: Run.objects.get(pk=run.pk).lease_owner)())
    return run, executing, next(p for p in procs if p is not executing)


async def test_two_workers_execute_each_run_exactly_once_and_the_doorbell_crosses_processes(
        tmp_path, alice, workers, redis_layer):
    # The watched run is queued first and has a slow step 2: its step 1 is released well before
    # it ends. A batch of runs follows while both workers' idle slots poll: they race for them.
    (watched,) = await database_sync_to_async(queue_runs)(tmp_path, alice, [three_steps(1, second_delay=2.5)])
    ids = [watched.pk]

    comm = await open_socket(watched, alice)  # before any worker exists

    owners: dict[int, set[str]] = {pk: set() for pk in ids}

    def note_owners():
        for pk, owner in Run.objects.filter(pk__in=list(ids), status=Run.RUNNING).values_list("pk", "lease_owner"):
            owners.setdefault(pk, set()).add(owner)
        return False

    async def watch_owners():
        while True:
            await database_sync_to_async(note_owners)()
            await asyncio.sleep(0.03)

    watcher = asyncio.create_task(watch_owners())
    started = time.monotonic()
    try:
        procs = workers.start(2, concurrency=3, poll=0.1)

        # The doorbell crosses processes: a worker rings through Redis, this process's consumer
        # reads the log and pushes the released step while the run is still running.
        live = await comm.receive_from(timeout=20)
        while RELEASED not in live:
            assert "data-run-status" not in live, "the run ended before any step arrived live"
            live = await comm.receive_from(timeout=20)
        first_live_at = time.monotonic() - started
        assert f'id="run-{watched.pk}-step-1"' in live and 'data-badge="passed"' in live
        assert "data-run-status" not in live
        assert await database_sync_to_async(status)(watched.pk) == Run.RUNNING
        assert "run_completed" not in await database_sync_to_async(event_types)(watched.pk)

        batch = await database_sync_to_async(queue_runs)(
            tmp_path, alice, [three_steps(n, second_delay=0.6) for n in range(2, 10)], "batch")
        owners.update({r.pk: set() for r in batch})
        ids += [r.pk for r in batch]

        final = live
        while 'data-run-status="completed"' not in final:
            final = await comm.receive_from(timeout=20)
        assert f'id="run-{watched.pk}"' in final and "ws-connect" not in final
        assert re.findall(r'data-step="(\d)"[^>]*data-step-status="released"[^>]*data-badge="(\w+)"', final) == \
            list(zip("123", BADGES))
        assert await comm.receive_output(timeout=5) == {"type": "websocket.close", "code": 1000}
        await comm.disconnect(timeout=5)  # the browser goes: the consumer leaves the group and ends

        await within(WAIT_S, lambda: Run.objects.filter(pk__in=ids).exclude(status__in=Run.FINISHED).count() == 0,
                     "every run finished", workers)
        elapsed = time.monotonic() - started
        assert all(p.poll() is None for p in procs), workers.logs()  # both still serving
    finally:
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)

    def record_of(pk):
        run = Run.objects.get(pk=pk)
        events = list(RunEvent.objects.filter(run_id=pk).order_by("seq").values_list("seq", "type", "data"))
        steps = list(Step.objects.filter(run_id=pk).order_by("index").values_list("index", "status", "badge", "content"))
        attempts = {s.index: s.attempts.count() for s in Step.objects.filter(run_id=pk)}
        return run, events, steps, attempts, ModelCall.objects.filter(run_id=pk).count()

    pids = {p.pid for p in procs}
    for n, pk in enumerate(ids, 1):
        run, events, steps, attempts, calls = await database_sync_to_async(record_of)(pk)
        types = [t for _, t, _ in events]
        assert run.status == Run.COMPLETED, (run.halt_reason, workers.logs())
        assert [s for s, _, _ in events] == list(range(1, len(events) + 1))  # one gap-free log
        assert types.count("run_started") == 1 and types.count("run_completed") == 1 and types[-1] == "run_completed"
        assert types.count("brief_ready") == 1 and types.count("summary_ready") == 1
        # Executed by one runner only: one lease owner ever seen, a worker's, and one set of calls.
        assert len(owners[pk]) == 1, owners[pk]
        assert pid_of(next(iter(owners[pk]))) in pids
        assert calls == types.count("model_call") == CALLS_PER_RUN
        assert attempts == {1: 1, 2: 2, 3: 2}
        released = [(d["step"], d["badge"]) for _, t, d in events if t == "step_released"]
        assert released == list(zip((1, 2, 3), BADGES))  # in order, though step 3 was ready before step 2
        assert steps == [(1, Step.RELEASED, "passed", f"Run {n}, part one."),
                         (2, Step.RELEASED, "passed_after_rerender", f"Run {n}, part two."),
                         (3, Step.RELEASED, "warning", f"Run {n}, part three again.")]
        assert run.lease_owner is None and run.lease_expires_at is None
    worker_of = {pk: next(iter(o)).rsplit("/", 1)[0] for pk, o in owners.items()}
    assert len(set(worker_of.values())) == 2, f"both workers should have taken runs: {worker_of}"
    print(f"\nscale-out: {len(ids)} runs on 2 workers in {elapsed:.1f} s; first live step after "
          f"{first_live_at:.1f} s; runs per worker {sorted(list(worker_of.values()).count(w) for w in set(worker_of.values()))}")


async def test_a_killed_worker_is_reaped_by_the_other_and_nothing_unreleased_is_released(
        tmp_path, alice, workers, redis_layer):
    # Step 1 is released, step 3 is verified but waits for step 2, whose draft takes a minute:
    # the worker is killed meanwhile. The other worker's reaper, on the same machine, sees at its
    # next pass that the process is gone (a worker elsewhere is found by its stale heartbeat: see
    # the frozen worker's test below).
    script = scripting.script({
        1: {"executor": [{"content": "Part one.", "delay_s": 0.1}], "verifier": [PASS]},
        2: {"executor": [{"content": "Part two, never drafted.", "delay_s": 60}], "verifier": [PASS]},
        3: {"executor": ["Part three, verified but held."], "verifier": [PASS]},
    })
    quick = scripting.script({1: {"executor": ["After the crash."], "verifier": [PASS]}})
    (run,) = await database_sync_to_async(queue_runs)(tmp_path, alice, [script])
    comm = await open_socket(run, alice)

    procs = workers.start(2, **QUICK_REAPING)

    def step_3_held():
        types = RunEvent.objects.filter(run_id=run.pk)
        return (types.filter(type="step_released", data__step=1).exists()
                and types.filter(type="verdict_recorded", data__step=3, data__source="mechanical").exists())

    await within(20, step_3_held, "step 1 released and step 3 verified", workers)
    owner = await database_sync_to_async(lambda: Run.objects.get(pk=run.pk).lease_owner)()
    victim = workers.by_owner(owner)
    survivor = next(p for p in procs if p is not victim)
    victim.send_signal(signal.SIGKILL)
    victim.wait(timeout=5)
    killed_at = time.monotonic()

    def released_steps():
        return set(Step.objects.filter(run_id=run.pk, status=Step.RELEASED).values_list("index", flat=True))

    at_kill = await database_sync_to_async(released_steps)()
    seq_at_kill = await database_sync_to_async(RunEvent.objects.filter(run_id=run.pk).count)()
    assert at_kill == {1}

    # The survivor reaps the run, and its doorbell reaches this socket.
    message = ""
    while 'data-run-status="failed"' not in message:
        message = await comm.receive_from(timeout=15)
    reaped_after = time.monotonic() - killed_at
    assert "interrupted" in message and "ws-connect" not in message
    assert await comm.receive_output(timeout=5) == {"type": "websocket.close", "code": 1000}
    await comm.disconnect(timeout=5)

    def record():
        r = Run.objects.get(pk=run.pk)
        after = list(RunEvent.objects.filter(run_id=run.pk, seq__gt=seq_at_kill).values_list("type", flat=True))
        steps = list(Step.objects.filter(run_id=run.pk).order_by("index").values_list("index", "status", "content"))
        return r, after, steps, event_types(run.pk)

    failed, after, steps, types = await database_sync_to_async(record)()
    assert failed.status == Run.FAILED and failed.halt_reason.startswith("interrupted"), failed.halt_reason
    assert after == ["run_failed"]  # the reaper's one word; the dead worker wrote nothing more
    assert steps == [(1, Step.RELEASED, "Part one."), (2, Step.NOT_RELEASED, None), (3, Step.NOT_RELEASED, None)]
    assert types.count("run_started") == 1 and types.count("step_released") == 1
    assert survivor.poll() is None, workers.logs()

    # Nothing changes later (a heartbeat and a poll or two), and the survivor still takes new work.
    later = await database_sync_to_async(queue_after)(tmp_path, run, quick)
    await within(15, lambda: status(later.pk) == Run.COMPLETED, "the survivor runs a new run", workers)
    assert await database_sync_to_async(released_steps)() == {1}
    assert await database_sync_to_async(event_types)(run.pk) == types
    print(f"\nscale-out crash: reaped {reaped_after:.1f} s after kill -9 (same machine; reaper every 1 s)")


async def test_a_silent_worker_loses_its_run_to_the_engines_heartbeat_check(tmp_path, alice, workers, redis_layer):
    # A frozen worker (SIGSTOP) still exists, so nothing on this machine can call it dead: as for a
    # worker on a machine that vanished, only its stale heartbeat tells, after BEYOND_WORKER_STALLED_S.
    script = scripting.script({
        1: {"executor": [{"content": "Part one.", "delay_s": 0.1}], "verifier": [PASS]},
        2: {"executor": [{"content": "Part two, never drafted.", "delay_s": 60}], "verifier": [PASS]},
    })
    run, victim, survivor = await on_two_workers(tmp_path, alice, workers, script)
    victim.send_signal(signal.SIGSTOP)
    frozen_at = time.monotonic()
    try:
        await within(20, lambda: status(run.pk) == Run.FAILED, "the frozen worker's run failed", workers)
        failed_after = time.monotonic() - frozen_at
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=5)

    failed = await database_sync_to_async(Run.objects.get)(pk=run.pk)
    assert failed.halt_reason == interrupted(WORKER_SILENT)
    assert failed_after >= int(QUICK_REAPING["BEYOND_WORKER_STALLED_S"]) - 1  # told by the heartbeat, not sooner
    steps = await database_sync_to_async(lambda: list(Step.objects.filter(run_id=run.pk).order_by("index")
                                                      .values_list("index", "status")))()
    assert steps == [(1, Step.RELEASED), (2, Step.NOT_RELEASED)]
    assert survivor.poll() is None, workers.logs()
    print(f"\nscale-out freeze: the silent worker's run failed {failed_after:.1f} s after SIGSTOP "
          f"(heartbeat 1 s, stalled after 3 s, reaper every 1 s)")


def queue_after(tmp_path: Path, run: Run, script: dict) -> Run:
    path = scripting.write(tmp_path, script, name="after-crash.json")
    later, _ = start_run(Run.objects.get(pk=run.pk).workspace, "After the crash",
                         topology=parse_shorthand(f"scripted:{path}"))
    return later


def test_claims_race_on_postgresql_and_each_run_is_claimed_once(alice, transactional_db):
    # The workers' race, made dense: eight claimers (threads, each its own connection) drain
    # twenty queued runs at once. The conditional UPDATE lets exactly one claim each run.
    from concurrent.futures import ThreadPoolExecutor
    from threading import Barrier

    from django.db import connections

    workspace = workspace_with("race", member=alice)
    ids = {start_run(workspace, f"Task {n}", topology=parse_shorthand("offline"))[0].pk for n in range(20)}
    barrier = Barrier(8)

    def claimer(n: int) -> list[int]:
        try:
            barrier.wait(timeout=10)
            claimed = []
            while (run_id := claim_next_run(f"claimer-{n}")) is not None:
                claimed.append(run_id)
            return claimed
        finally:
            connections.close_all()

    with ThreadPoolExecutor(8) as pool:
        claims = [run_id for claimed in pool.map(claimer, range(8), timeout=30) for run_id in claimed]
    assert sorted(claims) == sorted(ids)  # every run claimed, none twice
    owners = dict(Run.objects.filter(pk__in=ids).values_list("pk", "lease_owner"))
    assert all(owner.startswith("claimer-") for owner in owners.values())


def test_once_executes_what_is_queued_then_exits(tmp_path, alice, workers):
    quick = scripting.script({1: {"executor": ["Only."], "verifier": [PASS]}})
    runs = queue_runs(tmp_path, alice, [quick, quick, quick])
    (proc,) = workers.start(1, 2, 0.3, "--once")
    assert proc.wait(timeout=30) == 0, workers.logs()
    assert [status(r.pk) for r in runs] == [Run.COMPLETED] * 3


async def test_sigterm_lets_the_run_in_progress_finish_and_takes_no_new_one(tmp_path, alice, workers, redis_layer):
    # Step 2 drafts for 6 s, twice as long as a silent worker may stay silent before it counts as
    # dead: a draining worker keeps its heartbeat, or the other worker's reaper would fail its run.
    script = scripting.script({
        1: {"executor": [{"content": "Part one.", "delay_s": 0.1}], "verifier": [PASS]},
        2: {"executor": [{"content": "Part two.", "delay_s": 6}], "verifier": [PASS]},
    })
    quick = scripting.script({1: {"executor": ["After the stop."], "verifier": [PASS]}})
    run, draining, other = await on_two_workers(tmp_path, alice, workers, script)
    draining.send_signal(signal.SIGTERM)
    await asyncio.sleep(0.5)
    later = await database_sync_to_async(queue_after)(tmp_path, run, quick)

    await within(20, lambda: status(run.pk) in Run.FINISHED, "the run in progress finished", workers)
    assert await database_sync_to_async(status)(run.pk) == Run.COMPLETED, workers.logs()
    assert await asyncio.to_thread(draining.wait, 20) == 0, workers.logs()
    await within(15, lambda: status(later.pk) == Run.COMPLETED, "the other worker ran the new run", workers)
    runner = await database_sync_to_async(lambda: RunEvent.objects.get(run_id=later.pk, type="run_started").data)()
    assert pid_of(runner["runner"]) == other.pid


SLOW = 30  # seconds a scripted call takes: far longer than the test waits


async def test_a_stop_reaches_the_worker_executing_the_run_within_a_second(tmp_path, alice, workers, redis_layer):
    script = scripting.script({
        1: {"executor": ["Part one."], "verifier": [PASS]},
        2: {"executor": [{"content": "Part two.", "delay_s": SLOW}], "verifier": [PASS]},
        3: {"executor": [{"content": "Part three.", "delay_s": SLOW}], "verifier": [PASS]},
    })
    (run,) = await database_sync_to_async(queue_runs)(tmp_path, alice, [script])
    workers.start(1)
    await within(20, lambda: Step.objects.filter(run_id=run.pk, status=Step.RELEASED).exists(), "step 1 released",
                 workers)
    client = AsyncClient()
    await client.aforce_login(alice)

    clicked = time.monotonic()
    response = await client.post(reverse("chat:stop", args=["acme", run.pk]))  # the Stop button, on the web side
    assert response.status_code == 200 and b"Stopping" in response.content
    await within(1.0, lambda: status(run.pk) == Run.CANCELLED, "the worker stopped the run", workers)
    stopped_after = time.monotonic() - clicked
    await asyncio.sleep(1.0)  # and nothing more comes later

    def record():
        r = Run.objects.get(pk=run.pk)
        steps = list(Step.objects.filter(run_id=run.pk).order_by("index").values_list("index", "status"))
        calls = sorted((c.role, c.step_index or 0, (c.error or "").startswith("cancelled"))
                       for c in ModelCall.objects.filter(run_id=run.pk))
        return r, steps, calls, event_types(run.pk)

    stopped, steps, calls, types = await database_sync_to_async(record)()
    assert stopped.status == Run.CANCELLED and stopped.halt_reason == "stopped by alice"
    assert steps == [(1, Step.RELEASED), (2, Step.NOT_RELEASED), (3, Step.NOT_RELEASED)]
    assert types[-1] == "run_cancelled" and types.count("step_released") == 1 and "summary_ready" not in types
    # The provider was called for nothing after the click: the two drafts in flight were cancelled
    # (and recorded so); no verdict of steps 2 and 3, no recap.
    assert calls == [("executor", 1, False), ("executor", 2, True), ("executor", 3, True),
                     ("planner", 0, False), ("verifier", 1, False)]
    print(f"\nscale-out stop: the worker stopped the run {stopped_after:.2f} s after the click")


IDLE_S = 30  # six times channels-redis's 5 s blocking read


@pytest.fixture
def daphne(tmp_path, workers):
    """A real daphne serving beyond_site.asgi on a free port, on this test's database and Redis."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = open(tmp_path / "daphne.log", "wb")
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "daphne"), "-b", "127.0.0.1", "-p", str(port), "beyond_site.asgi:application"],
        cwd=ROOT, env={**os.environ, "DATABASE_URL": workers.database_url}, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "daphne.log").read_text()
                time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


async def test_an_idle_run_page_stays_connected_through_redis(tmp_path, alice, workers, daphne, redis_layer):
    # A queued run that no worker takes: its page hears nothing for IDLE_S seconds.
    (run,) = await database_sync_to_async(queue_runs)(tmp_path, alice, [scripting.script({})])
    cookie = (await database_sync_to_async(session_headers)(alice))[1][1].decode()
    async with ws_connect(f"ws://127.0.0.1:{daphne}/ws/runs/{run.pk}/", origin=f"http://127.0.0.1:{daphne}",
                          additional_headers={"Cookie": cookie}, ping_interval=None, open_timeout=10) as page:
        # Served, and sent nothing: the page already shows the run queued (chat/fragments.py).
        try:
            unexpected = await asyncio.wait_for(page.recv(), IDLE_S)
        except TimeoutError:
            pass  # silence, and the socket still open: what a page waiting for a long step needs
        except ConnectionClosed as closed:
            raise AssertionError(f"the idle page was closed: {closed}") from None
        else:
            raise AssertionError(f"a page with nothing to hear received {unexpected[:200]!r}")

        # Still served: the run is stopped, and the page hears of it through Redis at once.
        assert await database_sync_to_async(request_stop)(run.pk, alice)
        await ring_doorbell(run.pk, await database_sync_to_async(RunEvent.objects.filter(run_id=run.pk).count)())
        message = ""
        while 'data-run-status="cancelled"' not in message:
            message = await asyncio.wait_for(page.recv(), 10)
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(page.recv(), 10)
        assert closed.value.rcvd.code == 1000


def run_jobs() -> dict[int, tuple[str, dict]]:
    return {job.id: (job.status, job.args) for job in ProcrastinateJob.objects.filter(task_name=RUN_TASK)}


def test_a_runs_job_exists_exactly_when_the_run_does(alice, transactional_db):
    workspace = workspace_with("jobs", member=alice)
    before = run_jobs()
    with pytest.raises(RuntimeError), transaction.atomic():
        start_run(workspace, "Rolled back", topology=parse_shorthand("offline"))
        raise RuntimeError("the submission's transaction fails after the run was queued")
    assert not Run.objects.filter(task="Rolled back").exists() and run_jobs() == before

    run, _ = start_run(workspace, "Kept", topology=parse_shorthand("offline"))
    added = {pk: job for pk, job in run_jobs().items() if pk not in before}
    assert list(added.values()) == [("todo", {"run_id": run.pk})]
    assert ProcrastinateJob.objects.get(pk=next(iter(added))).lock == f"run-{run.pk}"


async def test_the_reaper_fails_runs_whose_job_ended_and_gives_queued_runs_without_one_a_job(
        alice, settings, transactional_db):
    workspace = await database_sync_to_async(workspace_with)("reaper", member=alice)
    offline = parse_shorthand("offline")
    settings.BEYOND_RUN_IN_PROCESS = True  # queued without a job, as when a deployment turns the scaled mode on
    waiting, _ = await database_sync_to_async(start_run)(workspace, "Queued before the switch", topology=offline)
    settings.BEYOND_RUN_IN_PROCESS = False
    running, _ = await database_sync_to_async(start_run)(workspace, "Its job is gone", topology=offline)
    assert await database_sync_to_async(claim_run)(running.pk, job_owner(987654321), with_lease=False)
    await database_sync_to_async(Step.objects.create)(run=running, index=1, title="One", content_spec="x")

    assert await reap_interrupted_runs() == [running.pk]
    failed = await database_sync_to_async(Run.objects.get)(pk=running.pk)
    assert failed.status == Run.FAILED and failed.halt_reason == interrupted(JOB_ENDED)
    assert await database_sync_to_async(lambda: failed.steps.get().status)() == Step.NOT_RELEASED
    jobs = await database_sync_to_async(run_jobs)()
    assert ("todo", {"run_id": waiting.pk}) in jobs.values()
    assert await reap_interrupted_runs() == []  # nothing twice, and no second job for the waiting run
    assert await database_sync_to_async(run_jobs)() == jobs


async def test_doorbells_for_two_hundred_pages_of_one_process_all_arrive(redis_layer):
    # channels-redis keeps one list per process for all of its consumers' messages; past the
    # layer's capacity it drops what is sent there. A process serving two hundred live pages gets
    # a bell for each of them at once, and not one may be lost (the last bell is a run's end).
    layer = get_channel_layer()
    channels = [await layer.new_channel() for _ in range(200)]
    for n, channel in enumerate(channels):
        await layer.group_add(f"run-bell-test-{n}", channel)
    for n in range(200):
        await layer.group_send(f"run-bell-test-{n}", {"type": "run.event", "seq": n})
    heard = [await asyncio.wait_for(layer.receive(channel), 5) for channel in channels]
    assert [m["seq"] for m in heard] == list(range(200))
