"""Property: under any mix of scripted faults and any budget, released content always had a
parseable verdict recorded for exactly that content and is never empty, releases form an in-order
prefix of the plan, no model call is answered once the run's spending went over its budget (nor
goes over it at all when every call is bounded), and a brief that declines the task releases nothing."""
from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from pipeline.budget import Budget
from pipeline.checks import MechanicalChecks
from pipeline.parsing import ReplyError, parse_verdict
from tests import scripting
from tests.pipeline.helpers import run_scripted
from tests.scripting import PASS, fail

ERRORS = [{"error": e} for e in ("timeout", "http_500", "http_429", "crash")]
verifier_reply = st.one_of(
    st.just(PASS), st.just(fail()), st.sampled_from(ERRORS),
    st.sampled_from(["", "nonsense", '{"pass": true, "issues": [{"type": "contradiction", "detail": "x"}]}',
                     '{"pass": false, "issues": []}', "[]", '{"pass": 1, "issues": []}',
                     '{"passed": true}', '{"pass": true}', '{"pass": true, "issues": [], "reason": "ok"}']),
)
executor_reply = st.one_of(
    st.text(min_size=0, max_size=30).map(lambda t: f"Draft {t}"),
    st.builds(lambda t: {"content": f"Cut {t}", "finish_reason": "length"}, st.text(max_size=10)),
    st.sampled_from(ERRORS),
    # What a stream cut short behind a gateway arrives as: a "complete" reply with nothing in it.
    st.sampled_from(["", " \n ", "\u200b", "**", "\u3000"]),
)


def _with_usage(reply_and_tokens):
    """The reply reporting `tokens` tokens of usage (errors report none, whatever they carry)."""
    reply, tokens = reply_and_tokens
    reply = {"content": reply} if isinstance(reply, str) else dict(reply)
    return {**reply, "usage": {"input": tokens // 2, "output": tokens - tokens // 2}}


def used(replies):
    return st.tuples(replies, st.integers(0, 60)).map(_with_usage)


step_script = st.fixed_dictionaries({
    "executor": st.lists(used(executor_reply), min_size=0, max_size=2),
    "verifier": st.lists(used(verifier_reply), min_size=0, max_size=4),
})


def _parseable(raw: str | None) -> bool:
    try:
        parse_verdict(raw or "")
        return True
    except ReplyError:
        return False


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(step_script, min_size=1, max_size=5), concurrency=st.integers(1, 8),
       max_tokens=st.one_of(st.none(), st.integers(0, 300), st.integers(3000, 30_000)), plan_tokens=st.integers(0, 60),
       role_max_tokens=st.sampled_from([None, 60]), declines=st.integers(0, 9).map(lambda n: n == 0))
def test_released_implies_a_parseable_verdict_for_exactly_that_content(steps, concurrency, max_tokens, plan_tokens,
                                                                      role_max_tokens, declines):
    data = scripting.script({i: s for i, s in enumerate(steps, 1)})
    if declines:  # the same scripted steps stand ready: none of them may be asked for
        data["planner"] = [json.dumps(scripting.declined_brief())]
    data["planner"] = [_with_usage((reply, plan_tokens)) for reply in data["planner"]]
    with tempfile.TemporaryDirectory() as tmp:
        events, _ = asyncio.run(run_scripted(Path(tmp), data, concurrency=concurrency,
                                             checks=MechanicalChecks(citation_gate=lambda b, d: []),
                                             budget=Budget(max_tokens=max_tokens), max_tokens=role_max_tokens))

    drafts: dict[tuple[int, int], str] = {}
    good_verdicts: set[tuple[int, int]] = set()
    released: list[int] = []
    for event in events:
        d = event.data
        if event.type == "attempt_drafted":
            drafts[(d["step"], d["attempt"])] = d["draft"]
        elif event.type == "verdict_recorded" and d["source"] == "model" and d["parsed"] is not None:
            assert _parseable(d["raw"])  # a recorded parse is a real parse of the raw reply
            assert parse_verdict(d["raw"]).as_json() == d["parsed"]
            good_verdicts.add((d["step"], d["attempt"]))
        elif event.type == "step_released":
            step = d["step"]
            final_attempt = max(a for (s, a) in drafts if s == step)
            assert drafts[(step, final_attempt)] == d["content"]
            assert (step, final_attempt) in good_verdicts
            assert any(ch.isalnum() for ch in d["content"])  # never an empty step
            released.append(step)

    assert released == list(range(1, len(released) + 1))  # an in-order prefix
    final = events[-1].type
    if declines and _briefed(events):
        assert final == "run_declined" and released == []
        assert not [e for e in events if e.type in ("step_rendering", "summarizer_started")]
        return
    assert final in ("run_completed", "run_halted")
    halted = [e.data["step"] for e in events if e.type == "step_halted"]
    if final == "run_completed":
        assert released == list(range(1, len(steps) + 1))
    elif events[-1].data["reason"].startswith("budget:"):
        # Halted over budget: at the first step not released, or at none when none was left
        # (or no brief was made).
        assert halted == ([len(released) + 1] if len(released) < len(steps) and _briefed(events) else [])
        assert events[-1].data["step"] == (halted[0] if halted else None)
    else:
        assert halted == [len(released) + 1]
    assert sum(e.type in ("run_completed", "run_halted", "run_failed") for e in events) == 1
    _spending_stops_at_the_budget(events, max_tokens, bounded=role_max_tokens is not None)


def _briefed(events) -> bool:
    return any(e.type == "brief_ready" for e in events)


def _spending_stops_at_the_budget(events, max_tokens, *, bounded: bool):
    """Once the answered calls have gone over the budget, every later call is one cancelled in flight;
    when every call has a bound (its role's max_tokens, which the scripted replies keep to), they
    never go over at all, whatever the concurrency."""
    if max_tokens is None:
        assert not events[-1].data.get("reason", "").startswith("budget:")
        return
    spent = 0
    for event in (e for e in events if e.type == "model_call"):
        if spent > max_tokens:
            assert (event.data["error"] or "").startswith("cancelled"), (spent, max_tokens, event.data)
        elif event.data["usage"] and not event.data["error"]:
            spent += sum(event.data["usage"].values())
    if spent > max_tokens:
        assert events[-1].type == "run_halted" and events[-1].data["reason"].startswith("budget:")
    if bounded:
        assert spent <= max_tokens, (spent, max_tokens)
