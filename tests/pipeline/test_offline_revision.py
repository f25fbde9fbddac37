"""The offline engine revises the conversation's latest document instead of starting a new one."""
from __future__ import annotations

import pytest

from pipeline import events as ev
from pipeline.context import Context, HistoryMessage, ReleasedStep
from pipeline.orchestrator import Orchestrator
from pipeline.providers.offline import OfflineProvider
from pipeline.topology import ROLES, parse_shorthand

MEMORIES = ("BrightDesk SAS is a 60-person software company in Lyon.", "Our CISO is Ana Ruiz.")
FILES = ()


async def run(ctx: Context) -> list:
    provider = OfflineProvider()
    orchestrator = Orchestrator(ctx, parse_shorthand("offline"), {role: provider for role in ROLES})
    return [event async for event in orchestrator.events()]


def released(events) -> tuple[ReleasedStep, ...]:
    return tuple(ReleasedStep(e.payload.step, e.payload.title, e.payload.content, e.payload.badge)
                 for e in events if e.type == ev.STEP_RELEASED)


async def first_policy():
    ctx = Context(task="Draft our information security policy", memories=MEMORIES, workspace_name="BrightDesk",
                  enabled_frameworks=("ISO/IEC 27001:2022",))
    events = await run(ctx)
    assert events[-1].type == ev.RUN_COMPLETED
    return ctx, released(events)


def follow_up(ctx: Context, document, task: str) -> Context:
    history = (HistoryMessage("user", ctx.task), HistoryMessage.answer(document, "A recap.", "completed"))
    return Context(task=task, memories=ctx.memories, workspace_name=ctx.workspace_name,
                   enabled_frameworks=ctx.enabled_frameworks, history=history)


async def test_adding_a_section_carries_the_document_over_and_adds_it():
    ctx, document = await first_policy()
    events = await run(follow_up(ctx, document, "Add a section on remote work"))
    assert events[-1].type == ev.RUN_COMPLETED
    revised = released(events)
    # The new section goes in before the section that closes the document, which still ends it.
    assert document[-1].title == "Compliance and review"
    assert [s.title for s in revised] == [s.title for s in document[:-1]] + ["Remote work", document[-1].title]
    added = revised[-2]
    assert [s.content for s in revised if s is not added] == [s.content for s in document]  # word for word
    assert [s.index for s in revised] == list(range(1, len(document) + 2))
    assert {s.badge for s in revised} == {"checked"}  # every carried citation approved again, nothing flagged (no warning)
    assert "remote work" in added.content and "BrightDesk" in added.content
    brief = next(e.payload.brief for e in events if e.type == ev.BRIEF_READY)
    assert brief["judgments"][0].startswith("This run revises the document released earlier")
    assert "add a section on remote work" not in added.content.lower()  # not a document about the request
    recap = next(e.payload.summary for e in events if e.type == ev.SUMMARY_READY)
    assert recap.startswith("- This document revises the one released earlier in this conversation, as asked: "
                            "Add a section on remote work")


async def test_removing_a_section_leaves_it_out():
    ctx, document = await first_policy()
    gone = document[1].title
    events = await run(follow_up(ctx, document, f"Remove the section on {gone.lower()}"))
    titles = [s.title for s in released(events)]
    assert gone not in titles and titles == [s.title for s in document if s.title != gone]


def brief_of(events) -> dict:
    return next(e.payload.brief for e in events if e.type == ev.BRIEF_READY)


@pytest.mark.parametrize("task, words", [
    ("Make the tone friendlier", "cannot reword"),
    ("Fix the typos in step 1", "cannot fix the document"),
    ("Shorten step 2", "cannot shorten"),
    ("Rewrite the roles section in plain English", "cannot reword"),
    ("Translate this document into French", "cannot translate"),
    ("Summarise it for the board", "cannot summarise"),
    ("Update step 3 with our new review dates", "cannot update the document"),
])
async def test_a_change_it_cannot_make_is_declined_and_the_document_left_as_it_was(task, words):
    ctx, _ = await first_policy()
    document = (*_[:2], ReleasedStep(3, "Register template", "| ID | Asset |\n| --- | --- |\n| A-1 | Laptop |"))
    events = await run(follow_up(ctx, document, task))
    brief = brief_of(events)
    assert brief["steps"] == [] and words in brief["decline_reason"]
    assert "connect a language model in Settings" in brief["decline_reason"]
    assert not released(events)  # nothing replaces the conversation's document, no 'Change requested' section
    assert not any(e.type == ev.STEP_RENDERING for e in events)


async def test_a_new_task_in_the_same_conversation_is_a_new_document():
    ctx, document = await first_policy()
    events = await run(follow_up(ctx, document, "Draft our incident response procedure"))
    brief = next(e.payload.brief for e in events if e.type == ev.BRIEF_READY)
    assert not brief["judgments"][0].startswith("This run revises")


def test_an_added_section_goes_before_the_sections_that_close_a_document():
    from pipeline.providers.offline.revision import Revision, revise

    def doc(*titles):
        return tuple(ReleasedStep(n, t, f"## {t}\n\nText.", "passed") for n, t in enumerate(titles, 1))

    def titles_after(*titles):
        brief = revise(Context(task="Add a section on cloud assets"), Revision(doc(*titles), "add", "cloud assets"),
                       "BrightDesk")
        assert [s.index for s in brief.steps] == list(range(1, len(brief.steps) + 1))
        return [s.title for s in brief.steps]

    assert titles_after("Scope", "Register template", "Maintenance and review", "Open points and next steps") == [
        "Scope", "Register template", "Cloud assets", "Maintenance and review", "Open points and next steps"]
    assert titles_after("Scope", "Key facts", "Questions and sign-off") == [
        "Scope", "Key facts", "Cloud assets", "Questions and sign-off"]
    assert titles_after("Scope", "Decisions and actions") == ["Scope", "Decisions and actions", "Cloud assets"]
    # Only a closing run at the end counts: a review section in the middle stays where it is.
    assert titles_after("Monitoring and review of suppliers", "Supplier register") == [
        "Monitoring and review of suppliers", "Supplier register", "Cloud assets"]
