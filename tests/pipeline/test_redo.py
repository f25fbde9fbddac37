"""Redo one step (docs/working-loop.md, "Redo a step"): the release state machine given the earlier
run's steps as plain data, without Django."""
from __future__ import annotations

from pipeline.context import Context
from pipeline.orchestrator import CarriedStep, Orchestrator, Redo, RunSettings
from pipeline.providers.scripted import ScriptedProvider
from pipeline.topology import ROLES, parse_shorthand
from tests import scripting
from tests.pipeline.helpers import of_type
from tests.scripting import PASS, fail

WARNING = "Released with a warning: the verifier found issues in this step twice."


def _carried(n: int = 3, unreleased: tuple[int, ...] = ()) -> dict[int, CarriedStep]:
    return {i: CarriedStep(index=i, title=f"Part {i}", badge=None if i in unreleased else "passed",
                           content=None if i in unreleased else f"Earlier part {i}.",
                           warnings=[WARNING] if i == 2 else [], checked_by="model",
                           unsourced=[{"text": "24 h", "kind": "deadline"}] if i == 3 else None,
                           sources=[] if i == 3 else None)
            for i in range(1, n + 1)}


async def _redo(tmp_path, steps: dict, *, step: int = 2, instruction: str = "", carried=None, n: int = 3):
    path = scripting.write(tmp_path, scripting.script(steps, planner=[], n_steps=n))
    provider = ScriptedProvider(path)
    redo = Redo(run=41, step=step, brief=scripting.brief(n), carried=carried or _carried(n), instruction=instruction)
    orchestrator = Orchestrator(Context(task="Draft an access-control note"), parse_shorthand(f"scripted:{path}"),
                                {role: provider for role in ROLES}, settings=RunSettings(redo=redo))
    return [event async for event in orchestrator.events()], provider


async def test_a_redo_carries_the_other_steps_over_and_inspects_the_redone_one_anew(tmp_path):
    # The verifier fails the draft and its re-render: released with a warning, under the same rules.
    events, provider = await _redo(tmp_path, {2: {"executor": ["A.", "B."], "verifier": [fail(), fail()]}})
    released = of_type(events, "step_released")
    assert [r["step"] for r in released] == [1, 2, 3]
    assert [r.get("carried_over", False) for r in released] == [True, False, True]
    assert [r.get("carried_from") for r in released] == [41, None, 41]
    assert released[0]["content"] == "Earlier part 1." and released[2]["content"] == "Earlier part 3."
    assert released[1]["badge"] == "warning" and released[1]["content"] == "B."
    assert not any(c.role == "planner" for c in provider.calls)  # the brief is the earlier run's
    inspected = {e["step"] for e in of_type(events, "attempt_drafted")} | {e["step"] for e in of_type(events, "verdict_recorded")}
    assert inspected == {2}  # carried steps are not inspected again
    assert of_type(events, "brief_ready")[0]["brief"]["steps"][2]["title"] == "Part 3"
    carried_specifics = [e for e in of_type(events, "specifics_listed") if e["step"] == 3]
    assert carried_specifics == [{"step": 3, "unsourced": [{"text": "24 h", "kind": "deadline"}], "sources": [],
                                  "error": None}]
    recap = [c for c in provider.calls if c.role == "summarizer"][0]
    assert "Earlier part 1." in recap.messages[-1].content and "B." in recap.messages[-1].content
    assert events[-1].type == "run_completed"


async def test_a_verifier_that_fails_twice_then_passes_gives_passed_after_rerender(tmp_path):
    events, _ = await _redo(tmp_path, {2: {"executor": ["A.", "B."], "verifier": [fail(), PASS]}})
    assert of_type(events, "step_released")[1]["badge"] == "passed_after_rerender"
    assert of_type(events, "step_rerendering")[0]["step"] == 2


async def test_the_instruction_reaches_the_executor_and_never_the_verifier(tmp_path):
    instruction = "Use the 24 h deadline from our policy."
    events, provider = await _redo(tmp_path, {2: {"executor": ["A.", "B."], "verifier": [fail(), PASS]}},
                                   instruction=instruction)
    executor = [c for c in provider.calls if c.role == "executor"]
    verifier = [c for c in provider.calls if c.role == "verifier"]
    assert len(executor) == 2 and all(instruction in c.messages[-1].content for c in executor)
    assert verifier and not any(instruction in m.content for c in verifier for m in c.messages)
    assert events[-1].type == "run_completed"


async def test_a_redone_step_without_a_verdict_halts_and_nothing_after_it_is_carried(tmp_path):
    events, _ = await _redo(tmp_path, {2: {"executor": ["A."], "verifier": [{"error": "timeout"}] * 2}})
    assert [r["step"] for r in of_type(events, "step_released")] == [1]
    assert of_type(events, "step_halted")[0]["step"] == 2
    assert of_type(events, "step_not_released") == [{"step": 3}]
    assert events[-1].type == "run_halted"


async def test_a_step_the_earlier_run_did_not_release_cannot_be_carried(tmp_path):
    events, _ = await _redo(tmp_path, {1: {"executor": ["A."], "verifier": [PASS]}}, step=1,
                            carried=_carried(3, unreleased=(3,)))
    assert [r["step"] for r in of_type(events, "step_released")] == [1, 2]
    halted = of_type(events, "step_halted")[0]
    assert halted["step"] == 3 and "run 41 did not release this step" in halted["reason"]
    assert events[-1].type == "run_halted"
