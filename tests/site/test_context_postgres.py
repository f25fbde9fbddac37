"""The context tests again, on PostgreSQL (full-text search through ts_rank and a GIN index).

The PostgreSQL run is a child `pytest` process (tests/site/postgres_child.py); it fails when no
PostgreSQL answers. Same thing by hand:
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/beyond .venv/bin/python -m pytest -q \
        tests/site/test_context_budget.py tests/site/test_context_markers.py tests/site/test_context_storage.py
"""
from __future__ import annotations

import pytest

from tests.site.postgres_child import IN_CHILD, run_on_postgres

MODULES = ["tests/site/test_context_budget.py", "tests/site/test_context_markers.py",
           "tests/site/test_context_storage.py"]


@pytest.mark.skipif(IN_CHILD, reason="already the PostgreSQL run")
def test_it_passes_the_context_tests_on_postgresql():
    run_on_postgres(MODULES, "beyond_ctx")
