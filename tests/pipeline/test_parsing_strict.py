"""A reply that gives a key twice, at any depth, is unparseable: it can never count as a pass."""
from __future__ import annotations

import json

import pytest

from pipeline.parsing import ReplyError, parse_brief, parse_verdict
from tests import scripting
from tests.pipeline.helpers import of_type, run_scripted


@pytest.mark.parametrize("text", [
    '{"pass": false, "pass": true, "issues": []}',
    '{"pass": true, "issues": [], "issues": []}',
    '{"pass": false, "issues": [{"type": "step_contract", "type": "contradiction", "detail": "x", "quote": ""}]}',
    '```json\n{"pass": true, "pass": true, "issues": []}\n```',
])
def test_a_verdict_with_a_duplicate_key_is_unparseable(text):
    with pytest.raises(ReplyError, match="twice"):
        parse_verdict(text)


def test_the_same_verdicts_without_duplicates_parse():
    assert parse_verdict('{"pass": true, "issues": []}').passed
    assert not parse_verdict('{"pass": false, "issues": [{"type": "step_contract", "detail": "x", "quote": ""}]}').passed


def test_a_brief_with_a_duplicate_key_is_unparseable():
    good = json.dumps(scripting.brief(1))
    assert parse_brief(good).steps[0].index == 1
    duplicated = good.replace('"task": ', '"task": "Something else", "task": ', 1)
    with pytest.raises(ReplyError, match="'task' twice"):
        parse_brief(duplicated)


async def test_a_duplicated_pass_never_releases_a_step(tmp_path):
    """{"pass": false, "pass": true} read as a pass released the step; now it is unparseable twice: a halt."""
    duplicated = '{"pass": false, "pass": true, "issues": []}'
    events, _ = await run_scripted(tmp_path, scripting.script({1: {"executor": ["A draft."],
                                                                   "verifier": [duplicated, duplicated]}}))
    assert of_type(events, "step_released") == []
    assert of_type(events, "run_halted")
    assert all(v["parsed"] is None for v in of_type(events, "verdict_recorded") if v["source"] == "model")


def test_a_raw_newline_inside_a_string_is_read_as_a_newline():
    """llama.cpp's grammars let a model write a control character raw inside a string (Gemma 3
    270M does); it means what its escaped form means, so it costs the reply nothing."""
    verdict = parse_verdict('{"pass": false, "issues": [{"type": "step_contract", "detail": "two\nlines", "quote": ""}]}')
    assert verdict.issues[0].detail == "two\nlines"
    brief = json.dumps(scripting.brief(1), indent=None).replace('"task": "', '"task": "line one\\n', 1)
    assert parse_brief(brief.replace("\\n", "\n", 1)).task.startswith("line one\n")
    with pytest.raises(ReplyError, match="not valid JSON"):
        parse_verdict('{"pass": true, "issues": [}')  # the JSON itself is still read strictly
