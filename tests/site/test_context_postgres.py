"""The context tests again, on PostgreSQL (full-text search through ts_rank and a GIN index).

pytest-django builds its test database from settings.DATABASES, fixed when Django starts, so the
PostgreSQL run is a child `pytest` process with DATABASE_URL pointing at PostgreSQL (its test
database gets a per-process name, so parallel runs do not collide). Fails when no PostgreSQL
answers at BEYOND_TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres).
Same thing by hand:
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/beyond .venv/bin/python -m pytest -q \
        tests/site/test_context_budget.py tests/site/test_context_markers.py tests/site/test_context_storage.py
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVER = os.getenv("BEYOND_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
MODULES = ["tests/site/test_context_budget.py", "tests/site/test_context_markers.py",
           "tests/site/test_context_storage.py"]


def _postgres_answers() -> bool:
    try:
        import psycopg

        with psycopg.connect(SERVER.replace("postgres://", "postgresql://"), connect_timeout=3):
            return True
    except Exception:
        return False


@pytest.mark.skipif(os.getenv("BEYOND_IN_POSTGRES_CHILD") == "1", reason="already the PostgreSQL run")
def test_it_passes_the_context_tests_on_postgresql():
    if not _postgres_answers():
        pytest.fail(f"no PostgreSQL at {SERVER}: every Beyond machine runs one (`make services` starts it)")
    database = SERVER.rsplit("/", 1)[0] + f"/beyond_ctx_{os.getpid()}"
    env = {**os.environ, "DATABASE_URL": database, "BEYOND_IN_POSTGRES_CHILD": "1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", *MODULES],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "skipped" not in done.stdout.splitlines()[-1]
