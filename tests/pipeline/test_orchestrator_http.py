"""The orchestrator over the real HTTP provider (httpx.MockTransport): what a permanent error
changes for the planner, and what the call records say about usage and cost."""
from __future__ import annotations

import json

import httpx

from pipeline.context import Context
from pipeline.orchestrator import Orchestrator
from pipeline.providers import build_role_providers, close_all
from pipeline.providers.registry import OPERATOR
from pipeline.topology import ROLES, parse_topology
from tests import scripting
from tests.pipeline.helpers import of_type
from tests.pipeline.http_replay import chunk, sse

BASE_URL = "http://127.0.0.1:9/v1"


async def run(answer, *, profile="generic") -> list:
    """One run whose four roles all use `answer(role_model, body) -> httpx.Response`."""
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        return answer(body["model"], body)

    topo = parse_topology({role: {"provider": "openai", "model": role, "base_url": BASE_URL, "profile": profile,
                                  "retries": 0} for role in ROLES})
    providers = build_role_providers(topo, address_policy=OPERATOR, env={}, transport=httpx.MockTransport(handler))
    events = [e async for e in Orchestrator(Context(task="Draft a note"), topo, providers).events()]
    await close_all(providers)
    return events


def stream_of(text: str, usage: dict | None = None) -> httpx.Response:
    tail = [{"choices": [], "usage": usage}] if usage else []
    return sse(chunk(text), chunk("", "stop"), *tail, "data: [DONE]")


REPLIES = {"planner": json.dumps(scripting.brief(1)), "executor": "A draft.", "verifier": scripting.PASS,
           "summarizer": "A recap."}


async def test_a_permanent_400_gets_no_second_planner_attempt():
    events = await run(lambda model, body: httpx.Response(400, json={"error": {"message": "UnsupportedParamsError"}}))
    assert len(of_type(events, "planner_started")) == 1
    assert len(of_type(events, "model_call")) == 1
    [failed] = of_type(events, "run_failed")
    assert "one attempt" in failed["reason"] and "UnsupportedParamsError" in failed["reason"]


async def test_a_final_retryable_error_still_gets_the_second_planner_attempt():
    answers = iter([httpx.Response(503, json={"error": {"message": "busy"}})])

    def answer(model, body):
        return next(answers, None) or stream_of(REPLIES[model])

    events = await run(answer)
    assert len(of_type(events, "planner_started")) == 2
    assert events[-1].type == "run_completed"


async def test_usage_not_reported_is_recorded_as_none_and_reported_usage_with_its_cost_source():
    def answer(model, body):
        usage = {"prompt_tokens": 7, "completion_tokens": 3, "cost": 0.001} if model == "verifier" else None
        return stream_of(REPLIES[model], usage)

    events = await run(answer)
    calls = {c["role"]: c for c in of_type(events, "model_call")}
    assert calls["executor"]["usage"] is None
    assert (calls["executor"]["cost"], calls["executor"]["cost_source"]) == (None, None)
    assert calls["verifier"]["usage"] == {"input": 7, "cache_read": 0, "cache_write": 0, "output": 3, "reasoning": 0}
    assert (calls["verifier"]["cost"], calls["verifier"]["cost_source"]) == (0.001, "reported")


async def test_a_cut_stream_never_becomes_a_released_step():
    """The empty draft released with a passed badge: a role chunk, then [DONE], no finish reason."""
    def answer(model, body):
        if model == "executor":
            return sse({"model": "m", "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]},
                       "data: [DONE]")
        return stream_of(REPLIES[model])

    events = await run(answer)
    assert of_type(events, "step_released") == []
    assert events[-1].type == "run_halted"
    [executor_call] = [c for c in of_type(events, "model_call") if c["role"] == "executor"]
    assert executor_call["error"].startswith("incomplete:")
