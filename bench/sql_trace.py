"""Every SQL statement the web process runs for what bench/load.py's members do, by request and
thread, and the process's CPU by thread for each step, one member at a time (no burst).

    .venv/bin/python bench/sql_trace.py [--members 2] [--fill 100] [--out trace.jsonl]
    .venv/bin/python bench/sql_trace.py --cpu-only --members 0 --fill 100 [--profile DIR] [--calls FILE]
    .venv/bin/python bench/sql_trace.py --summary trace.jsonl

A real daphne serves a fresh SQLite database, as in bench/load.py, through a wrapper around the
ASGI application that records, with SQLite's own trace callback on every connection the process
opens, each statement as SQLite runs it (parameters bound; `BEGIN`, `COMMIT` and savepoints
included), with its thread, the request or
websocket it served, the code that issued it and the SQLite virtual machine's instructions it took
(counted by a progress handler every 10 instructions: a cost that does not depend on the
machine's load; the last statement of a connection in a phase counts 0).

First `--fill` runs are made one after the other by one more member, with models that answer at
once (so the tables hold about what a load of that many runs leaves); that member opens the chat
page once, then posts random keys as the page's are. Then each of `--members` members, one after
the other, logs in, opens the chat page, submits a task (the load's POST), opens the run's
websocket and reads it to its end (the models' latencies as in bench/load.py). Each step is a
phase: the trace holds a mark with the web process's CPU by thread at each, and the summary prints
the statements of the last member's phases and the CPU of every phase, per occurrence.
`--cpu-only` records no statement (the callbacks cost CPU of their own); `--profile` writes a
cProfile of each request thread, database lane thread and the event loop, timed by each thread's
CPU; `--calls` the CPU and wall time spent inside each cursor call, by statement.

To compare two trees, copy this script and bench/load.py into a worktree of the other and run both.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import httpx
import websockets

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import PASSWORD, PY, ROOT, SETUP, manage, script, thread_cpu, wait_http  # noqa: E402

WRAPPER = r'''
import contextvars, json, os, sys, threading, time
from django.db.backends.signals import connection_created

CTX = contextvars.ContextVar("sql_trace_ctx", default=None)
_out = open(os.environ["SQL_TRACE_FILE"], "a", buffering=1)
_lock = threading.Lock()
_ids = iter(range(1, 10**9))
ROOT = os.environ["SQL_TRACE_ROOT"]


def _where():
    frame, found = sys._getframe(2), []
    while frame is not None and len(found) < 3:
        name = frame.f_code.co_filename
        if name.startswith(ROOT) and "/.venv" not in name and "sql_trace" not in name:
            found.append(f"{name[len(ROOT) + 1:]}:{frame.f_lineno} {frame.f_code.co_name}")
        frame = frame.f_back
    return found


def _on_created(sender, connection, **kwargs):
    raw, cid, steps = connection.connection, next(_ids), [0]
    thread = threading.current_thread()

    def progress():
        steps[0] += 1
        return 0

    def trace(sql):
        line = json.dumps({"t": time.time(), "c": cid, "th": threading.current_thread().name, "ctx": CTX.get(),
                           "vm": steps[0], "sql": sql, "at": _where()})
        with _lock:
            _out.write(line + "\n")

    raw.set_progress_handler(progress, 10)
    raw.set_trace_callback(trace)
    with _lock:
        _out.write(json.dumps({"t": time.time(), "c": cid, "th": thread.name, "ctx": CTX.get(), "connect": True,
                               "at": _where()}) + "\n")


if not os.environ.get("SQL_TRACE_OFF"):
    connection_created.connect(_on_created)

if os.environ.get("SQL_TRACE_PROFILE"):  # cProfile on each request thread (http-N), written at exit
    import atexit, cProfile
    _profiles = {}

    def _profile_thread(frame, event, arg):
        sys.setprofile(None)
        name = threading.current_thread().name
        if ("http" in name and "edge" not in name) or "db-" in name:
            _profiles[name] = cProfile.Profile(time.thread_time_ns, 1e-9)  # the thread's CPU, not wall time
            _profiles[name].enable()

    threading.setprofile(_profile_thread)
    _profiles["daphne"] = cProfile.Profile(time.thread_time_ns, 1e-9)  # the event loop's thread
    _profiles["daphne"].enable()

    @atexit.register
    def _dump():
        for name, profile in _profiles.items():
            profile.dump_stats(os.path.join(os.environ["SQL_TRACE_PROFILE"], name + ".prof"))

if os.environ.get("SQL_TRACE_CALLS"):  # CPU and wall time inside each cursor call, by statement
    import atexit
    from django.db.backends.sqlite3.base import SQLiteCursorWrapper
    _calls = {}

    def _timed(name, original):
        def timed(self, *args, **kwargs):
            if name.startswith("execute"):
                self._sql_trace_query = args[0] if args else kwargs.get("query", "")
            cpu, wall = time.thread_time_ns(), time.perf_counter_ns()
            try:
                return original(self, *args, **kwargs)
            finally:
                key = (re.sub(r"(-\d+)?(_\d+)?$", "", threading.current_thread().name), name,
                       getattr(self, "_sql_trace_query", ""))
                spent = _calls.setdefault(key, [0, 0, 0])
                spent[0] += 1
                spent[1] += time.thread_time_ns() - cpu
                spent[2] += time.perf_counter_ns() - wall
        return timed

    import re
    for _name in ("execute", "executemany", "fetchone", "fetchmany", "fetchall"):
        setattr(SQLiteCursorWrapper, _name, _timed(_name, getattr(SQLiteCursorWrapper, _name)))

    @atexit.register
    def _dump_calls():
        with open(os.environ["SQL_TRACE_CALLS"], "w") as f:
            json.dump([[*k, *v] for k, v in _calls.items()], f)

import beyond_site.asgi as _real


async def application(scope, receive, send):
    token = CTX.set(f"{scope['type']} {scope.get('method', '')} {scope.get('path', '')}".replace("  ", " "))
    try:
        return await _real.application(scope, receive, send)
    finally:
        CTX.reset(token)
'''

FILL = r"""
import json
from django.contrib.auth import get_user_model
from beyond_site.workspaces.models import Membership, Workspace
workspace = Workspace.objects.get(slug="load")
user = get_user_model().objects.create_user("fill", password=PASSWORD)
Membership.objects.create(user=user, workspace=workspace, role="member")
"""


SERVER: list[int] = []  # the web process's pid: its threads' CPU is read at every phase


def mark(out: Path, phase: str) -> None:
    cpu = thread_cpu(SERVER[0]) if SERVER else {}
    with open(out, "a") as f:
        f.write(json.dumps({"t": time.time(), "phase": phase, "cpu": cpu}) + "\n")


async def member(base: str, name: str, slug: str, out: Path, label: str, settle: float, tasks: int = 1) -> None:
    """Log in, then `tasks` times: submit a task and read its run's websocket to the end. A member
    opens the chat page before a task, as the load's do; the fill (`tasks` > 1) only before its
    first, then posts keys of its own (as the page's: random), so that its submissions' CPU is
    theirs alone."""
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        mark(out, f"{label} login-page")
        page = await client.get("/accounts/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        mark(out, f"{label} login-post")
        await client.post("/accounts/login/", data={"csrfmiddlewaretoken": token, "username": name,
                                                    "password": PASSWORD})
        for k in range(tasks):
            if k == 0 or tasks == 1:
                mark(out, f"{label} chat-page")
                chat = await client.get(f"/w/{slug}/")
                assert chat.status_code == 200, chat.status_code
                key = re.search(r'name="idempotency_key"[^>]*value="([^"]+)"', chat.text).group(1)
            else:
                key = secrets.token_urlsafe(24)
            await asyncio.sleep(settle)
            mark(out, f"{label} send")
            sent = await client.post(f"/w/{slug}/send/", data={"message": f"Load task {label} {k}",
                                                               "idempotency_key": key},
                                     headers={"HX-Request": "true", "X-CSRFToken": client.cookies.get("csrftoken"),
                                              "Referer": base + "/"})
            run_id = int(re.search(r'ws-connect="/ws/runs/(\d+)/"', sent.text).group(1))
            cookie = "; ".join(f"{k}={v}" for k, v in client.cookies.items())
            mark(out, f"{label} websocket")
            async with websockets.connect(base.replace("http", "ws") + f"/ws/runs/{run_id}/", origin=base,
                                          additional_headers={"Cookie": cookie}, max_size=None) as ws:
                async for message in ws:
                    if 'data-run-status="completed"' in message or 'data-run-status="failed"' in message:
                        break
            await asyncio.sleep(settle)
            mark(out, f"{label} done")


def capture(args) -> Path:
    tmp = Path(tempfile.mkdtemp(prefix="beyond-sqltrace-"))
    out = Path(args.out or tmp / "trace.jsonl").resolve()
    out.write_text("")
    (tmp / "script.json").write_text(json.dumps(script()))
    quick = script()  # the fill's models answer at once
    for role in ("planner", "summarizer"):
        quick[role][0]["delay_s"] = 0
    for step in quick["steps"].values():
        step["executor"][0]["delay_s"] = step["verifier"][0]["delay_s"] = 0
    (tmp / "sql_trace_asgi.py").write_text(WRAPPER)
    env = {**os.environ, "DJANGO_SECRET_KEY": "load-" + "x" * 40, "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
           "DJANGO_SETTINGS_MODULE": "beyond_site.settings", "BEYOND_LOG_LEVEL": "WARNING",
           "DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}"}
    env.pop("REDIS_URL", None)
    manage(env, "migrate", "--noinput", "-v0")
    manage(env, "shell", "-c", SETUP.replace("sys.argv[1]", str(args.members)).replace(
        "sys.argv[2]", repr(str(tmp / "script.json"))).replace("PASSWORD", repr(PASSWORD)))
    manage(env, "shell", "-c", FILL.replace("PASSWORD", repr(PASSWORD)))
    port = 17000 + os.getpid() % 1000
    log = open(tmp / "server.log", "w")
    server = subprocess.Popen([str(ROOT / ".venv" / "bin" / "daphne"), "-b", "127.0.0.1", "-p", str(port),
                               "sql_trace_asgi:application"], cwd=ROOT, stdout=log, stderr=log,
                              env={**env, "PYTHONPATH": str(tmp), "SQL_TRACE_FILE": str(out), "SQL_TRACE_ROOT": str(ROOT),
                                   **({"SQL_TRACE_OFF": "1"} if args.cpu_only else {}),
                                   **({"SQL_TRACE_CALLS": str(Path(args.calls).resolve())} if args.calls else {}),
                                   **({"SQL_TRACE_PROFILE": str(Path(args.profile).resolve())} if args.profile else {})})
    SERVER.append(server.pid)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_http(base + "/accounts/login/", server, tmp / "server.log")
        time.sleep(2)  # the warm-up

        async def drive():
            if args.fill:  # the scripted provider reads its file again when it changes
                (tmp / "script.json").write_text(json.dumps(quick))
                await member(base, "fill", "load", out, "fill", 0.02, tasks=args.fill)
                (tmp / "script.json").write_text(json.dumps(script()))
            for k in range(args.members):
                await member(base, f"load{k}", "load", out, f"m{k}", 1.0)

        asyncio.run(drive())
    finally:
        server.terminate()
        server.wait(timeout=20)
    print(f"database: {tmp / 'db.sqlite3'}; trace: {out}")
    return out


KINDS = [("begin", r"^BEGIN"), ("commit", r"^COMMIT"), ("rollback", r"^ROLLBACK"), ("savepoint", r"^SAVEPOINT"),
         ("release", r"^RELEASE"), ("pragma", r"^PRAGMA"), ("select", r"^(SELECT|WITH)"), ("insert", r"^INSERT"),
         ("update", r"^UPDATE"), ("delete", r"^DELETE")]


def kind(sql: str) -> str:
    for name, pattern in KINDS:
        if re.match(pattern, sql.lstrip(), re.I):
            return name
    return "other"


def group(thread: str) -> str:
    return re.sub(r"(_\d+)+$", "", re.sub(r"-\d+(_\d+)?$", "", thread))


def load_trace(path: Path) -> dict[str, list[dict]]:
    """Statements by phase (the member's phase markers), each with its VM steps (10s of instructions)."""
    phases: dict[str, list[dict]] = defaultdict(list)
    phase = "start"
    last: dict[int, dict] = {}
    for line in Path(path).read_text().splitlines():
        rec = json.loads(line)
        if "phase" in rec:
            phase = rec["phase"]
            continue
        rec["phase"] = phase
        if rec.get("connect"):
            rec["sql"] = "-- connection opened"
            rec["vm"] = 0
        else:
            prev = last.get(rec["c"])
            if prev is not None:
                prev["steps"] = rec["vm"] - prev["vm"]
            last[rec["c"]] = rec
        rec.setdefault("steps", 0)
        phases[phase].append(rec)
    return phases


def cpu_by_phase(path: Path) -> tuple[dict[str, Counter], Counter]:
    """The web process's CPU seconds by thread (named as bench/load.py names them) spent from each
    phase's mark to the next, summed over the phase's occurrences; and how many there were."""
    marks = [rec for rec in map(json.loads, Path(path).read_text().splitlines()) if "phase" in rec]
    spent: dict[str, Counter] = defaultdict(Counter)
    seen = Counter()
    for here, after in zip(marks, marks[1:]):
        if not here.get("cpu") or not after.get("cpu"):
            continue
        seen[here["phase"]] += 1
        for thread, seconds in after["cpu"].items():
            spent[here["phase"]][thread] += seconds - here["cpu"].get(thread, 0.0)
    return spent, seen


def shape(sql: str) -> str:
    """A statement with its literals taken out, to group repeats."""
    sql = re.sub(r"'(?:[^']|'')*'", "?", sql)
    sql = re.sub(r"\b\d+(\.\d+)?\b", "?", sql)
    return re.sub(r"\((\?, )+\?\)", "(?...)", sql)


def summary(phases: dict[str, list[dict]], label: str) -> None:
    for name in [p for p in phases if p.startswith(label + " ")]:
        recs = phases[name]
        by_thread = defaultdict(Counter)
        steps = Counter()
        for r in recs:
            g = group(r["th"])
            by_thread[g]["connect" if r.get("connect") else kind(r["sql"])] += 1
            steps[g] += r["steps"]
        print(f"== {name}: {len(recs)} statements")
        for g, counts in sorted(by_thread.items()):
            print(f"   {g:28} {sum(counts.values()):4}  vm {steps[g]:6}  " + ", ".join(f"{k} {v}" for k, v in counts.most_common()))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--members", type=int, default=3)
    parser.add_argument("--fill", type=int, default=0)
    parser.add_argument("--out")
    parser.add_argument("--cpu-only", action="store_true", help="trace nothing: only the web process's CPU by "
                        "thread and phase (the trace's callbacks cost CPU of their own)")
    parser.add_argument("--profile", metavar="DIR", help="cProfile each request thread, database lane "
                        "thread and the event loop's into DIR (NAME.prof), "
                        "timed by the thread's CPU")
    parser.add_argument("--calls", metavar="FILE", help="the CPU and wall time of every cursor call, by thread and "
                        "statement, written to FILE (JSON)")
    parser.add_argument("--summary", metavar="TRACE", help="summarize a trace already taken")
    args = parser.parse_args()
    path = Path(args.summary) if args.summary else capture(args)
    phases = load_trace(path)
    members = sorted({p.split()[0] for p in phases if p.startswith("m")})
    if members:
        summary(phases, members[-1])
    spent, seen = cpu_by_phase(path)
    print("the web process's CPU by phase and thread, ms per occurrence:")
    for phase in sorted(spent):
        print(f"   {phase:18} x{seen[phase]:<4} " + ", ".join(
            f"{t} {v / seen[phase] * 1000:.1f}" for t, v in sorted(spent[phase].items(), key=lambda kv: -kv[1])
            if v / seen[phase] >= 0.0001))
    return 0


if __name__ == "__main__":
    sys.exit(main())
