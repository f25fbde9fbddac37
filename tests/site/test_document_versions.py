"""A conversation's document: each finished run that released something is its next version; a
member marks the newest final (on the change log), and every export's footer says which it is."""
from __future__ import annotations

import io

import pytest
from docx import Document as Docx

from pipeline import events as ev
from pipeline.events import Event
from beyond_site.exports.formats import FORMATS
from beyond_site.runs import versions
from beyond_site.runs.queue import start_run
from beyond_site.workspaces.models import Membership, WorkspaceEvent
from tests import scripting
from tests.site.chat_support import client_for, new_run, record, released, workspace_with

pytestmark = pytest.mark.django_db(transaction=True)


def finished(run, *, halted=False):
    events = [Event(ev.BriefReady(brief=scripting.brief(2))), released(1, "The register.")]
    if halted:
        events += [Event(ev.StepHalted(step=2, reason="the verifier timed out")),
                   Event(ev.RunHalted(step=2, reason="step 2: the verifier timed out"))]
    else:
        events += [released(2, "The owners."), Event(ev.RunCompleted())]
    record(run, *events)
    run.refresh_from_db()
    return run


def follow_up(run, user, task="Add a section on cloud assets"):
    later, _ = start_run(run.workspace, task, user=user, conversation=run.conversation)
    return later


@pytest.fixture
def conversation(alice):
    """Three runs of one conversation: version 1, a run that released nothing, version 2."""
    first = finished(new_run(workspace_with(member=alice), alice, task="Asset register"))
    empty = follow_up(first, alice, "Try again")
    record(empty, Event(ev.BriefReady(brief=scripting.brief(1))),
           Event(ev.StepHalted(step=1, reason="the verifier timed out")),
           Event(ev.RunHalted(step=1, reason="step 1: the verifier timed out")))
    second = finished(follow_up(first, alice))
    return first, empty, second


def footer(run) -> str:
    return Docx(io.BytesIO(FORMATS["docx"].render(run, "client"))).sections[0].footer.paragraphs[0].text


def test_every_run_that_released_something_is_the_next_version(conversation, alice):
    first, empty, second = conversation
    found = versions.document_versions([first, empty, second])
    assert [found[r.pk].number for r in (first, empty, second)] == [1, None, 2]
    assert [found[r.pk].status for r in (first, second)] == ["Draft", "Draft"]
    assert found[second.pk].current and not found[first.pk].current
    running = follow_up(first, alice, "Still going")
    assert versions.document_version(running).number is None  # not a version until it finishes
    assert footer(second).startswith("Version 2 · Draft · Internal\t")


def test_the_newest_version_is_marked_final_and_the_older_ones_are_superseded(conversation, alice):
    first, _, second = conversation
    with pytest.raises(versions.NotMarkable, match="version 2 of this document is"):
        versions.mark_final(first, alice)
    assert versions.mark_final(second, alice).status == "Final"
    assert versions.document_version(first).status == "Superseded"
    assert footer(second).startswith("Version 2 · Final · Internal\t")
    assert footer(first).startswith("Version 1 · Superseded · Internal\t")
    row = WorkspaceEvent.objects.get(action="document_marked_final")
    assert (row.actor_name, row.before, row.after) == ("alice", None, 2)
    assert row.detail == {"conversation": second.conversation_id, "title": second.conversation.title,
                          "run": second.pk}
    # A revision of the final document is a draft until it is marked in turn.
    third = finished(follow_up(second, alice, "Add owners"))
    assert versions.document_version(third).status == "Draft"
    assert versions.document_version(second).status == "Final"


def test_reopening_makes_every_version_a_draft_again(conversation, alice):
    _, _, second = conversation
    versions.mark_final(second, alice)
    assert versions.reopen(second, alice).status == "Draft"
    assert [r.action for r in WorkspaceEvent.objects.order_by("seq")][-2:] == ["document_marked_final",
                                                                               "document_reopened"]
    with pytest.raises(versions.NotMarkable, match="not marked final"):
        versions.reopen(second, alice)


def test_a_version_with_sections_not_released_is_never_final(alice):
    run = finished(new_run(workspace_with(member=alice), alice), halted=True)
    with pytest.raises(versions.NotMarkable, match="Only a completed run's document"):
        versions.mark_final(run, alice)
    assert not WorkspaceEvent.objects.filter(action="document_marked_final").exists()


def test_members_mark_final_from_the_chat_and_auditors_cannot(conversation, alice, bob):
    _, _, second = conversation
    Membership.objects.create(user=bob, workspace=second.workspace, role=Membership.AUDITOR)
    url = f"/w/{second.workspace.slug}/runs/{second.pk}/final/"
    assert client_for(bob).post(url).status_code == 403
    assert versions.document_version(second).final is None
    member = client_for(alice)
    response = member.post(url, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert response["HX-Refresh"] == "true"  # the member's page is drawn again, with the message
    assert versions.document_version(second).status == "Final"
    page = member.get(f"/w/{second.workspace.slug}/c/{second.conversation_id}/").content.decode()
    assert "Version 2 is marked final" in page
    assert 'data-document-version="2" data-document-status="final"' in page
    assert 'data-document-version="1" data-document-status="superseded"' in page
    assert 'data-action="reopen"' in page


def test_marking_an_older_version_says_why_not(conversation, alice):
    first, _, _ = conversation
    response = client_for(alice).post(f"/w/{first.workspace.slug}/runs/{first.pk}/final/", follow=True)
    assert "Version 1 is not the newest" in response.content.decode()
    assert versions.document_version(first).final is None


def test_a_redo_that_halts_is_no_version_and_the_one_it_redoes_stays_the_newest(conversation, alice):
    from beyond_site.runs.queue import redo

    first, _, second = conversation
    halted, _ = redo(second, 2, user=alice)
    finished(halted, halted=True)  # step 1 carried over, the redone step 2 halted
    completed, _ = redo(second, 2, user=alice, instruction="Name the owners.")
    assert versions.document_version(halted).number is None
    assert versions.document_version(second).current
    finished(completed)
    assert versions.document_version(completed).number == 3 and versions.document_version(completed).current
