"""Measure a run's wall time against its critical path, with simulated latency.

    .venv/bin/python bench/critical_path.py [--steps 8] [--render 0.6] [--verify 0.4]

The planner, one step's render and verify, and the recap are the critical path; everything else
should overlap. Prints the figures; exits non-zero if the wall time exceeds 1.5x the path.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.context import Context  # noqa: E402
from pipeline.orchestrator import Orchestrator, RunSettings  # noqa: E402
from pipeline.providers.scripted import ScriptedProvider  # noqa: E402
from pipeline.topology import ROLES, parse_shorthand  # noqa: E402

PASS = json.dumps({"pass": True, "issues": []})


def build_script(steps: int, plan: float, render: float, verify: float, recap: float) -> dict:
    brief = {"task": "Benchmark", "judgments": [], "citations": [],
             "steps": [{"index": i, "title": f"Step {i}", "content_spec": "Anything."} for i in range(1, steps + 1)]}
    return {
        "planner": [{"content": json.dumps(brief), "delay_s": plan}],
        "steps": {str(i): {"executor": [{"content": f"Step {i} text.", "delay_s": render}],
                           "verifier": [{"content": PASS, "delay_s": verify}]} for i in range(1, steps + 1)},
        "summarizer": [{"content": "Recap.", "delay_s": recap}],
    }


async def measure(args) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "script.json"
        path.write_text(json.dumps(build_script(args.steps, args.plan, args.render, args.verify, args.recap)))
        provider = ScriptedProvider(path)
        orchestrator = Orchestrator(Context(task="Benchmark"), parse_shorthand(f"scripted:{path}"),
                                    {r: provider for r in ROLES}, settings=RunSettings(concurrency=args.concurrency))
        started = time.monotonic()
        async for event in orchestrator.events():
            last = event
        wall = time.monotonic() - started
    assert last.type == "run_completed", last
    critical = args.plan + args.render + args.verify + args.recap
    serial = args.plan + args.steps * (args.render + args.verify) + args.recap
    return wall, critical, serial


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--plan", type=float, default=0.5)
    parser.add_argument("--render", type=float, default=0.6)
    parser.add_argument("--verify", type=float, default=0.4)
    parser.add_argument("--recap", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    wall, critical, serial = asyncio.run(measure(args))
    print(f"steps={args.steps} concurrency={args.concurrency}")
    print(f"critical path  {critical:6.2f} s")
    print(f"sum of steps   {serial:6.2f} s")
    print(f"wall time      {wall:6.2f} s  ({wall / critical:.2f}x critical path)")
    return 0 if wall <= 1.5 * critical else 1


if __name__ == "__main__":
    sys.exit(main())
