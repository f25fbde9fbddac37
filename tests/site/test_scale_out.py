"""The scaled mode with real parts: PostgreSQL, Redis, two `manage.py beyond_worker` processes.

Django's settings are fixed when it starts, so the scaled-mode tests (tests/site/scale_out_child.py)
run in a child pytest with DATABASE_URL on a fresh PostgreSQL database named after this process,
REDIS_URL on Redis with a channel-layer prefix of this run's own, and BEYOND_RUN_IN_PROCESS=false.
The child starts the workers. Everything is removed at the end: the child's process group (so no
worker outlives a crash or a timeout), the database, and this run's Redis keys, none other.
Fails, never skips, when PostgreSQL or Redis does not answer: every Beyond machine runs both
(`make services` starts them). By hand:
    .venv/bin/python -m pytest -q -s tests/site/test_scale_out.py
"""
from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
POSTGRES = os.getenv("BEYOND_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
REDIS = os.getenv("BEYOND_TEST_REDIS_URL", "redis://127.0.0.1:6379/9")
CHILD = "tests/site/scale_out_child.py"
TIMEOUT_S = 400  # the child takes about 120 s


def _postgres(database: str = "postgres", autocommit: bool = False):
    import psycopg

    url = POSTGRES.rsplit("/", 1)[0].replace("postgres://", "postgresql://") + "/" + database
    return psycopg.connect(url, connect_timeout=3, autocommit=autocommit)


def _redis():
    import redis

    return redis.Redis.from_url(REDIS, socket_timeout=3, socket_connect_timeout=3)


def _answers(check) -> str | None:
    try:
        check()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _drop_database(name: str) -> None:
    with _postgres(autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _delete_keys(prefix: str) -> None:
    client = _redis()
    try:
        for key in client.scan_iter(match=f"{prefix}*", count=500):
            client.delete(key)
    finally:
        client.close()


def test_two_workers_share_runs_on_postgresql_and_redis_and_survive_a_kill():
    problem = _answers(lambda: _postgres().close())
    if problem:
        pytest.fail(f"no PostgreSQL at {POSTGRES} ({problem}): every Beyond machine runs one (`make services`)")
    problem = _answers(lambda: _redis().ping())
    if problem:
        pytest.fail(f"no Redis at {REDIS} ({problem}): every Beyond machine runs one (`make services`)")

    name = f"beyond_scale_{os.getpid()}"
    prefix = f"beyond_scale_{os.getpid()}_{secrets.token_hex(4)}_"
    env = {**os.environ, "DATABASE_URL": POSTGRES.rsplit("/", 1)[0] + "/" + name, "REDIS_URL": REDIS,
           "BEYOND_RUN_IN_PROCESS": "false", "DJANGO_SETTINGS_MODULE": "tests.site.scale_out_settings",
           "BEYOND_TEST_CHANNEL_PREFIX": prefix}
    child = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:randomly", "--ds=tests.site.scale_out_settings",
         CHILD], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True)  # its own process group: the workers it starts are in it too
    try:
        out, _ = child.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        out, _ = child.communicate(timeout=10)
        pytest.fail(f"the scale-out tests took more than {TIMEOUT_S} s:\n{out[-6000:]}")
    finally:
        if child.returncode != 0:  # a failed or interrupted child may have left workers behind
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            child.wait(timeout=10)
        _drop_database(f"test_{name}")  # pytest-django's test database (normally dropped already)
        _drop_database(name)
        _delete_keys(prefix)
    last = out.strip().splitlines()[-1] if out.strip() else ""
    assert child.returncode == 0, out[-6000:]
    assert "13 passed" in last and "skipped" not in last and "error" not in last, out[-3000:]
    print("".join(line + "\n" for line in out.splitlines() if line.startswith("scale-out")))
