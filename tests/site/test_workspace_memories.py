"""Memories: short workspace facts, edited and deleted with who and when on record."""
from __future__ import annotations

import pytest

from beyond_site.workspaces import knowledge
from beyond_site.workspaces.models import Memory, WorkspaceEvent

pytestmark = pytest.mark.django_db


def test_it_records_who_created_and_who_edited_a_memory(workspace, alice, bob):
    memory = knowledge.add_memory(workspace, "  Acme has 40 staff.  ", user=alice)
    assert memory.text == "Acme has 40 staff." and memory.created_by == alice
    knowledge.edit_memory(memory, "Acme has 45 staff.", user=bob)
    memory.refresh_from_db()
    assert memory.text == "Acme has 45 staff."
    assert memory.created_by == alice and memory.updated_by == bob and memory.updated_at >= memory.created_at
    event = WorkspaceEvent.objects.get(action="memory_edited")
    assert event.user == bob and event.detail == {"memory": memory.pk}
    assert (event.before, event.after) == ("Acme has 40 staff.", "Acme has 45 staff.")


def test_it_refuses_an_empty_or_overlong_edit_and_keeps_the_memory(workspace, alice):
    memory = knowledge.add_memory(workspace, "Scope: the Lyon clinics.", user=alice)
    for bad in ("   ", "x" * 4001):
        with pytest.raises(ValueError):
            knowledge.edit_memory(memory, bad, user=alice)
    memory.refresh_from_db()
    assert memory.text == "Scope: the Lyon clinics."
    assert list(WorkspaceEvent.objects.values_list("action", flat=True)) == ["memory_added"]  # no edit logged


def test_adding_a_memory_is_on_record_once(workspace, alice):
    memory = knowledge.add_memory(workspace, "  Acme runs three clinics.  ", user=alice)
    again = knowledge.add_memory(workspace, "Acme runs three clinics.", user=alice)  # already known
    assert again == memory
    [event] = WorkspaceEvent.objects.filter(action="memory_added")
    assert event.user == alice and event.after == "Acme runs three clinics." and event.detail == {"memory": memory.pk}
    assert event.before is None


def test_it_deletes_a_memory_and_keeps_a_record_of_who_did(workspace, alice):
    memory = knowledge.add_memory(workspace, "Obsolete fact.", user=alice)
    knowledge.delete_memory(memory, user=alice)
    assert not Memory.objects.exists()
    event = WorkspaceEvent.objects.get(action="memory_deleted")
    assert event.user == alice and event.before == "Obsolete fact." and event.at is not None


def test_adding_the_same_memory_twice_keeps_one(workspace):
    assert knowledge.add_memory(workspace, "One fact.").pk == knowledge.add_memory(workspace, "One fact.").pk
