"""Who checked, declined runs and whole warning counts again on PostgreSQL: jsonb compares the
empty lists the warnings filter asks about its own way, and the record's chain must hold there too."""
from __future__ import annotations

import pytest

from tests.site.postgres_child import IN_CHILD, run_on_postgres


@pytest.mark.skipif(IN_CHILD, reason="already the PostgreSQL run")
def test_who_checked_declining_and_warnings_hold_on_postgresql():
    run_on_postgres(["tests/site/test_who_checked.py", "tests/site/test_declined_runs.py",
                     "tests/site/test_run_warnings.py"], "beyond_honesty")
