"""The API under a schema-driven fuzzer nobody here wrote (Schemathesis), against a real server on
SQLite and on PostgreSQL: every phase (the schema's own examples, its boundaries, random and
invalid data, and stateful sequences that follow the document's links from a started run or an
uploaded file to what comes next), every check (no 5xx, every answer as documented: status, media
type, headers and body; invalid requests refused, valid ones accepted; authentication not ignored).
The one exception is in schemathesis.toml, with its reason. A failure prints Schemathesis' report:
its seed and a curl line reproduce it."""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.api.live import live_server, postgres_database

HERE = Path(__file__).resolve().parent
SCHEMATHESIS = str(Path(sys.executable).parent / "schemathesis")
#: Cases per operation and phase: about a minute per database on two cores.
EXAMPLES = 25
#: The same cases on every run, so that CI is repeatable; set BEYOND_FUZZ_SEED to explore others
#: (a failure's report prints the seed that found it).
SEED = os.environ.get("BEYOND_FUZZ_SEED", "20261205")


@contextlib.contextmanager
def database(kind: str):
    if kind == "sqlite":
        yield None
    else:
        with postgres_database("beyond_api_fuzz") as url:
            yield url


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_no_answer_breaks_the_schema_or_the_server(kind, tmp_path):
    with database(kind) as url, live_server(tmp_path, database_url=url, BEYOND_API_RATE="1000000/min") as live:
        done = subprocess.run([SCHEMATHESIS, "--config-file", str(HERE / "schemathesis.toml"), "run",
                               f"{live.base}/api/v1/openapi.json", "--checks", "all",
                               "-H", f"Authorization: Bearer {live.tokens['admin']}",
                               "--max-examples", str(EXAMPLES), "--seed", SEED, "--no-color"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-3000:]
        assert "Stateful" in done.stdout and " passed" in done.stdout
