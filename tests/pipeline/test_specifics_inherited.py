"""Model output is never its own source (docs/verifier-contract.md, "Unsourced specifics"): a specific
an earlier version of the document stated unsourced stays unsourced when a later version repeats it,
and one that version had from a source keeps that source. Counts the document makes true are no
specifics."""
from __future__ import annotations

from pipeline.context import Context, HistoryMessage, ReleasedStep
from pipeline.specifics import SourceIndex, find_specifics, list_specifics

DRAFT = "The service desk answers within 4 hours and the team has 23 engineers."


def listing(ctx: Context) -> list[str]:
    return [u["text"] for u in list_specifics(DRAFT, SourceIndex.of(ctx, None)).unsourced]


def earlier(unsourced: tuple[str, ...]) -> Context:
    version_1 = ReleasedStep(1, "Support", DRAFT, "passed", (), unsourced)
    history = (HistoryMessage("user", "Draft our support standard"),
               HistoryMessage.answer((version_1,), "Answers within 4 hours; 23 engineers.", "completed"))
    return Context(task="Add a section on escalation", history=history)


def test_what_the_earlier_version_stated_unsourced_stays_unsourced():
    assert listing(earlier(("4 hours", "23 engineers"))) == ["4 hours", "23 engineers"]


def test_what_the_earlier_version_stated_from_a_source_is_sourced_again():
    assert listing(earlier(())) == []
    ctx = earlier(("4 hours", "23 engineers"))
    with_memory = Context(task=ctx.task, history=ctx.history, memories=("Our engineering team has 23 engineers.",))
    assert listing(with_memory) == ["4 hours"]


def test_counts_the_document_makes_true_are_no_specifics():
    recap = "- 5 of 6 steps released (5 checked mechanically).\n- 7 questions: 5 answered, 2 marked not answered."
    assert [s.text for s in find_specifics(recap)] == []
