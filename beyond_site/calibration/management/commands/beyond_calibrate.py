"""Measure a topology's verifier on the calibration corpus and print the report (docs/calibration.md)."""
from __future__ import annotations

import asyncio
import json
import time

from django.core.management.base import BaseCommand, CommandError

from pipeline.calibration import CONTRACTS, VIOLATION_TYPES, Progress
from beyond_site.calibration.calibrating import (CONCURRENCY, WORKSPACE_DRAFTS, calibrate, claim_report, create_report,
                                                 set_limits)
from beyond_site.calibration.charts import percent, seconds, time_left
from beyond_site.runs.command_options import chosen_topology, positive, positive_usd, workspace_named
from beyond_site.calibration.figures import report_document
from beyond_site.calibration.models import CalibrationReport
from beyond_site.lib.runners import runner_identity


class ProgressLines:
    """Progress on stderr: at most one line a second, and the last one once."""

    def __init__(self, stream, every_s: float = 1.0):
        self.stream, self.every_s, self.last, self.ended = stream, every_s, float("-inf"), False

    def __call__(self, progress: Progress) -> None:
        now = time.monotonic()
        if progress.done >= progress.total:
            if self.ended:
                return
            self.ended = True
        elif now - self.last < self.every_s:
            return
        self.last = now
        left = time_left(progress.left_s)
        self.stream.write(f"calibrating: {progress.done}/{progress.total} done, {progress.calls} calls made, "
                          f"${progress.cost_usd:.4f} spent" + (f", {left}" if left else ""))


class Command(BaseCommand):
    help = "Measure the verifier of a topology on the calibration corpus and print the report."

    def add_arguments(self, parser):
        parser.add_argument("--workspace", required=True, help="workspace slug")
        source = parser.add_mutually_exclusive_group()
        source.add_argument("--provider", help="offline | scripted:PATH | openrouter:MODEL | openai:MODEL@BASE_URL")
        source.add_argument("--topology", help="topology JSON; only its verifier is called")
        parser.add_argument("--contract", choices=("narrow", "widened", "both"), help="default: both")
        parser.add_argument("--drafts", type=positive, metavar="N",
                            help="a sample of N drafts, half of them clean (default: the whole corpus)")
        parser.add_argument("--workspace-drafts", type=int, metavar="N",
                            help=f"clean drafts from the workspace's own runs at most (default {WORKSPACE_DRAFTS})")
        parser.add_argument("--concurrency", type=positive, metavar="N", help=f"calls at once (default {CONCURRENCY})")
        parser.add_argument("--max-calls", type=positive, metavar="N", help="stop after N verifier calls")
        parser.add_argument("--max-cost", type=positive_usd, metavar="USD", help="stop once USD was spent")
        parser.add_argument("--resume", type=int, metavar="REPORT_ID",
                            help="finish a report stopped by its budget or interrupted, asking nothing twice")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args, **opts):
        workspace = workspace_named(opts["workspace"])
        report = self._resumed(workspace, opts) if opts["resume"] is not None else self._created(workspace, opts)
        if report.status != CalibrationReport.COMPLETED:
            owner = f"{runner_identity()}/cli"
            if not claim_report(report.pk, owner):
                raise CommandError(f"calibration report {report.pk} is being run by {report.lease_owner}")
            self.stderr.write(f"calibration report {report.pk}: verifier {report.verifier}, "
                              f"contracts {', '.join(report.contracts)}")
            # A topology given on this command line is the operator's own; a resumed report's is stored.
            operator_topology = opts["resume"] is None and (opts["provider"] or opts["topology"]) is not None
            asyncio.run(calibrate(report.pk, owner, on_progress=ProgressLines(self.stderr),
                                  operator_topology=operator_topology))
            report.refresh_from_db()
        if report.status == CalibrationReport.FAILED:
            raise CommandError(f"calibration report {report.pk} {report.message}; "
                               f"resume it with --resume {report.pk}")
        if report.status == CalibrationReport.STOPPED:
            self.stderr.write(f"calibration report {report.pk} stopped ({report.message}): "
                              f"finish it with --resume {report.pk}")
        document = report_document(report)
        self.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) if opts["json"]
                          else format_report(document))

    def _created(self, workspace, opts) -> CalibrationReport:
        topology = chosen_topology(workspace, provider=opts["provider"], topology=opts["topology"])
        contract = opts["contract"] or "both"
        return create_report(workspace, topology, contracts=CONTRACTS if contract == "both" else (contract,),
                             drafts=opts["drafts"], concurrency=opts["concurrency"] or CONCURRENCY,
                             workspace_drafts=WORKSPACE_DRAFTS if opts["workspace_drafts"] is None
                             else max(0, opts["workspace_drafts"]),
                             max_calls=opts["max_calls"], max_cost_usd=opts["max_cost"])

    def _resumed(self, workspace, opts) -> CalibrationReport:
        fixed = [f"--{name.replace('_', '-')}" for name in ("provider", "topology", "contract", "drafts",
                                                             "workspace_drafts") if opts[name] is not None]
        if fixed:
            raise CommandError("a resumed report keeps its topology, contracts and corpus: "
                               f"leave out {', '.join(fixed)}")
        report = CalibrationReport.objects.filter(pk=opts["resume"], workspace=workspace).first()
        if report is None:
            raise CommandError(f"no calibration report {opts['resume']} in workspace {workspace.slug!r}")
        if report.status == CalibrationReport.COMPLETED:
            self.stderr.write(f"calibration report {report.pk} is already completed: nothing to resume")
        else:
            set_limits(report, concurrency=opts["concurrency"], max_calls=opts["max_calls"],
                       max_cost_usd=opts["max_cost"])
        return report


def _rate_line(label: str, block: dict, count: str) -> str:
    lo, hi = block["ci95"]
    return (f"  {label:<32} {block[count]:>4}/{block['n']:<4} {percent(block['rate']):>7}  "
            f"[{percent(lo)}, {percent(hi)}]")


def format_report(document: dict) -> str:
    meta, corpus = document["report"], document.get("corpus") or {}
    lines = [f"Calibration report {meta['id']}: {meta['status']} (verifier {meta['verifier']})"]
    if meta["message"]:
        lines.append(f"  {meta['message']}")
    if corpus:
        sources = ", ".join(f"{n} {source}" for source, n in corpus["sources"].items())
        lines.append(f"Corpus: {corpus['drafts']} drafts, {corpus['clean']} of them clean ({sources})")
    for name, contract in document["contracts"].items():
        lines += ["", f"{name} contract ({contract['drafts']} calls)",
                  _rate_line("clean drafts flagged", contract["clean"], "flagged")]
        for kind in VIOLATION_TYPES:
            if kind in contract["violations"]:
                lines.append(_rate_line(f"{kind.replace('_', ' ')} caught", contract["violations"][kind], "caught"))
        issues, cost, latency = contract["issues"], contract["cost"], contract["latency"]
        lines += [f"  unparseable verdicts or failed calls: {contract['unparseable']['n']}",
                  f"  issues raised: {issues['raised']}, false against the ground truth: {issues['false']}",
                  f"  cost ${cost['usd']:.4f}" + (f" ({cost['unknown']} calls did not say)" if cost["unknown"] else "")
                  + f"; latency p50 {seconds(latency['p50_s'])}, p95 {seconds(latency['p95_s'])}"]
    gate = document.get("mechanical")
    if gate:
        lines += ["", "citation gate alone (beside every model verdict in a run)",
                  _rate_line("clean drafts flagged", gate["clean"], "flagged")]
        lines += [_rate_line(f"{kind.replace('_', ' ')} caught", block, "caught")
                  for kind, block in gate["violations"].items()]
    return "\n".join(lines)
