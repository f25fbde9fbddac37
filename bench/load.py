"""Load: N members submit a task each through HTTP and follow its run on a websocket, as the chat does.

    .venv/bin/python bench/load.py --runs 100 [--db sqlite|postgres] [--mode embedded|scaled] [--workers 2] [--web 1]

A real daphne (and, in the scaled mode, `beyond_worker` processes on PostgreSQL and Redis) serves a
fresh database. Each member logs in, posts a task to /send/, opens the run's websocket and reads
fragments until the run's end. The models are scripted with fixed latencies (planner 1 s, executor
1 s, verifier 0.5 s, recap 0.5 s, four steps: about 3 s a run if nothing waits). Prints, per run,
the wall time from submission to the end on the page (p50, p95, max) against that ideal; the lag
between an event being recorded and the page receiving it (p50, p95, max); pages that never saw
their run's end; runs lost; the server processes' peak RSS and CPU time; the first web process's CPU
by thread up to the moment 95% of the submissions were answered (the window the p95 depends on)
and after; and whether the load generator itself kept up (its own event loop's lateness).
"""
from __future__ import annotations

import argparse
from collections import Counter
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import websockets

ROOT = Path(__file__).resolve().parents[1]
PY = str(ROOT / ".venv" / "bin" / "python")
PASSWORD = "load-test-password-2026"
STEPS = 4
LATENCY = {"planner": 1.0, "executor": 1.0, "verifier": 0.5, "summarizer": 0.5}
IDEAL = LATENCY["planner"] + LATENCY["executor"] + LATENCY["verifier"] + LATENCY["summarizer"]
LOGINS_AT_ONCE = 8  # members logging in at the same time (not measured)
PASS = json.dumps({"pass": True, "issues": []})
SETUP = r"""
import json, sys
from django.contrib.auth import get_user_model
from beyond_site.workspaces.models import Membership, Workspace
n, script = int(sys.argv[1]), sys.argv[2]
role = {"provider": "scripted", "path": script}
workspace = Workspace.objects.create(slug="load", name="Load", topology={r: role for r in
                                     ("planner", "executor", "verifier", "summarizer")})
User = get_user_model()
for k in range(n):
    user = User.objects.create_user(f"load{k}", password=PASSWORD)
    Membership.objects.create(user=user, workspace=workspace, role="member")
"""
EVENTS = r"""
import json, sys
from beyond_site.runs.models import Run, RunEvent
out = {}
for run in Run.objects.filter(workspace__slug="load"):
    out[run.pk] = {"status": run.status, "events": [(e.seq, e.type, e.at.timestamp())
                                                    for e in RunEvent.objects.filter(run=run).order_by("seq")]}
print(json.dumps(out))
"""


def script() -> dict:
    brief = {"task": "Load", "judgments": [], "citations": [],
             "steps": [{"index": i, "title": f"Part {i}", "content_spec": f"Part {i}."} for i in range(1, STEPS + 1)]}
    return {"planner": [{"content": json.dumps(brief), "delay_s": LATENCY["planner"]}],
            "steps": {str(i): {"executor": [{"content": f"Part {i} text.", "delay_s": LATENCY["executor"]}],
                               "verifier": [{"content": PASS, "delay_s": LATENCY["verifier"]}]}
                      for i in range(1, STEPS + 1)},
            "summarizer": [{"content": "Recap.", "delay_s": LATENCY["summarizer"]}]}


def manage(env, *args, stdin: str | None = None) -> str:
    done = subprocess.run([PY, "manage.py", *args], cwd=ROOT, env=env, input=stdin, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return done.stdout


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(stat: Path) -> tuple[float, float]:
    """(user, kernel) CPU seconds from a process's or a thread's /proc stat file."""
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) / CLOCK_TICKS, int(fields[12]) / CLOCK_TICKS


def proc_usage(pid: int) -> tuple[float, float, float]:
    """(peak RSS in MB, CPU seconds, of which in the kernel) of a process, from /proc."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        peak = int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024
        user, kernel = cpu_seconds(Path(f"/proc/{pid}/stat"))
        return peak, user + kernel, kernel
    except (OSError, AttributeError):
        return 0.0, 0.0, 0.0


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


class Member:
    #: --floor: post an empty task (refused by the form before anything is written) and stop there.
    floor = False

    def __init__(self, base: str, n: int):
        self.base, self.n = base, n
        self.run_id: int | None = None
        self.submitted = self.answered = self.ended = None
        self.received: list[float] = []
        self.opened: float | None = None
        self.saw_end = False
        self.error = ""
        #: Where the member is: "login" (not measured), "send", then "page".
        self.step = "login"

    async def go(self, start: asyncio.Event, ready: asyncio.Queue, timeout: float, logins: asyncio.Semaphore) -> None:
        try:
            async with httpx.AsyncClient(base_url=self.base, timeout=60) as client:
                # Getting in is not measured: a member told "busy, try again" (503) tries again. A few
                # members log in at a time: a hundred password hashes at once on a loaded machine
                # outlast the client's timeout, and those members would submit nothing.
                async with logins:
                    for _ in range(10):
                        page = await client.get("/accounts/login/")
                        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
                        if token and (await client.post("/accounts/login/", data={
                                "csrfmiddlewaretoken": token.group(1), "username": f"load{self.n}",
                                "password": PASSWORD})).status_code != 503:
                            chat = await client.get("/w/load/")
                            if chat.status_code == 200:
                                break
                        await asyncio.sleep(1 + self.n % 5)
                csrf = client.cookies.get("csrftoken")
                key = re.search(r'name="idempotency_key"[^>]*value="([^"]+)"', chat.text).group(1)
                ready.put_nowait(self.n)
                await start.wait()
                self.step = "send"
                self.submitted = time.time()
                sent = await client.post("/w/load/send/", data={"message": "" if self.floor else f"Load task {self.n}",
                                                                "idempotency_key": key},
                                         headers={"HX-Request": "true", "X-CSRFToken": csrf, "Referer": self.base + "/"})
                self.answered = time.time()
                if self.floor:
                    self.error = "" if sent.status_code in (200, 400) else f"send: HTTP {sent.status_code}"
                    return
                found = re.search(r'ws-connect="/ws/runs/(\d+)/"', sent.text)
                if sent.status_code != 200 or not found:
                    self.error = f"send: HTTP {sent.status_code}"
                    return
                self.run_id = int(found.group(1))
                cookie = "; ".join(f"{k}={v}" for k, v in client.cookies.items())
            self.step = "page"
            url = self.base.replace("http", "ws") + f"/ws/runs/{self.run_id}/"
            async with asyncio.timeout(timeout):
                async with websockets.connect(url, origin=self.base, additional_headers={"Cookie": cookie},
                                              open_timeout=30, max_size=None) as ws:
                    self.opened = time.time()
                    async for message in ws:
                        now = time.time()
                        self.received.append(now)
                        if 'data-run-status="completed"' in message or 'data-run-status="failed"' in message:
                            self.saw_end, self.ended = True, now
        except (TimeoutError, OSError, websockets.WebSocketException, httpx.HTTPError, AttributeError) as exc:
            self.error = self.error or f"{self.step}: {type(exc).__name__}: {exc}"[:200]
        finally:
            ready.put_nowait(self.n)  # a member who never got in does not hold the others back


class Burst:
    """Is the load generator keeping up (its event loop's own lateness, its CPU until every submission
    was answered), and where the first web process's CPU went up to the moment 95% of the
    submissions were answered (by thread: runtime/threads.py names them for the operating system)."""

    def __init__(self, pid: int | None):
        self.pid = pid
        self.late: list[float] = []
        self.client: tuple[float, float] | None = None  # CPU, wall until every submission was answered
        self.threads: list[dict[str, float]] = [thread_cpu(pid)] if pid else []

    async def watch(self, members: list[Member], tick: float = 0.005) -> None:
        cpu, started = time.process_time(), time.monotonic()
        while True:
            before = time.monotonic()
            await asyncio.sleep(tick)
            self.late.append(time.monotonic() - before - tick)
            answered = sum(bool(m.answered or m.error) for m in members)
            if self.pid and len(self.threads) == 1 and answered >= 0.95 * len(members):
                self.threads.append(thread_cpu(self.pid))
            if self.client is None and answered == len(members):
                self.client = (time.process_time() - cpu, time.monotonic() - started)

    def report(self) -> None:
        if self.late:
            cpu, wall = self.client or (float("nan"), float("nan"))
            print(f"the load generator's event loop: late p50 {pct(self.late, 50) * 1000:.0f} ms p95 "
                  f"{pct(self.late, 95) * 1000:.0f} ms max {max(self.late) * 1000:.0f} ms; its CPU {cpu:.2f} s in the "
                  f"{wall:.2f} s until every submission was answered")
        if len(self.threads) == 3:
            start, at95, end = self.threads
            groups = sorted(end, key=lambda g: start.get(g, 0) - end[g])
            print("web process CPU by thread (s): " + "; ".join(
                f"{g} {at95.get(g, 0) - start.get(g, 0):.2f} + {end[g] - at95.get(g, 0):.2f}" for g in groups
                if end[g] - start.get(g, 0) >= 0.005) + "  (up to 95% of the submissions answered + after)")


def thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds of a process's threads, by name with its number taken off (http-3 counts as http)."""
    out: dict[str, float] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            user, kernel = cpu_seconds(task / "stat")
        except OSError:
            continue  # the thread has just ended
        group = re.sub(r"-\d+$", "", name)
        out[group] = out.get(group, 0.0) + user + kernel
    return out


async def drive(bases: list[str], runs: int, timeout: float, on_start=lambda: None,
                watched: int | None = None) -> tuple[list[Member], Burst]:
    start, ready, logins = asyncio.Event(), asyncio.Queue(), asyncio.Semaphore(LOGINS_AT_ONCE)
    members = [Member(bases[n % len(bases)], n) for n in range(runs)]
    tasks = [asyncio.create_task(m.go(start, ready, timeout, logins)) for m in members]
    # Logging in hashes a password (about half a second of CPU each): the runs start once every
    # member is on the page, so that cost never falls inside what is measured.
    waiting = set(range(runs))
    while waiting:
        waiting.discard(await ready.get())
    await asyncio.sleep(1)  # the last page's requests settle
    on_start()
    burst = Burst(watched)
    watch = asyncio.create_task(burst.watch(members))
    start.set()
    await asyncio.gather(*tasks)
    watch.cancel()
    if watched:
        burst.threads.append(thread_cpu(watched))
    return members, burst


def wait_http(url: str, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.HTTPError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the server did not start:\n{log.read_text()[-2000:]}") from None
            time.sleep(0.3)


def report_runs(args, members: list[Member], record: dict, elapsed: float) -> None:
    """Per run: wall time and where it went, event lag, what was lost."""
    walls = [m.ended - m.submitted for m in members if m.saw_end]
    # Where a run's wall time went: the submission's answer, the wait before its first event, and the
    # run itself (first event to last); the last event reaching the page is in the lag below.
    answered, waited, lasted, lags = [], [], [], []
    for m in members:
        events = record.get(str(m.run_id), {}).get("events", [])
        if m.submitted is None or not events:
            continue
        if m.answered:
            answered.append(m.answered - m.submitted)
        waited.append(events[0][2] - m.submitted)
        lasted.append(events[-1][2] - events[0][2])
        for _, _, at in events:
            if m.opened is None or at < m.opened:
                continue  # recorded before the page connected: the snapshot brought it
            after = [t for t in m.received if t >= at - 0.002]
            if after:
                lags.append(max(0.0, min(after) - at))
    finished = {k for k, v in record.items() if v["status"] in ("completed", "halted", "failed", "cancelled")}
    submitted = [m for m in members if m.run_id is not None]
    lost = [m for m in submitted if str(m.run_id) not in finished]
    print(f"{args.runs} runs · {args.mode} · {args.db}" + (f" · {args.web} web · {args.workers} workers" if args.mode == "scaled" else "")
          + f" · {elapsed:.1f} s in all · ideal per run {IDEAL:.1f} s")
    print(f"per-run wall  p50 {pct(walls, 50):6.2f} s  p95 {pct(walls, 95):6.2f} s  max {max(walls, default=float('nan')):6.2f} s"
          f"  (p95 = {pct(walls, 95) / IDEAL:.2f}x ideal)")
    print(f"  of which:   submission answered p50 {pct(answered, 50):5.2f} s p95 {pct(answered, 95):5.2f} s; first event "
          f"p50 {pct(waited, 50):5.2f} s p95 {pct(waited, 95):5.2f} s; first to last event p50 {pct(lasted, 50):5.2f} s "
          f"p95 {pct(lasted, 95):5.2f} s")
    print(f"event lag     p50 {pct(lags, 50) * 1000:6.0f} ms p95 {pct(lags, 95) * 1000:6.0f} ms max "
          f"{max(lags, default=float('nan')) * 1000:6.0f} ms  ({len(lags)} events)")
    got_in = [m for m in members if m.step != "login"]
    print(f"pages that never saw the end: {sum(not m.saw_end for m in got_in)}; submissions refused or failed: "
          f"{len(got_in) - len(submitted)}; runs lost: {len(lost)}")
    if len(got_in) < len(members):  # logging in is not measured: these members never submitted
        print(f"members who could not log in (a busy machine's timeouts while {len(members)} passwords were "
              f"hashed): {len(members) - len(got_in)}")
    errors = sorted({m.error for m in members if m.error})
    for error in errors[:5]:
        print(f"  error: {error}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--db", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--mode", choices=["embedded", "scaled"], default="embedded")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--web", type=int, default=1, help="web processes (the scaled mode; members are shared out)")
    parser.add_argument("--worker-concurrency", type=int, default=50)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/7")
    parser.add_argument("--profile", metavar="FILE", help="record the web process with py-spy during the runs (raw "
                        "collapsed stacks, one line per stack and thread)")
    parser.add_argument("--profile-what", choices=["gil", "cpu", "wall"], default="gil",
                        help="with --profile: the thread holding the GIL (default), every thread on a CPU (Python "
                        "or not: SQLite, the kernel), or every thread whether it runs or waits")
    parser.add_argument("--profile-rate", type=int, default=100, help="with --profile: samples a second")
    parser.add_argument("--profile-seconds", type=int, help="with --profile: record only this many seconds from "
                        "the submissions on (the burst of submissions and run starts, say)")
    parser.add_argument("--floor", action="store_true", help="the cost of an HTTP request alone: each member posts an "
                        "empty task, which the form refuses before anything is written (no run, no websocket)")
    parser.add_argument("--keep", action="store_true", help="keep the SQLite database and the server's log")
    args = parser.parse_args()
    if args.mode == "scaled" and args.db != "postgres":
        raise SystemExit("the scaled mode runs on PostgreSQL: add --db postgres")
    if args.web > 1 and args.mode != "scaled":
        raise SystemExit("several web processes share their runs' pages through Redis: add --mode scaled")

    tmp = Path(tempfile.mkdtemp(prefix="beyond-load-"))
    (tmp / "script.json").write_text(json.dumps(script()))
    env = {**os.environ, "DJANGO_SECRET_KEY": "load-" + "x" * 40, "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
           "DJANGO_SETTINGS_MODULE": "beyond_site.settings", "BEYOND_LOG_LEVEL": "WARNING"}
    env.pop("REDIS_URL", None)
    database = f"beyond_load_{os.getpid()}"
    if args.db == "sqlite":
        env["DATABASE_URL"] = f"sqlite:///{tmp / 'db.sqlite3'}"
    else:
        env["DATABASE_URL"] = f"{args.postgres}/{database}"
        subprocess.run(["psql", f"{args.postgres}/postgres", "-qc", f"CREATE DATABASE {database}"], check=True)
    if args.mode == "scaled":
        env.update(REDIS_URL=args.redis, BEYOND_RUN_IN_PROCESS="false")
        subprocess.run(["redis-cli", "-u", args.redis, "flushdb"], check=False, capture_output=True)
    procs: list[subprocess.Popen] = []
    try:
        manage(env, "migrate", "--noinput", "-v0")
        manage(env, "shell", "-c", SETUP.replace("sys.argv[1]", str(args.runs)).replace("sys.argv[2]", repr(str(tmp / "script.json"))).replace("PASSWORD", repr(PASSWORD)))
        port = 18000 + os.getpid() % 1000 * 4
        log = tmp / "server.log"
        out = open(log, "w")
        for k in range(args.web):  # each web process on a port of its own; members are shared out in turn
            procs.append(subprocess.Popen([str(ROOT / ".venv" / "bin" / "daphne"), "-b", "127.0.0.1", "-p", str(port + k),
                                           "beyond_site.asgi:application"], cwd=ROOT, env=env, stdout=out, stderr=out))
        if args.mode == "scaled":
            for _ in range(args.workers):
                procs.append(subprocess.Popen([PY, "manage.py", "beyond_worker", "--concurrency",
                                               str(args.worker_concurrency)], cwd=ROOT, env=env, stdout=out, stderr=out))
        bases = [f"http://127.0.0.1:{port + k}" for k in range(args.web)]
        for k, base in enumerate(bases):
            wait_http(base + "/accounts/login/", procs[k], log)
        started = time.monotonic()
        at_start: list[tuple[float, float]] = []
        spy: list[subprocess.Popen] = []

        def runs_begin():  # the logins are done: what follows is the runs' own cost
            at_start.extend(proc_usage(p.pid) for p in procs)
            if args.profile:
                spy.append(subprocess.Popen(["py-spy", "record", "-p", str(procs[0].pid), "-o", args.profile,
                                             "-r", str(args.profile_rate), "--nonblocking", *{"gil": ["--gil"], "cpu": [], "wall": ["--idle"]}[args.profile_what],
                                             "--threads", "--format", "raw", "-d", str(args.profile_seconds or int(args.timeout))], stdout=subprocess.DEVNULL))
                time.sleep(1.5)  # py-spy takes about a second to attach: the burst waits for it

        Member.floor = args.floor
        client_before = time.process_time()
        members, burst = asyncio.run(drive(bases, args.runs, args.timeout, runs_begin, watched=procs[0].pid))
        client_cpu = time.process_time() - client_before
        elapsed = time.monotonic() - started
        usage = [proc_usage(p.pid) for p in procs]
        for p in spy:
            p.send_signal(2)  # py-spy writes its profile on SIGINT
            p.wait(timeout=60)
        record = json.loads(manage(env, "shell", "-v", "0", "-c", EVENTS))
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        if args.db == "postgres":
            subprocess.run(["psql", f"{args.postgres}/postgres", "-qc", f"DROP DATABASE IF EXISTS {database} WITH (FORCE)"],
                           check=False)

    if args.floor:
        answered = [m.answered - m.submitted for m in members if m.answered]
        (_, cpu, kernel), (_, cpu_before, kernel_before) = usage[0], at_start[0]
        print(f"{args.runs} empty submissions · {args.db}: answered p50 {pct(answered, 50):.2f} s p95 "
              f"{pct(answered, 95):.2f} s; failed {sum(bool(m.error) for m in members)}; web CPU "
              f"{cpu - cpu_before:.2f} s ({(cpu - cpu_before) / args.runs * 1000:.1f} ms a request, "
              f"{kernel - kernel_before:.2f} s in the kernel)")
    else:
        report_runs(args, members, record, elapsed)
    for n, ((peak, cpu, kernel), (_, cpu_before, kernel_before)) in enumerate(zip(usage, at_start or [(0, 0, 0)] * len(usage))):
        print(f"process {n} ({'daphne' if n < args.web else 'worker'}): peak RSS {peak:6.0f} MB, CPU {cpu:6.1f} s"
              f" ({cpu - cpu_before:.1f} s after the logins, {kernel - kernel_before:.1f} s of it in the kernel)")
    print(f"the load generator itself (this process, logins included): CPU {client_cpu:.1f} s")
    burst.report()
    problems = Counter(re.sub(r"\d+", "N", line.strip())[:400] for line in log.read_text(errors="replace").splitlines()
                       if re.search(r"WARNING|ERROR|Error|Exception|refused|timed out", line))
    for line, count in problems.most_common(6):
        print(f"  server log ×{count}: {line}")
    kept = Path(tempfile.gettempdir()) / "beyond-load-server.log"
    shutil.copy(log, kept)
    print(f"  the server's log: {kept}")
    if args.keep:
        print(f"  kept: {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
