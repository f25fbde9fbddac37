"""`one_or_none`: the row a unique key finds, without the ORDER BY `.first()` would add."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from beyond_site.lib.queries import one_or_none
from beyond_site.workspaces.models import Workspace

pytestmark = pytest.mark.django_db


def test_it_finds_the_row_or_none_without_ordering():
    acme = Workspace.objects.create(slug="acme", name="Acme")
    with CaptureQueriesContext(connection) as queries:
        assert one_or_none(Workspace.objects.filter(slug="acme")) == acme
        assert one_or_none(Workspace.objects.filter(slug="nobody")) is None
    assert [("ORDER BY" in q["sql"], "LIMIT 1" in q["sql"]) for q in queries.captured_queries] == [(False, True)] * 2
    with CaptureQueriesContext(connection) as first:
        Workspace.objects.filter(slug="acme").first()
    assert "ORDER BY" in first.captured_queries[0]["sql"]  # what it saves
