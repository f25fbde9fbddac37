"""Changes made at once in one workspace do not fork its change log: each waits for the lock on
the workspace row, so the numbers stay gap-free and every link verifies (run on PostgreSQL too, by
test_change_log_postgres.py)."""
from __future__ import annotations

import threading

import pytest
from django.db import connection

from beyond_site.workspaces import configuration
from beyond_site.workspaces.changelog import record_change, verify_changes
from beyond_site.workspaces.models import Workspace, WorkspaceEvent

pytestmark = [pytest.mark.django_db(transaction=True)]

THREADS, EACH = 6, 5


def at_once(change) -> None:
    """Call change(n, i) EACH times from THREADS threads started together; fail on any error."""
    start, errors = threading.Barrier(THREADS), []

    def work(n: int) -> None:
        try:
            start.wait()
            for i in range(EACH):
                change(n, i)
        except Exception as exc:  # the test fails below with what went wrong
            errors.append(repr(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []


def test_rows_recorded_at_once_take_the_next_numbers_in_turn():
    """record_change alone (no lock taken by its caller) still numbers rows one after the other."""
    acme = Workspace.objects.create(slug="acme", name="Acme")
    at_once(lambda n, i: record_change(acme, None, "workspace_renamed", before=f"{n}.{i}", after=f"{n}.{i + 1}"))
    seqs = list(WorkspaceEvent.objects.filter(workspace=acme).order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, THREADS * EACH + 1))
    assert verify_changes(acme) == []


def test_concurrent_changes_in_one_workspace_form_one_chain():
    acme = Workspace.objects.create(slug="acme", name="Acme")
    at_once(lambda n, i: configuration.set_budget(acme, {"max_tokens_per_run": 1000 * n + i + 1}))
    seqs = list(WorkspaceEvent.objects.filter(workspace=acme).order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, THREADS * EACH + 1))
    assert verify_changes(acme) == []
    # Each row's "before" is the value the row before it left: no change was lost between two others.
    rows = list(WorkspaceEvent.objects.filter(workspace=acme).order_by("seq"))
    for earlier, later in zip(rows, rows[1:]):
        assert later.before == earlier.after
