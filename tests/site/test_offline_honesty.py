"""The default experience, end to end on the site with the built-in offline engine (issue "Honest by
default"): nothing reads "passed" that no model read, a follow-up it cannot do faithfully is declined
with the document left as it was, and a requested set is covered whole."""
from __future__ import annotations

import asyncio

import pytest
from django.utils.html import escape

from pipeline import badges
from pipeline.topology import parse_shorthand
from beyond_site.runs.models import Run, Step
from beyond_site.runs.queue import claim_run, start_run
from beyond_site.runs.runner import execute_run
from beyond_site.runs.selectors import run_trace
from beyond_site.workspaces import knowledge
from beyond_site.workspaces.models import Membership
from tests.site.chat_support import client_for

pytestmark = pytest.mark.django_db(transaction=True)

OFFLINE = parse_shorthand("offline")


@pytest.fixture
def register(acme, alice):
    """An offline conversation whose document is an asset register."""
    Membership.objects.create(user=alice, workspace=acme, role="member")
    acme.enabled_frameworks = ["iso27001-2022", "gdpr"]
    acme.save()
    knowledge.add_memory(acme, "Acme SAS hosts its platform on OVHcloud in Roubaix.")
    knowledge.add_memory(acme, "Our IT manager is Paul Girard.")
    return run_offline(acme, alice, "Draft our ISO/IEC 27001:2022 asset register overview")


def run_offline(workspace, user, task, conversation=None) -> Run:
    run, _ = start_run(workspace, task, user=user, conversation=conversation, topology=OFFLINE)
    assert claim_run(run.pk, "test-runner")
    asyncio.run(execute_run(run.pk, "test-runner"))
    return Run.objects.get(pk=run.pk)


def test_an_offline_run_is_checked_mechanically_never_passed(register):
    assert register.status == Run.COMPLETED and register.verification == badges.MECHANICAL
    released = Step.objects.filter(run=register, status=Step.RELEASED)
    assert released.exists()
    assert set(released.values_list("badge", flat=True)) <= {badges.CHECKED, badges.WARNING}
    assert run_trace(register)["run"]["verification"] == "mechanical"


@pytest.mark.parametrize("follow_up", ["Translate this document into French", "Shorten step 2"])
def test_a_follow_up_the_offline_engine_cannot_do_is_declined_and_the_document_stays(register, alice, follow_up):
    client = client_for(alice)
    before = {ext: client.get(f"/w/acme/runs/{register.pk}/export.{ext}").content for ext in ("md", "docx")}
    declined = run_offline(register.workspace, alice, follow_up, conversation=register.conversation)
    assert declined.status == Run.DECLINED and declined.decline_reason
    assert "connect" in declined.decline_reason.lower()  # what would make it possible
    assert not Step.objects.filter(run=declined, status=Step.RELEASED).exists() and declined.summary is None
    after = {ext: client.get(f"/w/acme/runs/{register.pk}/export.{ext}").content for ext in ("md", "docx")}
    assert after["md"] == before["md"]
    page = client.get(f"/w/acme/c/{register.conversation_id}/").content.decode()
    assert escape(declined.decline_reason) in page


def test_an_offline_soa_of_annex_a_5_covers_all_37_controls_with_no_recap_finding(register, alice):
    run = run_offline(register.workspace, alice, "Draft our Statement of Applicability for ISO/IEC 27001:2022 "
                                                 "Annex A 5")
    trace = run_trace(run)
    assert run.status == Run.COMPLETED and trace["summary_findings"] == []
    document = "\n".join(step["content"] or "" for step in trace["steps"])
    covered = {f"A.5.{n}" for n in range(1, 38) if f"A.5.{n} " in document or f"A.5.{n}|" in document
               or f"A.5.{n} |" in document}
    assert covered == {f"A.5.{n}" for n in range(1, 38)}


def test_an_offline_questionnaire_gets_one_answer_per_question(register, alice):
    questions = ["Where is customer data hosted?", "Who is your IT manager?", "Do you have cyber insurance?"]
    task = "Answer this customer's security questionnaire:\n" + "\n".join(f"{n}. {q}" for n, q in
                                                                         enumerate(questions, 1))
    run = run_offline(register.workspace, alice, task)
    document = "\n".join(step["content"] or "" for step in run_trace(run)["steps"])
    assert run.status == Run.COMPLETED
    for question in questions:
        assert question in document
    rows = [line for line in document.splitlines() if line.startswith(("| 1 |", "| 2 |", "| 3 |"))]
    assert len(rows) == 3  # one answer per question, in order
    assert "OVHcloud" in rows[0] and "Paul Girard" in rows[1]
    assert "Not answered: no fact in the workspace" in rows[2]  # nothing says whether Acme is insured
