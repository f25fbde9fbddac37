"""The offline engine declines what it cannot do faithfully, instead of writing another document."""
from __future__ import annotations

import pytest

from pipeline import events as ev
from pipeline.context import Context
from pipeline.orchestrator import Orchestrator
from pipeline.providers.offline import OfflineProvider
from pipeline.providers.offline.declining import transform_asked
from pipeline.providers.offline.planner import plan
from pipeline.topology import ROLES, parse_shorthand

MEMORIES = ("Harrow Dental Labs Ltd is a dental laboratory with 35 employees in Leeds.",
            "Our Information Security Manager is Priya Shah.")


def _ctx(task: str) -> Context:
    return Context(task=task, memories=MEMORIES, workspace_name="Harrow", enabled_frameworks=("ISO/IEC 27001:2022",))


@pytest.mark.parametrize("task, words", [
    ("Translate our access control policy into French", "cannot translate"),
    ("Please rewrite the attached incident procedure in plain English", "cannot reword"),
    ("Summarise the attached security policy in five bullet points", "cannot summarise"),
    ("Shorten our information security policy to one page", "cannot shorten"),
    ("Our password standard, in German please", "cannot translate"),
    ("Please summarise our incident response procedure", "cannot summarise"),
])
def test_it_declines_to_transform_text(task, words):
    brief = plan(_ctx(task))
    assert brief.declined and brief.steps == []
    assert words in brief.decline_reason and "connect a language model in Settings" in brief.decline_reason


@pytest.mark.parametrize("task, words", [
    ("Draft a sales contract for our distributor in Poland", "cannot write a sales contract"),
    ("Write a press release about our new lab", "cannot write a press release"),
    ("Something for the team about Tuesday", "cannot tell which kind of document"),
])
def test_it_declines_a_kind_of_document_it_has_no_template_for(task, words):
    brief = plan(_ctx(task))
    assert brief.declined and words in brief.decline_reason
    assert "Statement of applicability" in brief.decline_reason or "statement of applicability" in brief.decline_reason


@pytest.mark.parametrize("task, kind", [
    ("Write a code of conduct policy for suppliers", "Supplier security requirements"),
    ("Clean desk rules for the lab", "Compliance document"),
    ("Summary of our ISO 27001 readiness for the board, as an email", "Stakeholder email"),
    ("Update our asset register from the inventory", "Asset register"),
])
def test_it_writes_what_it_can_without_declining(task, kind):
    brief = plan(_ctx(task))
    assert not brief.declined and brief.judgments[0].startswith(f"Document type: {kind}")


async def test_a_declined_task_releases_nothing_through_the_orchestrator():
    provider = OfflineProvider()
    orchestrator = Orchestrator(_ctx("Translate our password guide into Spanish"), parse_shorthand("offline"),
                                {role: provider for role in ROLES})
    events = [event async for event in orchestrator.events()]
    assert orchestrator.brief.declined
    assert not [e for e in events if e.type in (ev.STEP_RENDERING, ev.STEP_RELEASED)]


@pytest.mark.parametrize("task", ["Summarise our SOC 2 readiness for the board", "Write our policy in English"])
def test_a_summary_of_a_subject_or_english_is_not_a_transformation(task):
    assert transform_asked(task) is None
