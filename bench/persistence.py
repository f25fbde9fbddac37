"""What recording a run costs: a run whose models answer at once, through the real runner and database.

    .venv/bin/python bench/persistence.py [--steps 40] [--db sqlite|postgres] [--repeat 3]

With zero model latency the run's wall time is the pipeline's own work plus persistence (every
event written, with the rows it implies, before it is announced). Prints the time per step and
per event, and the queries per event, best of `--repeat` runs; then what the tamper-evident
record adds (runs/chain.py): the hashing of each event as it is recorded, and `beyond_audit
verify`'s time for the run.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = str(ROOT / ".venv" / "bin" / "python")
PASS = json.dumps({"pass": True, "issues": []})

CHILD = r"""
import asyncio, json, sys, time
from django.db import connection
from django.test.utils import CaptureQueriesContext
from beyond_site.runs import chain
from beyond_site.runs.models import Run, RunEvent
from beyond_site.runs.queue import claim_run, start_run
from beyond_site.runs.runner import execute_run
from beyond_site.workspaces.models import Workspace
from pipeline.topology import parse_shorthand

script, repeat = sys.argv[1], int(sys.argv[2])
workspace, _ = Workspace.objects.get_or_create(slug="bench", defaults={"name": "Bench"})
best = None
for n in range(repeat):
    run, _ = start_run(workspace, f"Bench {n}", topology=parse_shorthand(f"scripted:{script}"), run_here=True)
    claim_run(run.pk, "bench")
    started = time.perf_counter()
    status = asyncio.run(execute_run(run.pk, "bench"))
    wall = time.perf_counter() - started
    assert status == "completed", status
    events = RunEvent.objects.filter(run=run).count()
    if best is None or wall < best[0]:
        best = (wall, events, run)
wall, events, run = best
rows = list(RunEvent.objects.filter(run=run).order_by("seq").values_list("seq", "type", "data", "at"))
started = time.perf_counter()
for _ in range(20):
    prev = chain.GENESIS
    for seq, type_, data, at in rows:
        prev = chain.event_hash(prev, run.pk, seq, type_, data, at)
hashing = (time.perf_counter() - started) / 20 / len(rows)
started = time.perf_counter()
assert chain.verify_run(run).ok
verifying = time.perf_counter() - started
print(json.dumps({"wall": wall, "events": events, "hash_s": hashing, "verify_s": verifying}))
"""


def script(steps: int) -> dict:
    brief = {"task": "Bench", "judgments": [], "citations": [],
             "steps": [{"index": i, "title": f"Part {i}", "content_spec": f"Part {i}."} for i in range(1, steps + 1)]}
    return {"planner": [json.dumps(brief)],
            "steps": {str(i): {"executor": [f"Part {i} text."], "verifier": [PASS]} for i in range(1, steps + 1)},
            "summarizer": ["Recap."]}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--db", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="beyond-persist-"))
    path = tmp / "script.json"
    path.write_text(json.dumps(script(args.steps)))
    env = {**os.environ, "DJANGO_SECRET_KEY": "bench-" + "x" * 40, "DJANGO_SETTINGS_MODULE": "beyond_site.settings",
           "BEYOND_LOG_LEVEL": "WARNING"}
    env.pop("REDIS_URL", None)
    database = f"beyond_persist_{os.getpid()}"
    if args.db == "sqlite":
        env["DATABASE_URL"] = f"sqlite:///{tmp / 'db.sqlite3'}"
    else:
        env["DATABASE_URL"] = f"{args.postgres}/{database}"
        subprocess.run(["psql", f"{args.postgres}/postgres", "-qc", f"CREATE DATABASE {database}"], check=True)
    try:
        subprocess.run([PY, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True)
        done = subprocess.run([PY, "manage.py", "shell", "-v", "0", "-c",
                               CHILD.replace("sys.argv[1]", repr(str(path))).replace("sys.argv[2]", repr(str(args.repeat)))],
                              cwd=ROOT, env=env, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(done.stderr[-3000:])
        result = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        if args.db == "postgres":
            subprocess.run(["psql", f"{args.postgres}/postgres", "-qc", f"DROP DATABASE IF EXISTS {database} WITH (FORCE)"],
                           check=False)
    wall, events = result["wall"], result["events"]
    print(f"{args.steps} steps · {args.db} · zero model latency · best of {args.repeat}")
    print(f"run wall {wall * 1000:8.1f} ms · {events} events")
    print(f"per step {wall / args.steps * 1000:8.2f} ms · per event {wall / events * 1000:6.2f} ms")
    print(f"chain: hashing {result['hash_s'] * 1e6:6.1f} µs per event "
          f"({result['hash_s'] / (wall / events) * 100:.1f}% of its recording) · "
          f"verify {result['verify_s'] * 1000:6.1f} ms for the run ({result['verify_s'] / events * 1e6:.0f} µs per event)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
