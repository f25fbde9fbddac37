"""Check the run record against its hash chains, and anchor the ledgers (docs/audit.md,
"Tamper evidence"; docs/interfaces.md).

    beyond_audit verify [--workspace SLUG] [--against ANCHOR.json]
        one line per broken run (and per ledger or change-log problem), then a one-line summary;
        exit status 1 if anything is broken, 0 if the record is intact.
    beyond_audit anchor
        prints the ledger head of every workspace as JSON (and records it): keep it outside the
        database, and give it to `verify --against` later.
"""
from __future__ import annotations

import json
import sys

from django.core.management.base import BaseCommand, CommandError

from beyond_site.runs import chain
from beyond_site.workspaces.models import Workspace


class Command(BaseCommand):
    help = "Verify the tamper-evident run record, or print an anchor of the workspace ledgers."

    def add_arguments(self, parser):
        commands = parser.add_subparsers(dest="action", required=True)
        verify = commands.add_parser("verify", help="check every run's chain, the ledgers and the change logs")
        verify.add_argument("--workspace", help="only this workspace (slug)")
        verify.add_argument("--against", metavar="FILE",
                            help="an anchor printed earlier by `beyond_audit anchor`: the ledger must still hold it")
        commands.add_parser("anchor", help="print (and record) every workspace's ledger head, as JSON")

    def handle(self, *args, **opts):
        if opts["action"] == "anchor":
            self.stdout.write(json.dumps(chain.make_anchor(), indent=2, sort_keys=True))
            return
        workspaces = Workspace.objects.order_by("slug")
        if opts["workspace"]:
            workspaces = workspaces.filter(slug=opts["workspace"])
            if not workspaces.exists():
                raise CommandError(f"no workspace {opts['workspace']!r}")
        anchor_problems = self._against(opts["against"], opts["workspace"]) if opts["against"] else []
        reports = []
        for workspace in workspaces.iterator():
            report = chain.verify_workspace(workspace)
            for line in report.lines():
                self.stdout.write(line)
            reports.append(report)
        for line in anchor_problems:
            self.stdout.write(line)
        summary = chain.summary_line(reports)
        if anchor_problems:
            summary = summary.replace("record intact", "record BROKEN (against the anchor)", 1)
            summary += f"; {len(anchor_problems)} anchored ledger row(s) do not match"
        elif opts["against"]:
            summary += "; the anchor matches"
        self.stdout.write(summary)
        if anchor_problems or not all(r.ok for r in reports):
            sys.exit(1)

    def _against(self, path: str, slug: str | None) -> list[str]:
        try:
            with open(path, encoding="utf-8") as f:
                document = json.load(f)
        except (OSError, ValueError) as exc:
            raise CommandError(f"cannot read the anchor {path}: {exc}")
        return chain.verify_against(document, slug)
