"""A real Beyond server for the API tests: daphne on a free port, on a file SQLite database or on a
PostgreSQL database made for it, seeded by tests/api/seed_api.py (people and tokens of every kind)."""
from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg

from tests.servers import Daphne, run_script, server_env

#: Where a PostgreSQL answers (every Beyond machine runs one: `make services` starts it).
POSTGRES = os.getenv("BEYOND_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")


@dataclass
class Live:
    base: str
    env: dict
    tokens: dict[str, str]

    def client(self, who: str | None = "member", **options) -> httpx.Client:
        """An httpx client of the API as `who` (a token of seed_api.py; None: no token)."""
        headers = {"Authorization": f"Bearer {self.tokens[who]}"} if who else {}
        return httpx.Client(base_url=f"{self.base}/api/v1", headers=headers, timeout=60, **options)


@contextlib.contextmanager
def postgres_database(name: str):
    """A new, empty PostgreSQL database `name`_<pid>, dropped afterwards: its URL."""
    database = f"{name}_{os.getpid()}"
    admin = POSTGRES.replace("postgres://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{database}"')
    try:
        yield POSTGRES.rsplit("/", 1)[0] + f"/{database}"
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


@contextlib.contextmanager
def live_server(tmp: Path, *, database_url: str | None = None, **settings: str):
    """A migrated, seeded server; `settings` are environment variables it starts with."""
    env = server_env(tmp / "db.sqlite3")
    if database_url:
        env["DATABASE_URL"] = database_url
    env.update(settings)
    run_script(env, "manage.py", "migrate", "--noinput", "-v0")
    run_script(env, "manage.py", "collectstatic", "--noinput", "-v0")
    tokens = json.loads(run_script(env, "tests/api/seed_api.py"))
    daphne = Daphne(env, tmp / "daphne.log").start()
    try:
        yield Live(daphne.base, env, tokens)
    finally:
        daphne.stop()
