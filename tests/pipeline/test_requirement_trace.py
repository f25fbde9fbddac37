"""The requirement trace in a run (docs/verifier-contract.md, "The requirement trace"): a brief that
leaves an ask of the task out is sent back once, what is still missing is dropped, and a document
that lacks an ask never has it counted as met."""
from __future__ import annotations

import json

from pipeline.context import Context
from pipeline.orchestrator import CarriedStep, Orchestrator, Redo, RunSettings
from pipeline.providers.scripted import ScriptedProvider
from pipeline.topology import ROLES, parse_shorthand
from tests import scripting
from tests.pipeline.helpers import of_type, run_scripted
from tests.scripting import PASS

TASK = "Write a password standard with a 14-character minimum, lockout after 5 attempts and a section on passkeys"


def brief(requirements: list[dict] | None, steps: int = 2) -> str:
    data = scripting.brief(steps)
    data["task"], data["title"] = TASK, "Password standard"
    if requirements is None:
        data.pop("requirements")
    else:
        data["requirements"] = requirements
    return json.dumps(data)


FULL = [{"id": "R1", "text": "password standard", "steps": [1]},
        {"id": "R2", "text": "14-character minimum", "steps": [1]},
        {"id": "R3", "text": "lockout after 5 attempts", "steps": [1]},
        {"id": "R4", "text": "a section on passkeys", "steps": [2]}]
STEP_1 = "## Rules\n\nPasswords are at least 14 characters. Accounts lock after 5 failed attempts."
STEP_2 = "## Passkeys\n\nPasskeys are preferred where a system offers them."


def script(planner: list[str], step_1: str = STEP_1, step_2: str = STEP_2) -> dict:
    return scripting.script({1: {"executor": [step_1], "verifier": [PASS]}, 2: {"executor": [step_2], "verifier": [PASS]}},
                            planner=planner)


def statuses(events) -> dict[str, str]:
    [traced] = of_type(events, "requirements_traced")
    return {r["text"]: r["status"] for r in traced["requirements"]}


async def test_a_brief_that_traces_every_ask_is_not_sent_back_and_a_faithful_document_meets_all(tmp_path):
    events, _ = await run_scripted(tmp_path, script([brief(FULL)]), ctx=Context(task=TASK))
    assert len(of_type(events, "planner_started")) == 1
    [checked] = of_type(events, "requirements_checked")
    assert checked["missing"] == [] and not checked.get("sent_back")
    assert set(statuses(events).values()) == {"met"}
    [traced] = of_type(events, "requirements_traced")
    assert traced["coverage"] == {"met": 4, "total": 4} and traced["gaps"] is None
    assert "Covers" not in of_type(events, "summary_ready")[0]["summary"]


async def test_a_brief_that_leaves_an_ask_out_is_sent_back_once_naming_it(tmp_path):
    partial = [r for r in FULL if r["id"] != "R3"]
    events, _ = await run_scripted(tmp_path, script([brief(partial), brief(FULL)]), ctx=Context(task=TASK))
    first, second = of_type(events, "requirements_checked")
    assert first["sent_back"] and [m["text"] for m in first["missing"]] == ["lockout", "5 attempts"]
    assert second["missing"] == []
    assert len([e for e in of_type(events, "model_call") if e["role"] == "planner"]) == 2
    assert set(statuses(events).values()) == {"met"}


async def test_what_is_still_missing_after_the_send_back_is_dropped_never_met(tmp_path):
    partial = [r for r in FULL if r["id"] != "R3"]
    lacking = "## Rules\n\nPasswords are at least 14 characters."  # no lockout in the document
    events, _ = await run_scripted(tmp_path, script([brief(partial), brief(partial)], step_1=lacking),
                                   ctx=Context(task=TASK))
    assert statuses(events)["5 attempts"] == statuses(events)["lockout"] == "dropped"
    [traced] = of_type(events, "requirements_traced")
    assert traced["coverage"] == {"met": 3, "total": 5}
    assert traced["gaps"].startswith("Covers 3 of 5 requirements of the task. Not covered: R5")
    # The recap's first line says so, whatever the summarizer wrote.
    assert of_type(events, "summary_ready")[0]["summary"].startswith(traced["gaps"])


async def test_a_document_that_lacks_what_its_requirement_asks_is_unmet_with_why(tmp_path):
    events, _ = await run_scripted(tmp_path, script([brief(FULL)], step_2="## Other\n\nNothing on that."),
                                   ctx=Context(task=TASK))
    [traced] = of_type(events, "requirements_traced")
    passkeys = next(r for r in traced["requirements"] if r["id"] == "R4")
    assert passkeys["status"] == "unmet" and "passkeys" in passkeys["detail"]


async def test_an_unusable_reply_to_the_send_back_keeps_the_first_brief(tmp_path):
    partial = [r for r in FULL if r["id"] != "R2"]
    events, _ = await run_scripted(tmp_path, script([brief(partial), "not json"]), ctx=Context(task=TASK))
    assert of_type(events, "run_completed")
    # The document has the 14 characters although the brief never listed them: met, and it says so.
    dropped = next(r for r in of_type(events, "requirements_traced")[0]["requirements"] if r["text"] == "14-character")
    assert dropped["status"] == "met" and "did not list" in dropped["detail"]


async def test_a_declined_run_records_every_ask_as_declined(tmp_path):
    declined = json.dumps(scripting.declined_brief())
    events, _ = await run_scripted(tmp_path, script([declined]), ctx=Context(task=TASK))
    assert of_type(events, "run_declined")
    assert set(statuses(events).values()) == {"declined"}


async def test_a_halted_run_traces_what_it_released(tmp_path):
    data = script([brief(FULL)])
    data["steps"]["2"]["verifier"] = [{"error": "timeout"}, {"error": "timeout"}]
    events, _ = await run_scripted(tmp_path, data, ctx=Context(task=TASK))
    assert of_type(events, "run_halted")
    [traced] = of_type(events, "requirements_traced")
    passkeys = next(r for r in traced["requirements"] if r["id"] == "R4")
    assert passkeys["status"] == "unmet" and "not released" in passkeys["detail"]
    assert events[-1].type == "run_halted"


async def _redo(tmp_path, redone: str, instruction: str):
    path = scripting.write(tmp_path, scripting.script({2: {"executor": [redone], "verifier": [PASS]}}, planner=[],
                                                      n_steps=2))
    provider = ScriptedProvider(path)
    carried = {1: CarriedStep(1, "Part 1", "passed", STEP_1), 2: CarriedStep(2, "Part 2", "passed", STEP_2)}
    redo = Redo(run=7, step=2, brief=json.loads(brief(FULL)), carried=carried, instruction=instruction)
    orchestrator = Orchestrator(Context(task=TASK), parse_shorthand(f"scripted:{path}"),
                                {role: provider for role in ROLES}, settings=RunSettings(redo=redo))
    return [event async for event in orchestrator.events()]


async def test_a_redo_whose_instruction_changed_nothing_is_declined_and_releases_nothing(tmp_path):
    events = await _redo(tmp_path, STEP_2, "Say that passkeys are mandatory for administrators")
    assert of_type(events, "run_declined") and not of_type(events, "step_released")
    assert "word for word" in of_type(events, "run_declined")[0]["reason"]


async def test_a_redo_instruction_that_states_a_value_is_one_more_requirement_of_its_step(tmp_path):
    events = await _redo(tmp_path, "## Passkeys\n\nPasskeys are preferred.", "Rotate recovery codes every 90 days")
    assert of_type(events, "run_completed")
    [traced] = of_type(events, "requirements_traced")
    instruction = traced["requirements"][-1]
    assert instruction["text"] == "Rotate recovery codes every 90 days" and instruction["steps"] == [2]
    assert instruction["status"] == "unmet"
