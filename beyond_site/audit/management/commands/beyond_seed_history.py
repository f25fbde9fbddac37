"""beyond_seed_history --workspace SLUG --runs N: a long run history to measure the audit pages on.

Bulk-creates N finished runs (steps, attempts, verdicts, model calls, events) in batches; see
beyond_site/audit/history_seed.py. Seeded runs stay on the append-only record: use a workspace of
their own (the default: it is created), never a real one.
"""
from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError

from beyond_site.audit.history_seed import seed_history


class Command(BaseCommand):
    help = "Bulk-create N finished runs in a workspace, to measure the audit pages over a long history."

    def add_arguments(self, parser):
        parser.add_argument("--workspace", required=True, help="slug; created when missing")
        parser.add_argument("--runs", type=int, required=True)
        parser.add_argument("--into-existing", action="store_true",
                            help="add to an existing workspace (its record keeps these runs for good)")

    def handle(self, *args, workspace, runs, into_existing, **options):
        if runs < 1:
            raise CommandError("--runs must be at least 1")
        started = time.perf_counter()

        def progress(made):
            if options["verbosity"] > 1 or made == runs:
                self.stderr.write(f"{made}/{runs} runs ({time.perf_counter() - started:.1f} s)")

        try:
            ws, made = seed_history(workspace, runs, into_existing=into_existing, progress=progress)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"Seeded {made} runs into {ws.slug} in {time.perf_counter() - started:.1f} s")
