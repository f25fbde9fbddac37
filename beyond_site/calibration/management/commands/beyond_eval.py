"""Compare topologies on a task set: each task N times per topology, through the same code path as
`beyond_run` (every run persisted and visible to auditors), then the figures per topology."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from pipeline.calibration import compare_topologies, read_tasks
from beyond_site.calibration.charts import percent, seconds
from beyond_site.runs.command_options import chosen_topology, describe, positive, workspace_named
from beyond_site.runs.models import Run
from beyond_site.lib.runners import runner_identity
from beyond_site.runs.selectors import run_trace
from beyond_site.runs.budgets import BudgetRefused
from beyond_site.runs.queue import claim_run, start_run
from beyond_site.runs.trust import CalibrationRequired
from beyond_site.runs.runner import execute_run


class Command(BaseCommand):
    help = "Run a task set N times per topology and compare the topologies."

    def add_arguments(self, parser):
        parser.add_argument("--workspace", required=True, help="workspace slug")
        parser.add_argument("--tasks", required=True, metavar="FILE",
                            help="one task per line, or a JSON list of tasks")
        parser.add_argument("--trials", type=positive, default=1, metavar="N", help="runs of each task per topology")
        parser.add_argument("--topology", action="append", required=True, metavar="JSON",
                            help="a topology (JSON, or a provider shorthand); give it once per topology to compare")
        parser.add_argument("--json", action="store_true", help="print the comparison as JSON")

    def handle(self, *args, **opts):
        workspace = workspace_named(opts["workspace"])
        try:
            tasks = read_tasks(Path(opts["tasks"]).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise CommandError(f"cannot read the tasks from {opts['tasks']}: {exc}") from None
        topologies = {f"{n}: {describe(t)}": t for n, t in enumerate(
            (chosen_topology(workspace, topology=text) for text in opts["topology"]), 1)}
        owner = f"{runner_identity()}/eval"
        traces, run_ids = {}, {}
        for label, topology in topologies.items():
            traces[label], run_ids[label] = [], []
            for task_number, task in enumerate(tasks, 1):
                for trial in range(1, opts["trials"] + 1):
                    try:
                        run, _ = start_run(workspace, task, topology=topology, run_here=True)
                    except (BudgetRefused, CalibrationRequired) as exc:  # refused before it started
                        raise CommandError(f"topology {label}: {exc}") from None
                    if not claim_run(run.pk, owner):
                        raise CommandError(f"run {run.pk} was claimed by another runner")
                    asyncio.run(execute_run(run.pk, owner))
                    run = Run.objects.select_related("workspace", "created_by").get(pk=run.pk)
                    traces[label].append(run_trace(run))
                    run_ids[label].append(run.pk)
                    self.stderr.write(f"topology {label}, task {task_number}/{len(tasks)}, trial {trial}/"
                                      f"{opts['trials']}: run {run.pk} {run.status}")
        comparison = compare_topologies(traces)
        for label, topology in topologies.items():
            comparison["topologies"][label].update(topology=topology.as_json(), run_ids=run_ids[label])
        comparison["tasks"], comparison["trials"] = tasks, opts["trials"]
        self.stdout.write(json.dumps(comparison, indent=2, ensure_ascii=False) if opts["json"]
                          else format_comparison(comparison))


def format_comparison(comparison: dict) -> str:
    lines = []
    for label, s in comparison["topologies"].items():
        verdicts, wall, tokens, cost = s["parseable_verdicts"], s["wall_time_s"], s["tokens"], s["cost"]
        statuses = ", ".join(f"{status} {n}" for status, n in sorted(s["statuses"].items()))
        lo, hi = verdicts["ci95"]
        lines += [f"Topology {label}: {s['runs']} runs ({statuses})",
                  f"  parseable verdicts: {verdicts['parsed']}/{verdicts['n']} {percent(verdicts['rate'])} "
                  f"[{percent(lo)}, {percent(hi)}]",
                  f"  halts: {s['halts']}, warnings: {s['warnings']}, re-renders: {s['rerenders']} "
                  f"(of {s['steps']} steps)",
                  f"  wall time: mean {seconds(wall['mean'])}, median {seconds(wall['median'])}, "
                  f"max {seconds(wall['max'])}",
                  f"  tokens: {tokens['total']} ({tokens['per_run']} a run); cost ${cost['usd']:.4f}"
                  + (f" ({cost['unknown']} of {cost['calls']} calls did not say)" if cost["unknown"] else ""), ""]
    return "\n".join(lines).rstrip()
