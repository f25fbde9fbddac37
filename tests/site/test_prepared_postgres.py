"""The prepared-query tests again on PostgreSQL: psycopg binds and converts its own way (jsonb,
timestamps with their zone, booleans), and a locking read really says FOR UPDATE there."""
from __future__ import annotations

import pytest

from tests.site.postgres_child import IN_CHILD, run_on_postgres


@pytest.mark.skipif(IN_CHILD, reason="already the PostgreSQL run")
def test_prepared_queries_answer_as_the_orm_does_on_postgresql():
    run_on_postgres(["tests/site/test_prepared.py"], "beyond_prepared")
