"""The saved tasks' tests again on PostgreSQL: its case-insensitive, per-kind name constraints
(expression indexes with a condition) and a clash caught inside the transaction that saves."""
from __future__ import annotations

import pytest

from tests.site.postgres_child import IN_CHILD, run_on_postgres


@pytest.mark.skipif(IN_CHILD, reason="already the PostgreSQL run")
def test_saved_tasks_hold_on_postgresql_too():
    run_on_postgres(["tests/site/test_saved_tasks.py"], "beyond_savedtasks")
