"""The tamper-evidence tests again on PostgreSQL: jsonb gives numbers and key order back its own
way, timestamps keep microseconds, and runs finishing at once in parallel really race there."""
from __future__ import annotations

import pytest

from tests.site.postgres_child import IN_CHILD, run_on_postgres


@pytest.mark.skipif(IN_CHILD, reason="already the PostgreSQL run")
def test_the_record_verifies_and_breaks_the_same_on_postgresql():
    run_on_postgres(["tests/site/test_tamper_evidence.py", "tests/site/test_tamper_evidence_who.py"], "beyond_chains")
