"""Declining (docs/verifier-contract.md, "Declining"): a brief that declines the task ends the run
with run_declined, after the brief, with nothing rendered, released or summed up; a model planner
is told when and how to decline, and the schema sent to servers lets it."""
from __future__ import annotations

import json

import pytest

from pipeline import events as ev
from pipeline.context import Context
from pipeline.parsing import parse_brief
from pipeline.providers.profiles import PROFILES
from pipeline.requests import build_planner_request
from pipeline.schemas import brief_json_schema
from pipeline.topology import parse_shorthand
from tests import scripting
from tests.pipeline.helpers import of_type, run_scripted
from tests.pipeline.test_providers_profiles import sent_body

REASON = "This task asks for a translation, which this planner cannot do faithfully; connect a model that can."


async def test_a_declined_brief_ends_the_run_declined_with_nothing_rendered(tmp_path):
    data = scripting.script({1: {"executor": ["Never asked for."], "verifier": [scripting.PASS]}},
                            planner=[json.dumps(scripting.declined_brief(REASON))])
    events, provider = await run_scripted(tmp_path, data)
    types = [e.type for e in events]
    assert types[-3:] == [ev.BRIEF_READY, ev.REQUIREMENTS_TRACED, ev.RUN_DECLINED]  # every ask declined with it
    assert events[-1].data == {"reason": REASON}
    assert of_type(events, ev.BRIEF_READY)[0]["brief"]["decline_reason"] == REASON
    assert {c.role for c in provider.calls} == {"planner"}  # no executor, verifier or summarizer call
    assert not [t for t in types if t in ev.STEP_TYPES or t in (ev.STEP_RENDERING, ev.SUMMARIZER_STARTED)]
    assert sum(t in ev.FINAL_TYPES for t in types) == 1


async def test_a_brief_that_declines_and_plans_steps_is_not_usable_and_is_asked_again(tmp_path):
    both = {**scripting.brief(1), "decline_reason": REASON}
    data = scripting.script({1: {"executor": ["Part 1."], "verifier": [scripting.PASS]}},
                            planner=[json.dumps(both), json.dumps(scripting.brief(1))])
    events, _ = await run_scripted(tmp_path, data)
    assert "a declined brief plans no step" in of_type(events, ev.PLANNER_REJECTED)[0]["error"]
    assert events[-1].type == ev.RUN_COMPLETED


def test_the_model_planner_is_told_when_and_how_to_decline():
    request = build_planner_request(Context(task="Translate the register into French"),
                                    parse_shorthand("openrouter:some/model").planner)
    prompt = request.messages[0].content
    assert '"decline_reason"' in prompt and '"steps": []' in prompt
    assert "never write a document of another kind" in prompt.lower()


_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None), "integer": int}


def conforms(value, schema: dict, root: dict) -> bool:
    """`value` against the subset of JSON Schema the brief's schema uses (no library for it here)."""
    if "$ref" in schema:
        return conforms(value, root["$defs"][schema["$ref"].rsplit("/", 1)[1]], root)
    if "anyOf" in schema:
        return any(conforms(value, option, root) for option in schema["anyOf"])
    if "type" in schema and not isinstance(value, _TYPES[schema["type"]]):
        return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        return False
    if isinstance(value, list):
        return len(value) >= schema.get("minItems", 0) and all(conforms(v, schema.get("items", {}), root) for v in value)
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        if schema.get("additionalProperties") is False and set(value) - set(properties):
            return False
        return set(schema.get("required", [])) <= set(value) and all(
            conforms(v, properties[k], root) for k, v in value.items() if k in properties)
    return True


@pytest.mark.parametrize("name", sorted(p for p in PROFILES if PROFILES[p].structured_output != "none"))
async def test_every_schema_form_sent_to_a_server_accepts_a_declined_brief(name):
    body = await sent_body(name, json_schema=brief_json_schema(), schema_name="reasoning_brief")
    form = body["response_format"]
    schema = form["schema"] if form["type"] == "json_object" else form["json_schema"]["schema"]
    declined = scripting.declined_brief(REASON)
    assert conforms(declined, schema, schema)
    assert not conforms({**declined, "decline_reason": 7}, schema, schema)  # the checker does check
    assert conforms(scripting.brief(2), schema, schema)  # and an ordinary brief still conforms
    assert "never write a document of another kind" in schema["properties"]["decline_reason"]["description"]
    assert parse_brief(json.dumps(declined)).declined  # what validates it after it arrives agrees
