"""Whole runs on a real model server: latency per call, tokens, how often the brief and the verdict
fail to parse, and how long a run takes.

    make model-server &                       # prints "model-server ready: http://127.0.0.1:8088/v1"
    .venv/bin/python bench/realmodel.py [--base-url URL] [--runs 3] [--max-tokens planner=400,executor=160]
    .venv/bin/python bench/realmodel.py --planner-only --runs 6   # what the planner's replies are

Each run is a `beyond_run` (the chat's code path) with all four roles on `gemma-3-270m` through the
`llama-cpp-python` profile, in a throwaway SQLite database. Prints the figures; fails only when a
run breaks a release rule (tests/realmodel/rules.py) or a call has no token counts. With
`--planner-only` the executor, verifier and summarizer are the offline engine's, so a run costs
one or two planner calls; every planner reply is counted as a brief with steps, a decline, or
a reply that did not validate.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TASKS = [
    "Draft a short access-control note for a ten-person office, in three steps.",
    "Write a password policy for a small accounting firm, in three steps.",
    "Draft a three-step incident response checklist for a small web shop.",
]


def setup_django(db_dir: Path) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{db_dir / 'bench.sqlite3'}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "beyond_site.settings")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-" + "x" * 40)
    os.environ.setdefault("BEYOND_LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def planner_replies(runs) -> list[tuple[str, str]]:
    """Each planner reply, in order: ("steps", the steps' titles), ("declined", its reason) or
    ("rejected", why it did not validate)."""
    replies = []
    for run in runs:
        for event in run.events.filter(type__in=("brief_ready", "planner_rejected")).order_by("pk"):
            if event.type == "planner_rejected":
                replies.append(("rejected", event.data.get("error", "")[:160]))
            elif event.data["brief"].get("decline_reason") is not None:
                replies.append(("declined", event.data["brief"]["decline_reason"][:160]))
            else:
                replies.append(("steps", str([s["title"][:40] for s in event.data["brief"]["steps"]])))
    return replies


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", default="http://127.0.0.1:8088/v1")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--max-tokens", default="", help="role=N,... (default: tests/realmodel/rules.py's)")
    parser.add_argument("--planner-only", action="store_true", help="the other three roles offline")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        setup_django(Path(tmp))
        from django.core.management import call_command

        from beyond_site.runs.models import ModelCall, Run
        from beyond_site.workspaces.models import Workspace
        from tests.realmodel import rules

        limits = dict(rules.MAX_TOKENS)
        for item in filter(None, args.max_tokens.split(",")):
            name, value = item.split("=")
            limits[name.strip()] = int(value)
        topology = {name: {**rules.role(args.base_url, name), "max_tokens": limits[name]} for name in limits}
        if args.planner_only:
            topology.update({name: {"provider": "offline"} for name in ("executor", "verifier", "summarizer")})
        Workspace.objects.create(slug="bench", name="Bench")
        walls, outcomes = [], []
        for n in range(args.runs):
            out = io.StringIO()
            started = time.monotonic()
            call_command("beyond_run", "--workspace", "bench", "--task", TASKS[n % len(TASKS)],
                         "--topology", json.dumps(topology), "--json", stdout=out)
            wall = time.monotonic() - started
            trace = json.loads(out.getvalue())
            if not args.planner_only:  # the offline engine's verifier gives its own badge, its calls no tokens
                rules.check_release_rules(trace)
                rules.check_call_records(trace["run"]["id"], roles=set(limits))
            steps = len(trace["steps"])
            walls.append((wall, steps))
            outcomes.append(trace["run"]["status"])
            badges = [s["badge"] or s["status"] for s in trace["steps"]]
            print(f"run {n + 1}: {trace['run']['status']} in {wall:.1f} s, {steps} steps {badges}", flush=True)

        calls = list(ModelCall.objects.filter(provider="openai"))
        print(f"\n{len(calls)} calls, max_tokens {limits}")
        print(f"{'role':<11} {'calls':>5} {'median s':>9} {'p90 s':>7} {'in tok':>7} {'out tok':>8} "
              f"{'out tok/s':>9} {'cut':>4} {'errors':>6}")
        for role in ("planner", "executor", "verifier", "summarizer"):
            mine = [c for c in calls if c.role == role]
            done = [c for c in mine if not c.error]
            if not mine:
                continue
            latencies = [c.latency_s for c in done] or [0.0]
            inputs = [c.input_tokens or 0 for c in done] or [0]
            outputs = [c.output_tokens or 0 for c in done] or [0]
            rate = sum(outputs) / max(sum(latencies), 1e-9)
            cut = sum(c.finish_reason == "length" for c in done)
            print(f"{role:<11} {len(mine):>5} {statistics.median(latencies):>9.2f} {percentile(latencies, 0.9):>7.2f} "
                  f"{statistics.mean(inputs):>7.0f} {statistics.mean(outputs):>8.0f} {rate:>9.1f} {cut:>4} "
                  f"{len(mine) - len(done):>6}")

        runs = list(Run.objects.all())
        planner_calls = sum(1 for c in calls if c.role == "planner" and not c.error)
        rejected = sum(r.events.filter(type="planner_rejected").count() for r in runs)
        verdicts = [e.data for r in runs for e in r.events.filter(type="verdict_recorded")
                    if e.data.get("source") == "model"]
        unparsed = sum(1 for v in verdicts if v.get("parsed") is None)
        print(f"\nbriefs that did not validate: {rejected} of {planner_calls} planner replies")
        for run in runs:
            for event in run.events.filter(type="planner_rejected"):
                print(f"  run {run.pk}: {event.data.get('error', '')[:200]}")
        print(f"model verdicts that did not parse: {unparsed} of {len(verdicts)}")
        replies = planner_replies(runs)
        print(f"planner replies: {len(replies)}; " + ", ".join(
            f"{kind} {sum(r[0] == kind for r in replies)}" for kind in ("steps", "declined", "rejected")))
        for kind, detail in replies:
            print(f"  {kind}: {detail}")
        print(f"outcomes: {', '.join(outcomes)}")
        for wall, steps in walls:
            print(f"run wall time {wall:.1f} s for {steps} steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
