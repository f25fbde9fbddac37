"""The change log's tests again on PostgreSQL, where concurrent transactions really overlap (the
lock on the workspace row is what keeps the chain from forking) and JSON is stored as jsonb (the
hashes must still verify on the values read back)."""
from __future__ import annotations

import pytest

from tests.site.postgres_child import IN_CHILD, run_on_postgres


@pytest.mark.skipif(IN_CHILD, reason="already the PostgreSQL run")
def test_the_change_log_holds_on_postgresql_too():
    run_on_postgres(["tests/site/test_change_log.py", "tests/site/test_change_log_concurrency.py",
                     "tests/site/test_change_log_page.py", "tests/site/test_change_log_migration.py"],
                    "beyond_changelog")
