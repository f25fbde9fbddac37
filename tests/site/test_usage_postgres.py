"""The usage tests again on PostgreSQL: month truncation and grouped sums are the database's own."""
from __future__ import annotations

import pytest

from tests.site.postgres_child import IN_CHILD, run_on_postgres


@pytest.mark.skipif(IN_CHILD, reason="already the PostgreSQL run")
def test_usage_adds_up_on_postgresql_too():
    run_on_postgres(["tests/site/test_usage.py"], "beyond_usage")
