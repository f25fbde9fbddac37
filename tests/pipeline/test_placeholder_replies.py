"""A brief that hands the instructions' placeholders back as its own words answered nothing: it is
asked again, never shown to the user as a plan or as the reason their task was declined. The
replies below are Gemma 3 270M's, as its server wrote them (docs/model-servers.md)."""
from __future__ import annotations

import json

import pytest

from pipeline import prompts
from pipeline.parsing import ReplyError, parse_brief, parse_verdict
from pipeline.requests import planner_placeholders, verifier_placeholders
from tests import scripting
from tests.pipeline.helpers import of_type, run_scripted

COPIED_DECLINES = [
    "What you cannot do and what would make it possible, in plain words for the person who asked",
    "<what you can do and what would make it possible, in plain words for this person who asked>",
    "<the decision that you cannot do and what would make it possible, in plain words for the person who asked>},",
    "<what you cannot do and what would make it possible",
]


def declined(reason: str, task: str = "Draft a short access-control note") -> str:
    return json.dumps({"task": task, "decline_reason": reason, "steps": []})


def test_the_slots_come_from_the_planners_instructions():
    slots = planner_placeholders()
    assert "<the task restated>" in slots
    assert any(slot.startswith("<what you cannot do") for slot in slots)


@pytest.mark.parametrize("reason", COPIED_DECLINES)
def test_a_decline_whose_reason_is_the_instructions_slot_is_not_a_decline(reason):
    with pytest.raises(ReplyError, match="decline_reason is a placeholder of the instructions"):
        parse_brief(declined(reason), placeholders=planner_placeholders())


def test_a_reason_that_only_shares_a_slots_first_words_is_the_models_own():
    own = "What you cannot do here is translate; connect a model that can, then ask again."
    assert parse_brief(declined(own), placeholders=planner_placeholders()).decline_reason == own


def test_a_task_restated_as_the_slot_is_refused_too():
    with pytest.raises(ReplyError, match="task is a placeholder"):
        parse_brief(declined("The context holds no document to change.", task="<the task restated>"),
                    placeholders=planner_placeholders())


@pytest.mark.parametrize("field, value", [("title", "..."), ("content_spec", " … ")])
def test_a_step_with_no_words_is_refused(field, value):
    brief = scripting.brief(2)
    brief["steps"][1][field] = value
    with pytest.raises(ReplyError, match=f"step 2's {field} .* has no words"):
        parse_brief(json.dumps(brief), placeholders=planner_placeholders())


def test_a_decline_in_its_own_words_and_a_brief_in_any_script_are_accepted():
    own = "The conversation holds no policy to shorten; paste it or upload it, then ask again."
    assert parse_brief(declined(own), placeholders=planner_placeholders()).decline_reason == own
    brief = scripting.brief(1)
    brief["task"] = "アクセス制御の方針を作成する"
    brief["steps"][0]["title"] = "目的と範囲"
    assert parse_brief(json.dumps(brief), placeholders=planner_placeholders()).steps[0].title == "目的と範囲"


async def test_a_copied_decline_is_asked_again_and_the_second_reply_is_planned(tmp_path):
    events, _ = await run_scripted(tmp_path, scripting.script(
        {1: {"executor": ["The note."], "verifier": [scripting.PASS]}},
        planner=[declined(COPIED_DECLINES[1]), json.dumps(scripting.brief(1))]))
    [rejected] = of_type(events, "planner_rejected")
    assert "placeholder of the instructions" in rejected["error"]
    assert of_type(events, "run_completed") and not of_type(events, "run_declined")


async def test_two_copied_declines_fail_the_run_and_release_nothing(tmp_path):
    events, _ = await run_scripted(tmp_path, scripting.script(
        {}, planner=[declined(COPIED_DECLINES[0]), declined(COPIED_DECLINES[2])], n_steps=0))
    assert len(of_type(events, "planner_rejected")) == 2
    [failed] = of_type(events, "run_failed")
    assert "placeholder of the instructions" in failed["reason"]
    assert not of_type(events, "run_declined") and not of_type(events, "step_released")


@pytest.mark.parametrize("reason", [
    "<what you can do and what would make it possible",  # seen on gemma-3-270m: a word changed, cut short
    "<what you cannot do",
    "what you can not do and what would make it possible",
])
def test_a_slot_with_a_word_changed_or_its_bracket_left_open_is_refused(reason):
    with pytest.raises(ReplyError, match="decline_reason is a placeholder of the instructions"):
        parse_brief(declined(reason), placeholders=planner_placeholders())


def test_the_verifiers_example_values_come_from_its_instructions():
    # The instructions describe an issue's fields in words, with no example value to copy; the
    # descriptions are what a verdict must not hand back.
    described = verifier_placeholders()
    assert len(described) == 2 and described[0].startswith("what this draft gets wrong")
    assert '"detail": "' not in prompts.load("verifier")


def test_the_plans_example_is_made_of_slots_a_brief_cannot_hand_back():
    # The planner's instructions show a brief's shape in slots only (no realistic example task a
    # small model restates in place of its own): every value of the example is a slot.
    example = next(line for line in prompts.load("planner").splitlines() if line.startswith('{"task"'))
    values = [v for v in _strings(json.loads(example)) if v != "C1"]
    assert values and all(v in planner_placeholders() for v in values)


def _strings(value):
    if isinstance(value, str):
        yield value
    for item in value.values() if isinstance(value, dict) else value if isinstance(value, list) else ():
        yield from _strings(item)


@pytest.mark.parametrize("where, value", [
    ("step 1's title", "The heading of the document's first section"),
    ("step 1's content_spec", "<what that section must deliver, the judgments it applies"),
    ("judgment 1", "One decision or established fact the document must respect"),
    ("citation C1's framework", "<the framework's name, exactly as in the reference>"),
    ("citation C1's title", "its short title, exactly as in the reference"),
])
def test_a_plan_that_copies_the_shape_example_is_refused(where, value):
    brief = scripting.brief(2)
    brief["citations"] = [{"id": "C1", "framework": "ISO/IEC 27001:2022", "ref": "A.5.9",
                           "title": "Inventory of information and other associated assets"}]
    target = {"step 1's title": ("steps", 0, "title"), "step 1's content_spec": ("steps", 0, "content_spec"),
              "judgment 1": ("judgments", 0, None), "citation C1's framework": ("citations", 0, "framework"),
              "citation C1's title": ("citations", 0, "title")}[where]
    brief.setdefault("judgments", ["Audience: all staff."])
    holder = brief[target[0]]
    if target[2] is None:
        holder[target[1]] = value
    else:
        holder[target[1]][target[2]] = value
    with pytest.raises(ReplyError, match=f"the brief's {where} is a placeholder of the instructions"):
        parse_brief(json.dumps(brief), placeholders=planner_placeholders())


@pytest.mark.parametrize("detail, quote", [
    ("what this draft gets wrong, in your own words", "Access is granted on request."),
    ("<What this draft gets wrong, in your own words, naming the judgment", "Access is granted on request."),
    ("The step names no owner.", "the draft's own words at fault"),
    ("The step names no owner.", "The draft's own words at fault, copied exactly from between the DRAFT fences"),
])
def test_a_verdict_that_hands_back_the_example_is_unparseable(detail, quote):
    verdict = {"pass": False, "issues": [{"type": "step_contract", "detail": detail, "quote": quote}]}
    with pytest.raises(ReplyError, match="the instructions' example"):
        parse_verdict(json.dumps(verdict), placeholders=verifier_placeholders())


@pytest.mark.parametrize("detail", ["...", " - ", "…"])
def test_an_issue_whose_detail_has_no_words_is_unparseable(detail):
    verdict = {"pass": False, "issues": [{"type": "step_contract", "detail": detail, "quote": "x"}]}
    with pytest.raises(ReplyError, match="issue 1's detail .* has no words"):
        parse_verdict(json.dumps(verdict), placeholders=verifier_placeholders())


def test_a_verdict_in_its_own_words_parses_even_when_its_quote_opens_with_a_bracket():
    verdict = {"pass": False, "issues": [{"type": "step_contract", "detail": "The step names no review period.",
                                           "quote": "<= 5 days"}]}
    assert parse_verdict(json.dumps(verdict), placeholders=verifier_placeholders()).issues[0].quote == "<= 5 days"
