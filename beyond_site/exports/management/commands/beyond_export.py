"""Write a run's deliverable (Markdown, DOCX, PDF, or its tables as XLSX; the client or the audit
edition) or its trace (JSON) to a file, as the chat's export links and the auditors' trace download
give them (docs/interfaces.md)."""
from __future__ import annotations

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from beyond_site.exports.document import EDITIONS, nothing_to_export
from beyond_site.exports.editions import AUDIT
from beyond_site.exports.formats import FORMATS
from beyond_site.runs.models import Run


class Command(BaseCommand):
    help = ("Export a run: the released document as Markdown, DOCX or PDF, its tables as XLSX (the client or the "
            "audit edition), or the run trace as JSON.")

    def add_arguments(self, parser):
        parser.add_argument("run_id", type=int, metavar="RUN_ID")
        parser.add_argument("--format", required=True, choices=list(FORMATS),
                            help="docx, pdf, md, xlsx (the document's tables) or json (the run trace)")
        parser.add_argument("--edition", choices=EDITIONS, default=AUDIT,
                            help="client: the document alone, ready to send; audit (the default): with the "
                                 "verification summary, warnings, findings and the recap")
        parser.add_argument("--out", required=True, metavar="PATH", help="the file to write; - for standard output")

    def handle(self, *args, **opts):
        run = Run.objects.select_related("workspace", "created_by").filter(pk=opts["run_id"]).first()
        if run is None:
            raise CommandError(f"unknown run {opts['run_id']}: no run has this id")
        if opts["format"] != "json" and not run.is_finished:
            raise CommandError(f"run {run.pk} has not finished ({run.status}): export its document when it has "
                               "(--format json gives its trace now)")
        nothing = nothing_to_export(run) if opts["format"] != "json" else None
        if nothing:
            raise CommandError(f"{nothing} (--format json gives its trace)")
        body = FORMATS[opts["format"]].render(run, opts["edition"])
        if opts["out"] == "-":
            sys.stdout.buffer.write(body)
            sys.stdout.flush()
            return
        path = Path(opts["out"])
        if not path.parent.is_dir():
            raise CommandError(f"cannot write {path}: the folder {path.parent} does not exist")
        try:
            path.write_bytes(body)
        except OSError as exc:
            raise CommandError(f"cannot write {path}: {exc.strerror}") from None
        edition = f", {opts['edition']} edition" if FORMATS[opts["format"]].document else ""
        self.stderr.write(f"Wrote run {run.pk} as {opts['format']}{edition} to {path} ({len(body):,} bytes).")
        if run.requirements_gaps and FORMATS[opts["format"]].document:
            self.stderr.write(f"Note: {run.requirements_gaps} The document says so on its first page.")
