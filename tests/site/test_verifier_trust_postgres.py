"""The verifier trust status on PostgreSQL: the reports are found by JSON lookups into their
topology (jsonb there, text in SQLite), and the snapshot is held to its chained event."""
from __future__ import annotations

import pytest

from tests.site.postgres_child import IN_CHILD, run_on_postgres


@pytest.mark.skipif(IN_CHILD, reason="already the PostgreSQL run")
def test_the_trust_status_is_found_and_chained_the_same_on_postgresql():
    run_on_postgres(["tests/site/test_verifier_trust.py"], "beyond_trust")
