"""The auditors' run history at scale: the list, a filtered list, a run page and the usage report over 100,000 runs.

    .venv/bin/python bench/audit_history.py [--db sqlite|postgres] [--runs 100000] [--repeat 7] [--fresh]

Seeds a workspace with `--runs` finished runs (bench/history_seed.py) in a database kept
between invocations (a file in the temp folder for SQLite, database `beyond_audit_history` on the
PostgreSQL server at 127.0.0.1:5432), or reuses it when it already holds them; `--fresh` starts
over. Then, in one process, an auditor requests each page `--repeat` times through Django's test
client (middleware, view, template: everything but the network) and the median time and the
number of queries are printed. The target: each page under 200 ms on PostgreSQL, and a query
count that does not grow with the history.
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
SLUG = "history"
PG_DATABASE = "beyond_audit_history"

SEED = r"""
import sys, time
from bench.history_seed import seed_history
started, runs = time.perf_counter(), RUNS_VALUE
ws, made = seed_history(SLUG_VALUE, runs, progress=lambda made: print(
    f"{made}/{runs} runs ({time.perf_counter() - started:.1f} s)", file=sys.stderr, flush=True))
print(f"Seeded {made} runs into {ws.slug} in {time.perf_counter() - started:.1f} s")
"""

CHILD = r"""
import datetime, json, statistics, sys, time
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from beyond_site.runs.models import Run
from beyond_site.workspaces.models import Membership, Workspace

slug, repeat = SLUG_VALUE, REPEAT_VALUE
workspace = Workspace.objects.get(slug=slug)
user, _ = get_user_model().objects.get_or_create(username="bench-auditor")
Membership.objects.get_or_create(user=user, workspace=workspace, defaults={"role": Membership.AUDITOR})
with connection.cursor() as cursor:
    # Statistics (and on PostgreSQL the visibility map), as a table in steady use has them:
    # a bulk-loaded one has neither until autovacuum passes.
    cursor.execute("VACUUM ANALYZE" if connection.vendor == "postgresql" else "ANALYZE")
client = Client()
client.force_login(user)
runs = Run.objects.filter(workspace=workspace)
total = runs.count()
# A run with a re-render and several steps: the detail page at its fullest.
detail = runs.filter(steps__attempts__attempt=2).order_by("-id").values_list("pk", flat=True).first()
newest = runs.order_by("-created_at").values_list("created_at", flat=True).first()
day = newest.date().isoformat()
month_ago = (newest.date() - datetime.timedelta(days=30)).isoformat()
pages = {
    "list, page 1": f"/w/{slug}/audit/",
    "list, page 1000": f"/w/{slug}/audit/?page=1000",
    "filtered: status + text": f"/w/{slug}/audit/?status=completed&q=incident",
    "filtered: status + dates": f"/w/{slug}/audit/?status=halted&date_from={month_ago}&date_to={day}",
    "filtered: badge": f"/w/{slug}/audit/?badge=warning",
    "run detail": f"/w/{slug}/audit/runs/{detail}/",
    "usage, default range": f"/w/{slug}/audit/usage/",
    "usage, last 30 days": f"/w/{slug}/audit/usage/?date_from={month_ago}&date_to={day}",
}
out = {"runs": total, "vendor": connection.vendor, "pages": {}}
for name, url in pages.items():
    times, queries = [], None
    client.get(url)  # warm: templates compiled, pool filled
    for _ in range(repeat):
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            response = client.get(url)
            times.append(time.perf_counter() - started)
        assert response.status_code == 200, (url, response.status_code)
        queries = len(captured.captured_queries)
    out["pages"][name] = {"url": url, "median_ms": statistics.median(times) * 1000, "queries": queries}
print(json.dumps(out))
"""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--fresh", action="store_true", help="drop the kept database and seed again")
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    args = parser.parse_args()
    env = {**os.environ, "DJANGO_SECRET_KEY": "bench-" + "x" * 40, "DJANGO_SETTINGS_MODULE": "beyond_site.settings",
           "BEYOND_LOG_LEVEL": "WARNING", "DJANGO_DEBUG": "false", "DJANGO_ALLOWED_HOSTS": "testserver"}
    env.pop("REDIS_URL", None)
    if args.db == "sqlite":
        path = Path(tempfile.gettempdir()) / "beyond-audit-history.sqlite3"
        if args.fresh:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        env["DATABASE_URL"] = f"sqlite:///{path}"
    else:
        admin = f"{args.postgres}/postgres"
        if args.fresh:
            subprocess.run(["psql", admin, "-qc", f"DROP DATABASE IF EXISTS {PG_DATABASE} WITH (FORCE)"], check=True)
        exists = subprocess.run(["psql", admin, "-tAc", f"SELECT 1 FROM pg_database WHERE datname = '{PG_DATABASE}'"],
                                capture_output=True, text=True, check=True).stdout.strip()
        if not exists:
            subprocess.run(["psql", admin, "-qc", f"CREATE DATABASE {PG_DATABASE}"], check=True)
        env["DATABASE_URL"] = f"{args.postgres}/{PG_DATABASE}"
    manage = dict(cwd=ROOT, env=env, check=True)
    subprocess.run([PY, "manage.py", "migrate", "--noinput", "-v0"], **manage)
    held = subprocess.run([PY, "manage.py", "shell", "-v", "0", "-c",
                           "from beyond_site.runs.models import Run; "
                           f"print(Run.objects.filter(workspace__slug={SLUG!r}).count())"],
                          capture_output=True, text=True, **manage).stdout.strip().splitlines()[-1]
    if int(held) < args.runs:
        if int(held):
            raise SystemExit(f"workspace {SLUG!r} holds {held} runs, fewer than {args.runs}: run again with --fresh")
        seed = SEED.replace("SLUG_VALUE", repr(SLUG)).replace("RUNS_VALUE", repr(args.runs))
        subprocess.run([PY, "manage.py", "shell", "-v", "0", "-c", seed], **manage)
    child = CHILD.replace("SLUG_VALUE", repr(SLUG)).replace("REPEAT_VALUE", repr(args.repeat))
    done = subprocess.run([PY, "manage.py", "shell", "-v", "0", "-c", child], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    result = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"{result['runs']} runs in one workspace · {result['vendor']} · median of {args.repeat} requests")
    for name, page in result["pages"].items():
        print(f"{name:28} {page['median_ms']:8.1f} ms  {page['queries']:3d} queries   {page['url']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
