"""Property: under any mix of scripted faults, released content always had a parseable verdict
recorded for exactly that content, and releases form an in-order prefix of the plan."""
from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

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
)
step_script = st.fixed_dictionaries({
    "executor": st.lists(executor_reply, min_size=0, max_size=2),
    "verifier": st.lists(verifier_reply, min_size=0, max_size=4),
})


def _parseable(raw: str | None) -> bool:
    try:
        parse_verdict(raw or "")
        return True
    except ReplyError:
        return False


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(step_script, min_size=1, max_size=5), concurrency=st.integers(1, 8))
def test_released_implies_a_parseable_verdict_for_exactly_that_content(steps, concurrency):
    data = scripting.script({i: s for i, s in enumerate(steps, 1)})
    with tempfile.TemporaryDirectory() as tmp:
        events, _ = asyncio.run(run_scripted(Path(tmp), data, concurrency=concurrency, checks=MechanicalChecks(citation_gate=lambda b, d: [])))

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
            released.append(step)

    assert released == list(range(1, len(released) + 1))  # an in-order prefix
    final = events[-1].type
    assert final in ("run_completed", "run_halted")
    if final == "run_completed":
        assert released == list(range(1, len(steps) + 1))
    else:
        halted = [e.data["step"] for e in events if e.type == "step_halted"]
        assert halted == [len(released) + 1]
    assert sum(e.type in ("run_completed", "run_halted", "run_failed") for e in events) == 1
