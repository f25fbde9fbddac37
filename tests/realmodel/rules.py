"""What must hold of a run whatever a real model wrote: the release rules and the records
(docs/verifier-contract.md, "The release rules"). Nothing here looks at the model's wording."""
from __future__ import annotations

import json

from beyond_site.runs.models import ModelCall, Run

MODEL = "gemma-3-270m"
TRUNCATED = "Truncated: the model's output limit cut this step off before its end."
#: Small ceilings, so that a run is a minute or two on a loaded two-core machine. A 270M model
#: given a tight executor limit is cut off often: the truncated draft's marking is exercised too.
MAX_TOKENS = {"planner": 400, "executor": 48, "verifier": 96, "summarizer": 40}
FINISHED = {"completed", "halted", "declined", "failed"}


def role(base_url: str, name: str, **extra) -> dict:
    return {"provider": "openai", "model": MODEL, "base_url": base_url, "profile": "llama-cpp-python",
            "max_tokens": MAX_TOKENS[name], **extra}


def topology(base_url: str, **overrides) -> dict:
    """All four roles on the real model, through the `llama-cpp-python` profile."""
    roles = {name: role(base_url, name) for name in MAX_TOKENS}
    roles.update(overrides)
    return roles


def model_verdicts(attempt: dict) -> list[dict]:
    return [v for v in attempt["verdicts"] if v["source"] == "model"]


def check_release_rules(trace: dict) -> None:
    """Every released step was inspected on exactly what was released; nothing after a step that
    was not released is released; an unparseable verdict was asked again, then halted; a truncated
    draft that was released says so; how the run ended matches what its steps show."""
    run, steps = trace["run"], trace["steps"]
    released = [s for s in steps if s["status"] == "released"]
    # Release is strictly in document order: the released steps are a prefix.
    assert [s["index"] for s in released] == list(range(1, len(released) + 1)), steps
    releases = [e["step"] for e in trace["events"] if e["type"] == "step_released"]
    assert releases == [s["index"] for s in released]
    for step in released:
        assert step["badge"] in {"passed", "passed_after_rerender", "warning"}, step
        last = step["attempts"][-1]
        assert last["draft"] == step["content"], "released text is the inspected draft"
        parsed = [v for v in model_verdicts(last) if v["parsed"] is not None]
        assert parsed, f"step {step['index']} was released with no parseable model verdict on its draft"
        if step["badge"] in {"passed", "passed_after_rerender"}:
            assert parsed[-1]["parsed"]["pass"] is True
            assert len(step["attempts"]) == (1 if step["badge"] == "passed" else 2)
        else:
            assert len(step["attempts"]) == 2  # inspected twice, did not pass
        assert any(ch.isalnum() for ch in step["content"]), "an empty draft is never released"
        assert (TRUNCATED in step["warnings"]) == bool(last["truncated"]), step
        if last["truncated"]:  # a draft cut off by the output limit is never a pass
            assert step["badge"] == "warning", step
    for step in steps:
        for attempt in step["attempts"]:
            verdicts = model_verdicts(attempt)
            # An unparseable verdict (or a failed call) is asked once more, never taken as a pass.
            if verdicts and verdicts[0]["parsed"] is None:
                assert len(verdicts) == 2 or run["status"] != "completed", attempt
                if len(verdicts) == 2 and verdicts[1]["parsed"] is None:
                    assert step["status"] != "released" and run["status"] == "halted", step
    if run["status"] == "completed":
        assert len(released) == len(steps) and trace["summary"] is not None
    if run["status"] in {"halted", "declined", "failed", "cancelled"}:
        assert trace["summary"] is None
    if run["status"] == "declined":
        assert not steps and run["decline_reason"]
    if run["status"] == "failed":
        # Only a brief that did not validate twice fails a run here: it was asked for twice.
        assert trace["brief"] is None and not steps
        # (a research run's planner model is asked for its search queries first, under the same role)
        assert ModelCall.objects.filter(run_id=run["id"], role="planner").count() >= 2


def check_call_records(run_id: int, *, roles: set[str]) -> list[ModelCall]:
    """Every call of the run is recorded; every one that got a reply has the server's own token
    counts (a prompt is never empty) and its latency; the model served is the one asked for."""
    calls = list(ModelCall.objects.filter(run_id=run_id).order_by("pk"))
    assert calls and {c.role for c in calls} <= roles | {"research"}, [c.role for c in calls]
    for call in calls:
        if call.error or call.provider != "openai":  # a scripted role's replies report no usage
            continue
        assert call.input_tokens and call.input_tokens > 0, (call.role, call.input_tokens)
        assert call.output_tokens is not None and call.output_tokens >= 0, (call.role, call.output_tokens)
        assert call.latency_s > 0 and call.finish_reason in {"stop", "length"}, (call.role, call.finish_reason)
        assert call.model == MODEL and call.model_served == MODEL
        assert call.cost is None  # a local server charges nothing and reports no price
    assert sum(c.output_tokens or 0 for c in calls if c.provider == "openai") > 0
    return calls


def finished(trace: dict, *, statuses=FINISHED) -> dict:
    assert trace["run"]["status"] in statuses, trace["run"]
    assert Run.objects.get(pk=trace["run"]["id"]).status == trace["run"]["status"]
    return trace


def dumps(trace: dict) -> str:
    return json.dumps(trace["run"], indent=1)[:2000]
