"""Benchmark the context assembly on a large workspace.

Builds a workspace of 1,000 documents (~50 MB of text, generated deterministically), then runs N
runs' context assembly and prints the assembly time per run (mean, p95), the bytes the recorder
stores per run (Blob growth through store_context of the planner and executor messages, documents
unchanged) and the total database size.

    .venv/bin/python bench/context_assembly.py                   # throw-away SQLite in a temp dir
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/beyond_bench .venv/bin/python bench/context_assembly.py
Options: --docs N --kb-per-doc K --runs N --budget TOKENS
"""
from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TOPICS = {
    "backup": "backup restore retention offsite snapshot recovery copies tested schedule encrypted",
    "access": "access account password privilege review joiner leaver authentication role approval",
    "supplier": "supplier contract processor outsourcing agreement due diligence vendor onboarding",
    "incident": "incident breach notification escalation forensic response containment lessons",
    "asset": "asset inventory owner laptop server classification disposal register tagging",
    "privacy": "personal data processing lawful basis consent subject rights retention controller",
    "network": "network firewall segmentation vpn wireless monitoring intrusion router switch",
    "training": "training awareness phishing induction course completion staff refresher",
}
FILLER = ("the of and to in a is that for on with as by this be are from at or an it which policy "
          "procedure clinic staff manager team system record review annual month quarter report").split()
TASKS = [
    "Draft a backup and restore procedure with offsite retention",
    "Write an access review procedure for privileged accounts",
    "Prepare a supplier due diligence checklist for processors",
    "Draft an incident response and breach notification plan",
    "Write an asset inventory and disposal policy",
]


def document_text(n: int, size: int) -> str:
    rng = random.Random(n)
    topic = list(TOPICS)[n % len(TOPICS)]
    words = TOPICS[topic].split()
    paragraphs, length = [f"# {topic.title()} document {n}"], 0
    while length < size:
        sentence_words = [rng.choice(words) if rng.random() < 0.3 else rng.choice(FILLER) for _ in range(80)]
        paragraph = " ".join(sentence_words).capitalize() + "."
        paragraphs.append(paragraph)
        length += len(paragraph) + 2
    return "\n\n".join(paragraphs)


def setup_django(db_dir: Path) -> None:
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{db_dir / 'bench.sqlite3'}")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "beyond_site.settings")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-" + "x" * 40)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def database_size() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT pg_database_size(current_database())")
            return cursor.fetchone()[0]
        cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        cursor.execute("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()")
        return cursor.fetchone()[0]


def refresh_statistics() -> None:
    """What autovacuum (PostgreSQL) or `PRAGMA optimize` (SQLite) does after a bulk load. Without
    statistics PostgreSQL believes the workspace has one document and plans a nested loop."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def stored_bytes() -> int:
    from django.db.models import Sum

    from beyond_site.workspaces.models import Blob

    return Blob.objects.aggregate(total=Sum("size"))["total"] or 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--kb-per-doc", type=int, default=50)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--budget", type=int, default=None, help="tokens (default: BEYOND_CONTEXT_BUDGET_TOKENS)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="beyond-bench-") as tmp:
        setup_django(Path(tmp))
        from django.conf import settings

        from beyond_site.runs.contexts import store_context
        from beyond_site.runs.queue import start_run
        from beyond_site.workspaces import configuration
        from beyond_site.workspaces import knowledge
        from beyond_site.runs.context import assemble_context
        from beyond_site.workspaces.models import Workspace
        from pipeline.requests import build_executor_request, build_planner_request
        from pipeline.schemas import Brief
        from pipeline.topology import parse_shorthand

        settings.BEYOND_MAX_WORKSPACE_BYTES = 10 * 1024 ** 3
        budget = args.budget or settings.BEYOND_CONTEXT_BUDGET_TOKENS
        Workspace.objects.filter(slug="bench").delete()
        workspace, _ = configuration.create_workspace("bench", "Bench Clinics")
        knowledge.add_memory(workspace, "Bench Clinics runs three clinics in Lyon.")
        started = time.perf_counter()
        total_text = 0
        for n in range(args.docs):
            text = document_text(n, args.kb_per_doc * 1000)
            total_text += len(text.encode())
            knowledge.add_document(workspace, f"doc-{n:04d}.md", text.encode())
        build_s = time.perf_counter() - started
        refresh_statistics()
        print(f"workspace: {args.docs} documents, {total_text / 1e6:.1f} MB of text, built in {build_s:.1f} s "
              f"({settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]})")

        topology = parse_shorthand("offline")
        brief = Brief.model_validate({"task": "t", "judgments": ["j"], "citations": [], "steps": [
            {"index": 1, "title": "One", "content_spec": "Deliver one."},
            {"index": 2, "title": "Two", "content_spec": "Deliver two."}]})
        timings, growth = [], []
        for n in range(args.runs):
            task = TASKS[n % len(TASKS)]
            if n == args.runs // 2:
                knowledge.add_memory(workspace, "A fact added mid-benchmark: backups are tested monthly.")
            run, _ = start_run(workspace, task, topology=topology)
            t0 = time.perf_counter()
            ctx = assemble_context(run, budget=budget)
            timings.append(time.perf_counter() - t0)
            before = stored_bytes()
            store_context(build_planner_request(ctx, topology.planner).messages)
            for index in (1, 2):
                store_context(build_executor_request(ctx, brief, index, topology.executor).messages)
            growth.append(stored_bytes() - before)
        first_time = growth[:len(TASKS)]
        repeats = growth[len(TASKS):]
        p95 = sorted(timings)[math.ceil(0.95 * len(timings)) - 1]  # nearest rank
        print(f"assembly: {args.runs} runs, budget {budget} tokens, mean {statistics.mean(timings) * 1000:.0f} ms, "
              f"p95 {p95 * 1000:.0f} ms, max {max(timings) * 1000:.0f} ms")
        print(f"context size: {len(ctx.files)} documents or excerpts, {len(ctx.frameworks)} framework entries, "
              f"notes: {'; '.join(ctx.notes) or '-'}")
        print(f"stored per run (Blob growth, planner + 2 executor calls): first run of each task "
              f"mean {statistics.mean(first_time) / 1000:.1f} kB; repeated tasks mean "
              f"{(statistics.mean(repeats) if repeats else 0) / 1000:.1f} kB (max {max(repeats or [0]) / 1000:.1f} kB, "
              f"a memory was added before run {args.runs // 2 + 1})")
        print(f"database size: {database_size() / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
