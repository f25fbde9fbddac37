"""A run's budget: tokens and cost counted call by call; reaching a limit halts the run with a
`budget:` reason, releases nothing more, and cancels (and records) the calls in flight."""
from __future__ import annotations

import asyncio
import json
import re

from pipeline import events as ev
from pipeline.budget import Budget, Spending
from pipeline.providers.scripted import ScriptedProvider
from pipeline.providers.base import Completion, Usage
from tests import scripting
from tests.pipeline.helpers import of_type, run_scripted
from tests.scripting import PASS


def used(content: str, tokens: int, cost: float | None = None, **extra) -> dict:
    reply = {"content": content, "usage": {"input": tokens // 2, "output": tokens - tokens // 2}, **extra}
    if cost is not None:
        reply["cost"] = cost
    return reply


def plan(n_steps: int, tokens: int = 100, cost: float | None = None) -> list:
    return [used(json.dumps(scripting.brief(n_steps)), tokens, cost)]


def finished(events) -> tuple[str, dict]:
    return events[-1].type, events[-1].data


async def test_a_step_that_goes_over_the_token_budget_halts_the_run_and_nothing_after_it_is_released(tmp_path):
    data = scripting.script({
        1: {"executor": [used("Part one.", 100)], "verifier": [used(PASS, 100)]},
        2: {"executor": [{**used("Part two.", 5000), "delay_s": 0.2}], "verifier": [used(PASS, 100)]},
        3: {"executor": [{**used("Part three.", 100), "delay_s": 5}], "verifier": [used(PASS, 100)]},
    }, planner=plan(3), summarizer=[used("Recap.", 50)])
    events, provider = await run_scripted(tmp_path, data, budget=Budget(max_tokens=1000), concurrency=1)
    kind, data_ = finished(events)
    assert kind == ev.RUN_HALTED and data_["step"] == 2
    assert data_["reason"].startswith("budget:") and "over the limit of 1,000" in data_["reason"]
    assert [e["step"] for e in of_type(events, ev.STEP_RELEASED)] == [1]
    assert of_type(events, ev.STEP_HALTED) == [{"step": 2, "reason": data_["reason"]}]
    assert [e["step"] for e in of_type(events, ev.STEP_NOT_RELEASED)] == [3]
    assert of_type(events, ev.SUMMARY_READY) == []
    # Step 2's draft went over: it is never inspected, and no call starts after it.
    assert [c.role for c in provider.calls if c.step_index == 2] == ["executor"]
    assert not any(c.step_index == 3 for c in provider.calls)


async def test_calls_in_flight_when_the_budget_is_reached_are_cancelled_and_recorded(tmp_path):
    # Each executor call may use up to about 3,300 tokens (its prompt and max_tokens 200): three fit
    # beside each other under 20,000. Step 1's reports far more than it could (a lying endpoint).
    data = scripting.script({
        1: {"executor": [{**used("Part one.", 50_000), "delay_s": 0.05}], "verifier": [PASS]},
        2: {"executor": [{**used("Part two.", 10), "delay_s": 5}], "verifier": [PASS]},
        3: {"executor": [{**used("Part three.", 10), "delay_s": 5}], "verifier": [PASS]},
    }, planner=plan(3))
    events, _ = await run_scripted(tmp_path, data, budget=Budget(max_tokens=20_000), max_tokens=200)
    cancelled = {(c["step"], c["role"]): c["error"] for c in of_type(events, ev.MODEL_CALL)
                 if (c["error"] or "").startswith("cancelled")}
    assert sorted(cancelled) == [(2, "executor"), (3, "executor")]
    for error in cancelled.values():  # counted as what they might have used: they may have been paid for
        assert re.fullmatch(r"cancelled: the run no longer needs this call \(counted against the run's budget as "
                            r"up to [\d,]+ tokens\)", error), error
    types = [e.type for e in events]
    assert types[-1] == ev.RUN_HALTED and max(i for i, t in enumerate(types) if t == ev.MODEL_CALL) < types.index(
        ev.STEP_HALTED)
    assert of_type(events, ev.STEP_RELEASED) == []


async def test_a_planner_call_over_budget_halts_before_any_brief(tmp_path):
    data = scripting.script({1: {"executor": ["x"], "verifier": [PASS]}}, planner=plan(1, tokens=2000))
    events, provider = await run_scripted(tmp_path, data, budget=Budget(max_tokens=1000))
    kind, data_ = finished(events)
    assert kind == ev.RUN_HALTED and data_["step"] is None and data_["reason"].startswith("budget:")
    assert of_type(events, ev.BRIEF_READY) == [] and [c.role for c in provider.calls] == ["planner"]


async def test_a_budget_reached_during_the_recap_keeps_every_released_step_and_gives_no_recap(tmp_path):
    data = scripting.script({1: {"executor": [used("One.", 10)], "verifier": [used(PASS, 10)]}},
                            planner=plan(1, tokens=10), summarizer=[used("Recap.", 5000)])
    events, _ = await run_scripted(tmp_path, data, budget=Budget(max_tokens=1000))
    kind, data_ = finished(events)
    assert kind == ev.RUN_HALTED and data_["step"] is None
    assert [e["step"] for e in of_type(events, ev.STEP_RELEASED)] == [1]
    assert of_type(events, ev.SUMMARY_READY) == [] and of_type(events, ev.STEP_HALTED) == []


async def test_a_run_within_its_budget_completes_and_the_limits_are_on_the_record(tmp_path):
    data = scripting.script({1: {"executor": [used("One.", 10, 0.01)], "verifier": [used(PASS, 10, 0.01)]}},
                            planner=plan(1, tokens=10, cost=0.01), summarizer=[used("Recap.", 10, 0.01)])
    events, _ = await run_scripted(tmp_path, data, budget=Budget(max_tokens=1000, max_cost=0.5))
    assert events[-1].type == ev.RUN_COMPLETED
    assert of_type(events, ev.RUN_STARTED)[0]["budget"] == {"max_tokens": 1000, "max_cost": 0.5}


async def test_the_cost_budget_counts_reported_costs(tmp_path):
    data = scripting.script({1: {"executor": [used("One.", 10, 0.30)], "verifier": [used(PASS, 10, 0.30)]}},
                            planner=plan(1, tokens=10, cost=0.10))
    events, _ = await run_scripted(tmp_path, data, budget=Budget(max_cost=0.50))
    kind, data_ = finished(events)
    assert kind == ev.RUN_HALTED and data_["reason"] == "budget: $0.70 spent, over the limit of $0.50 per run"


async def test_a_cost_that_is_not_reported_halts_a_run_with_a_cost_budget(tmp_path):
    # Conservative: a limit that cannot be checked is not kept by hoping.
    data = scripting.script({1: {"executor": ["x"], "verifier": [PASS]}}, planner=plan(1, tokens=10))
    events, _ = await run_scripted(tmp_path, data, budget=Budget(max_cost=5.0))
    kind, data_ = finished(events)
    assert kind == ev.RUN_HALTED and data_["step"] is None
    assert data_["reason"] == ("budget: a planner call (scripted scripted) reported no cost, so the limit of "
                               "$5.00 per run cannot be kept")


async def test_without_a_budget_unreported_usage_changes_nothing(tmp_path):
    events, _ = await run_scripted(tmp_path, scripting.script({1: {"executor": ["x"], "verifier": [PASS]}}))
    assert events[-1].type == ev.RUN_COMPLETED
    assert of_type(events, ev.RUN_STARTED)[0]["budget"] is None


async def test_a_failed_call_counts_as_nothing(tmp_path):
    data = scripting.script({1: {"executor": [{"error": "http_500"}, used("x", 10)], "verifier": [used(PASS, 10)]}},
                            planner=plan(1, tokens=10))
    events, _ = await run_scripted(tmp_path, data, budget=Budget(max_tokens=25))
    # The executor's error halts the step (an executor error is final); the budget is not the reason.
    assert events[-1].type == ev.RUN_HALTED and not events[-1].data["reason"].startswith("budget:")


def test_the_offline_engine_costs_nothing_and_a_reached_limit_refuses_the_next_call():
    spending = Spending(Budget(max_tokens=100, max_cost=1.0))
    assert spending.charge("an offline call", Completion(text="x"), free=True) is None
    assert spending.charge("a call", Completion(text="x", usage=Usage(input=60, output=40), cost=0.5)) is None
    assert spending.before_call() == "budget: the limit of 100 tokens per run is reached (100 used)"


async def test_a_step_inspected_before_the_budget_ran_out_is_still_released(tmp_path):
    # Step 2's reply comes at once, before the release of step 1 had its turn: step 1 was fully
    # inspected, needs no further call, and is released; step 2 halts.
    data = scripting.script({
        1: {"executor": [used("Part one.", 10)], "verifier": [used(PASS, 10)]},
        2: {"executor": [used("Part two.", 5000)], "verifier": [PASS]},
    }, planner=plan(2, tokens=10))
    events, _ = await run_scripted(tmp_path, data, budget=Budget(max_tokens=1000), concurrency=1)
    assert [e["step"] for e in of_type(events, ev.STEP_RELEASED)] == [1]
    assert [e["step"] for e in of_type(events, ev.STEP_HALTED)] == [2]
    assert finished(events)[1]["step"] == 2


class InFlight(ScriptedProvider):
    """A scripted provider that counts its calls in flight."""

    def __init__(self, path):
        super().__init__(path)
        self.now = self.most = 0

    async def complete(self, request):
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            return await super().complete(request)
        finally:
            self.now -= 1


async def test_with_eight_steps_at_once_and_a_tight_cap_the_run_never_goes_over(tmp_path):
    """Checked only before each call, all eight executors started at once under a cap that had
    room for a few: the run recorded 20,900 tokens against 20,000, and cancelled the seven other
    calls in flight, which may well have been paid for, and counted them as nothing."""
    def step(n: int) -> dict:
        return {"executor": [{"content": f"Part {n}.", "usage": {"input": 2500, "output": 200}, "delay_s": 0.05}],
                "verifier": [{"content": PASS, "usage": {"input": 1200, "output": 50}, "delay_s": 0.05}]}

    data = scripting.script({n: step(n) for n in range(1, 9)}, planner=plan(8, tokens=2000))
    provider = InFlight(scripting.write(tmp_path, data))
    events, _ = await run_scripted(tmp_path, data, budget=Budget(max_tokens=20_000), concurrency=8, max_tokens=200,
                                   provider=provider)
    calls = of_type(events, ev.MODEL_CALL)
    spent = sum(sum(c["usage"].values()) for c in calls if c["usage"] and not c["error"])
    cancelled = [c for c in calls if (c["error"] or "").startswith("cancelled")]
    assert spent <= 20_000, spent
    assert cancelled == []  # nothing was in flight, paid for and unseen, when the run stopped
    assert provider.most > 1  # still concurrent: as many calls at once as their bounds allow
    kind, data_ = finished(events)
    assert kind == ev.RUN_HALTED and data_["reason"].startswith("budget: ")
    assert re.search(r"may use up to [\d,]+ tokens \(its prompt and max_tokens\), and [\d,]+ of the limit of "
                     r"20,000 per run remain", data_["reason"]), data_["reason"]


async def test_without_max_tokens_a_call_under_a_budget_runs_alone(tmp_path):
    data = scripting.script({n: {"executor": [{"content": f"Part {n}.", "usage": {"input": 10, "output": 10},
                                               "delay_s": 0.02}],
                                 "verifier": [used(PASS, 10)]} for n in range(1, 5)}, planner=plan(4),
                            summarizer=[used("Recap.", 10)])
    provider = InFlight(scripting.write(tmp_path, data))
    events, _ = await run_scripted(tmp_path, data, budget=Budget(max_tokens=100_000), provider=provider)
    assert finished(events)[0] == ev.RUN_COMPLETED
    assert provider.most == 1  # no bound: it may take all that remains, so nothing runs beside it
    (tmp_path / "again").mkdir()
    unlimited = InFlight(scripting.write(tmp_path / "again", data))
    await run_scripted(tmp_path / "again", data, provider=unlimited)
    assert unlimited.most > 1  # without a budget, nothing waits


async def test_a_bounded_call_that_cannot_fit_is_not_made(tmp_path):
    data = scripting.script({1: {"executor": ["x"], "verifier": [PASS]}}, planner=plan(1))
    events, provider = await run_scripted(tmp_path, data, budget=Budget(max_tokens=1000), max_tokens=200)
    assert provider.calls == [] and of_type(events, ev.MODEL_CALL) == []
    kind, data_ = finished(events)
    assert kind == ev.RUN_HALTED and re.fullmatch(
        r"budget: a planner call \(scripted \S+\) may use up to [\d,]+ tokens \(its prompt and max_tokens\), "
        r"and 1,000 of the limit of 1,000 per run remain", data_["reason"]), data_["reason"]


def test_a_cancelled_call_counts_its_whole_reservation_or_all_that_remained():
    spending = Spending(Budget(max_tokens=10_000))
    bounded = asyncio.run(spending.reserve("a call", "m", 3000))
    assert spending.settle(bounded, None, cancelled=True) is None and spending.tokens == 3000
    unbounded = asyncio.run(spending.reserve("a call", "m", None))
    assert spending.settle(unbounded, None, cancelled=True) is None and spending.tokens == 10_000
    assert spending.before_call() == "budget: the limit of 10,000 tokens per run is reached (10,000 used)"
