"""Workspace files: accepted, deduplicated, indexed, deleted; every refusal leaves the workspace as it was."""
from __future__ import annotations

import hashlib

import pytest
from django.core.management import CommandError, call_command

from beyond_site.workspaces import knowledge, originals, reading
from beyond_site.workspaces.models import Document, DocumentChunk, Workspace, WorkspaceEvent
from tests.site.context_support import ON_TOPIC, paragraphs, workspace_state
from tests.site.test_extraction import DOCX_SKELETON, PNG, make_pdf, make_zip

pytestmark = pytest.mark.django_db

MiB = 1024 * 1024


@pytest.fixture
def workspace():
    workspace = Workspace.objects.create(slug="acme", name="Acme")
    knowledge.add_memory(workspace, "Acme runs three clinics.")
    knowledge.add_document(workspace, "existing.md", b"# Existing\n\nAlready here.")
    return workspace


def bad_inputs(settings):
    """(name, bytes, expected code) for every kind of refusal; caps lowered through settings."""
    settings.BEYOND_MAX_FILE_BYTES = 64 * 1024
    return [
        ("huge.txt", b"a" * (65 * 1024), "too_large"),
        ("picture.txt", PNG, "unsupported_type"),
        ("locked.pdf", make_pdf("secret", encrypt=True), "encrypted_pdf"),
        ("broken.pdf", b"%PDF-1.4\n" + b"\x00garbage" * 100, "corrupt"),
        ("bomb.docx", make_zip({**DOCX_SKELETON, "word/media/zeros.bin": bytes(50 * 1000 * 1000)}), "zip_bomb"),
        ("blank.txt", b"   \n\n\t  \n", "empty_text"),
        ("scan.pdf", make_pdf(None), "empty_text"),
    ]


CASES = ["too_large", "unsupported_type", "encrypted_pdf", "corrupt", "zip_bomb", "empty_text", "empty_pdf"]


def case(settings, which: str):
    cases = bad_inputs(settings)
    return cases[CASES.index(which)]


@pytest.mark.parametrize("which", CASES)
def test_it_refuses_bad_input_through_the_service_and_changes_nothing(workspace, settings, which):
    name, data, code = case(settings, which)
    before = workspace_state(workspace)
    with pytest.raises(knowledge.DocumentRefused) as caught:
        knowledge.add_document(workspace, name, data)
    assert caught.value.code == code
    assert str(caught.value).startswith(f"{name}: ")
    assert workspace_state(workspace) == before


@pytest.mark.parametrize("which", CASES)
def test_it_refuses_bad_input_through_the_command_with_a_clear_message(workspace, settings, tmp_path, which):
    name, data, _ = case(settings, which)
    path = tmp_path / name
    path.write_bytes(data)
    before = workspace_state(workspace)
    with pytest.raises(CommandError) as caught:
        call_command("beyond_workspace", "add-file", "acme", str(path))
    message = str(caught.value)
    assert message.startswith(f"{name}: ") and "Traceback" not in message
    assert workspace_state(workspace) == before


def test_it_refuses_a_file_that_would_overflow_the_workspace(workspace, settings):
    settings.BEYOND_MAX_WORKSPACE_BYTES = Document.objects.get().size + 100
    before = workspace_state(workspace)
    with pytest.raises(knowledge.DocumentRefused) as caught:
        knowledge.add_document(workspace, "more.txt", b"x " * 200)
    assert caught.value.code == "workspace_full"
    assert workspace_state(workspace) == before
    # Nothing is left behind: the refused file's stored original is gone, the workspace's own kept.
    assert not originals.exists(hashlib.sha256(b"x " * 200).hexdigest())
    assert originals.exists(Document.objects.get().sha256)


def test_a_failure_while_indexing_rolls_the_whole_file_back(workspace, monkeypatch):
    def explode(text):
        raise RuntimeError("disk full")

    monkeypatch.setattr(reading, "split_into_chunks", explode)
    before = workspace_state(workspace)
    with pytest.raises(RuntimeError):
        knowledge.add_document(workspace, "new.md", b"Brand new text.")
    assert workspace_state(workspace) == before


def test_it_deduplicates_by_hash_within_a_workspace(workspace):
    first, created = knowledge.add_document(workspace, "a.md", b"Same bytes.")
    again, created_again = knowledge.add_document(workspace, "b.md", b"Same bytes.")
    assert created and not created_again and again.pk == first.pk
    other = Workspace.objects.create(slug="other", name="Other")
    elsewhere, created_elsewhere = knowledge.add_document(other, "a.md", b"Same bytes.")
    assert created_elsewhere and elsewhere.pk != first.pk
    assert originals.exists(first.sha256)  # the original bytes stored once, by their hash


def test_an_added_file_is_on_record_once_and_a_refused_one_not_at_all(workspace, alice, monkeypatch):
    logged = WorkspaceEvent.objects.count()
    first, _ = knowledge.add_document(workspace, "policy.md", b"Access control policy.", user=alice)
    knowledge.add_document(workspace, "copy.md", b"Access control policy.", user=alice)  # the same bytes
    [event] = WorkspaceEvent.objects.filter(action="document_added", seq__gt=logged)
    assert event.user == alice and event.detail == {"name": "policy.md", "sha256": first.sha256,
                                                    "size": first.size, "conversation": None,
                                                    "document": first.pk}
    monkeypatch.setattr(reading, "split_into_chunks", lambda text: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        knowledge.add_document(workspace, "new.md", b"Brand new text.", user=alice)
    assert WorkspaceEvent.objects.count() == logged + 1  # the failed file's record rolled back with it


def test_it_indexes_a_document_in_stable_chunks(workspace):
    document, _ = knowledge.add_document(workspace, "long.md", paragraphs(ON_TOPIC, 200).encode())
    chunks = list(document.chunks.order_by("ordinal"))
    assert len(chunks) > 3 and [c.ordinal for c in chunks] == list(range(len(chunks)))
    assert all(c.tokens <= 1500 for c in chunks)
    assert "\n\n".join(c.text for c in chunks) == document.text


def test_deleting_a_document_removes_its_chunks_and_unshared_original(workspace, alice,
                                                                     django_capture_on_commit_callbacks):
    document, _ = knowledge.add_document(workspace, "gone.md", b"Soon gone.")
    shared, _ = knowledge.add_document(Workspace.objects.create(slug="b", name="B"), "kept.md", b"Shared bytes.")
    mine, _ = knowledge.add_document(workspace, "mine.md", b"Shared bytes.")
    with django_capture_on_commit_callbacks(execute=True):  # the original goes once the deletion commits
        knowledge.delete_document(document, alice)
        knowledge.delete_document(mine, alice)
    assert not Document.objects.filter(pk__in=[document.pk, mine.pk]).exists()
    assert not DocumentChunk.objects.filter(document_id=document.pk).exists()
    assert not originals.exists(document.sha256)
    assert originals.exists(shared.sha256)  # still used by workspace b
    event = WorkspaceEvent.objects.filter(action="document_deleted").order_by("id").first()
    assert event.user == alice and event.detail["name"] == "gone.md"


def test_deleting_a_document_keeps_bytes_that_a_model_call_was_given(workspace, alice):
    from beyond_site.runs.contexts import context_messages, store_context
    from pipeline.providers.base import Message

    text = "# Same text\n\nA section a model call was given, and also uploaded as a file."
    record = store_context((Message("user", text),))
    document, _ = knowledge.add_document(workspace, "same.md", text.encode())
    assert document.sha256 in {p["blob"] for p in record.parts}
    knowledge.delete_document(document, alice)
    assert context_messages(record) == [{"role": "user", "content": text}]  # the audit record is intact
