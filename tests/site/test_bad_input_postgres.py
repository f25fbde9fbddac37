"""The bad-input tests and the fuzz test again on PostgreSQL, which refuses NUL characters in text
with a DataError where SQLite stores them: there a NUL that reached the database was a 500."""
from __future__ import annotations

import pytest

from tests.site.postgres_child import IN_CHILD, run_on_postgres


@pytest.mark.skipif(IN_CHILD, reason="already the PostgreSQL run")
def test_bad_input_is_a_400_on_postgresql_too():
    run_on_postgres(["tests/site/test_bad_input.py", "tests/site/test_bad_ids.py"], "beyond_badinput")
