"""Redo a step, regenerate, edit and resend, from the chat (docs/working-loop.md): who may, what
each starts, and what the chat and the audit pages then show of the lineage."""
from __future__ import annotations

import pytest
from django.urls import reverse

from pipeline import events as ev
from pipeline.events import Event
from beyond_site.runs.models import Run
from tests.site.chat_support import brief_ready, client_for, new_run, record, released, workspace_with

pytestmark = pytest.mark.django_db

WARNING = "Released with a warning: the verifier found issues in this step twice."


@pytest.fixture
def finished(alice, bob, carol):
    """acme (alice member, bob auditor), one completed run whose step 2 carries a warning."""
    workspace = workspace_with("acme", member=alice, auditor=bob)
    workspace_with("globex", member=carol)
    run = new_run(workspace, alice)
    record(run, brief_ready(3), released(1, "Part one."), released(2, "Part two.", "warning", [WARNING]),
           released(3, "Part three."), Event(ev.RunCompleted()))
    return Run.objects.get(pk=run.pk)


def _post(user, name, *args, **data):
    return client_for(user).post(reverse(name, args=["acme", *args]), data, HTTP_HX_REQUEST="true")


def test_the_chat_offers_a_redo_on_each_released_step_prominent_on_a_warning(finished, alice):
    page = client_for(alice).get(reverse("chat:conversation", args=["acme", finished.conversation_id])).content.decode()
    assert page.count('data-action="redo"') == 3
    assert page.count("redo--warning") == 1 and "Redo this step to fix it" in page
    assert 'data-action="regenerate"' in page and 'data-action="edit-task"' in page
    assert "took " in page  # the run's duration on its card


def test_a_redo_starts_a_new_run_in_the_conversation_with_the_instruction(finished, alice):
    response = _post(alice, "chat:redo", finished.pk, 2, instruction="Use the 24 h deadline.")
    assert response.status_code == 200
    redo = Run.objects.exclude(pk=finished.pk).get()
    assert (redo.redo_of_id, redo.redo_step, redo.redo_instruction) == (finished.pk, 2, "Use the 24 h deadline.")
    assert redo.task == finished.task and redo.conversation_id == finished.conversation_id
    assert redo.message.text == "Redo step 2 (Part 2): Use the 24 h deadline."
    html = response.content.decode()
    assert f'id="run-{redo.pk}"' in html and 'data-lineage="redo"' in html and f'href="#run-{finished.pk}"' in html


def test_who_may_not_start_runs_cannot_redo_regenerate_or_edit(finished, bob, carol):
    for user, status in ((bob, 403), (carol, 404)):
        assert _post(user, "chat:redo", finished.pk, 2).status_code == status
        assert _post(user, "chat:regenerate", finished.pk).status_code == status
        assert _post(user, "chat:edit", finished.pk, message="Other").status_code == status
    assert Run.objects.count() == 1


def test_a_step_that_is_not_there_or_a_run_still_going_is_refused(finished, alice):
    assert "has no step 7" in _post(alice, "chat:redo", finished.pk, 7).content.decode()
    going = new_run(finished.workspace, alice)
    assert "has not finished" in _post(alice, "chat:redo", going.pk, 1).content.decode()
    assert Run.objects.count() == 2


def test_regenerate_and_edit_and_resend_link_the_new_runs_to_the_earlier(finished, alice):
    _post(alice, "chat:regenerate", finished.pk)
    regenerated = Run.objects.get(regenerates=finished)
    assert regenerated.task == finished.task and regenerated.conversation_id == finished.conversation_id
    # The regeneration's task is now the conversation's last: the earlier one can no longer be edited.
    refused = _post(alice, "chat:edit", finished.pk, message="Draft a shorter note").content.decode()
    assert "Only the conversation&#x27;s last task can be edited" in refused
    record(regenerated, brief_ready(1), released(1, "Short."), Event(ev.RunCompleted()))
    response = _post(alice, "chat:edit", regenerated.pk, message="Draft a shorter note")
    edited = Run.objects.get(edited_from=regenerated)
    assert edited.task == "Draft a shorter note" and 'data-lineage="edited"' in response.content.decode()
    halted = new_run(finished.workspace, alice)
    record(halted, brief_ready(1), Event(ev.StepHalted(step=1, reason="x")), Event(ev.RunHalted(step=1, reason="x")))
    assert "Only a completed run can be regenerated" in _post(alice, "chat:regenerate", halted.pk).content.decode()
    # The audit record links both ways.
    audit = client_for(alice).get(reverse("audit:run", args=["acme", edited.pk])).content.decode()
    assert f'data-lineage="edited_from"><a href="{reverse("audit:run", args=["acme", regenerated.pk])}"' in audit
    earlier = client_for(alice).get(reverse("audit:run", args=["acme", finished.pk])).content.decode()
    assert 'data-lineage="later"' in earlier and reverse("audit:run", args=["acme", regenerated.pk]) in earlier
    assert "(regenerates it)" in earlier


def test_run_again_of_a_redo_that_halted_redoes_the_step_again(finished, alice):
    _post(alice, "chat:redo", finished.pk, 2, instruction="Use the 24 h deadline.")
    halted = Run.objects.get(redo_of=finished)
    record(halted, brief_ready(3), released(1, "Part one."), Event(ev.StepHalted(step=2, reason="no verdict")),
           Event(ev.StepNotReleased(step=3)), Event(ev.RunHalted(step=2, reason="step 2: no verdict")))
    _post(alice, "chat:run_again", halted.pk)
    again = Run.objects.get(retry_of=halted)
    assert (again.redo_of_id, again.redo_step, again.redo_instruction) == (finished.pk, 2, "Use the 24 h deadline.")


def _six(user, name, *args, **data) -> list[int]:
    """Six posts of one action at once (a double click, two tabs, a replayed request)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(6) as pool:
        return [r.status_code for r in pool.map(lambda _: _post(user, name, *args, **data), range(6))]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("action", ["redo", "regenerate", "edit"])
def test_an_action_posted_six_times_at_once_starts_one_run(finished, alice, action):
    name, args, data, lineage = {
        "redo": ("chat:redo", (finished.pk, 2), {"instruction": "Use the 24 h deadline."}, "redo_of"),
        "regenerate": ("chat:regenerate", (finished.pk,), {}, "regenerates"),
        "edit": ("chat:edit", (finished.pk,), {"message": "Draft a shorter note"}, "edited_from"),
    }[action]
    assert set(_six(alice, name, *args, **data)) == {200}
    assert Run.objects.filter(**{lineage: finished}).count() == 1
    repeat = _post(alice, name, *args, **data).content.decode()
    # Said why: asked already (an edit: the earlier task is no longer the conversation's last).
    assert "asked already" in repeat or (action == "edit" and "last task can be edited" in repeat)
    assert Run.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_a_redo_with_other_words_is_another_action(finished, alice):
    _post(alice, "chat:redo", finished.pk, 2, instruction="Use the 24 h deadline.")
    _post(alice, "chat:redo", finished.pk, 2, instruction="Name the DPO.")
    _post(alice, "chat:redo", finished.pk, 3)
    assert Run.objects.filter(redo_of=finished).count() == 3
