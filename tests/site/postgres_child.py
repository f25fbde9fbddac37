"""Run test modules again on PostgreSQL, in a child `pytest` process.

pytest-django builds its test database from settings.DATABASES, fixed when Django starts, so a
PostgreSQL run is a child process with DATABASE_URL pointing at PostgreSQL (its test database gets
a per-process name, so parallel runs do not collide). It fails, never skips, when no PostgreSQL
answers at BEYOND_TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres): every
Beyond machine runs one (`make services` starts it).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVER = os.getenv("BEYOND_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
#: Set in the child: the module that starts it must not start another.
IN_CHILD = os.getenv("BEYOND_IN_POSTGRES_CHILD") == "1"


def postgres_answers() -> bool:
    try:
        import psycopg

        with psycopg.connect(SERVER.replace("postgres://", "postgresql://"), connect_timeout=3):
            return True
    except Exception:
        return False


def run_on_postgres(modules: list[str], database: str) -> None:
    """Run `modules` on a PostgreSQL database named `database`_<pid>; fail unless all of them pass."""
    if not postgres_answers():
        pytest.fail(f"no PostgreSQL at {SERVER}: every Beyond machine runs one (`make services` starts it)")
    url = SERVER.rsplit("/", 1)[0] + f"/{database}_{os.getpid()}"
    env = {**os.environ, "DATABASE_URL": url, "BEYOND_IN_POSTGRES_CHILD": "1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", *modules],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "skipped" not in done.stdout.splitlines()[-1]
