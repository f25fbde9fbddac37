"""The real LiteLLM proxy in front of an upstream that cuts its replies short: a fragment or an
empty reply is never released as a complete step.

Behind the proxy a cut stream (`[DONE]` with no finish reason, as llama-cpp-python sends when
another request interrupts it, or a connection closed early) arrives with `finish_reason: "stop"`
and a usage the proxy counted itself. The `litellm` profile does not stream, so the cut is an
error there; a role that streams anyway gets the fragment, and an empty one is still never
released. The upstream here is a loopback server; the proxy is the real one (litellm_proxy.py).
"""
from __future__ import annotations

import json

import pytest

from pipeline.context import Context
from pipeline.orchestrator import Orchestrator
from pipeline.providers import build_role_providers, close_all
from pipeline.providers.base import CompletionRequest, Message
from pipeline.providers.registry import OPERATOR
from pipeline.topology import ROLES, parse_topology
from tests import scripting
from tests.pipeline.loopback import Answer, LoopbackServer, sse_answer
from tests.providers.litellm_proxy import LiteLLMProxy

FRAGMENT = "Access is requested through the service desk "
RECAP = "The access note was drafted."


def delta(content: str | None = None, **delta_extra) -> dict:
    part = {"role": "assistant", **delta_extra} if content is None else {"content": content}
    return {"id": "up-1", "object": "chat.completion.chunk", "model": "upstream",
            "choices": [{"index": 0, "delta": part, "finish_reason": None}]}


def cutting_upstream(body: dict, headers: dict) -> Answer:
    """What a server cut short sends: streamed, a role chunk, maybe a fragment, then [DONE] and no
    finish reason (or just the end of the connection); not streamed, the start of a JSON body.
    `no-usage` answers whole, without a usage (llama-cpp-python's streams have none)."""
    if body["model"] == "no-usage":
        return Answer(parts=[json.dumps({"id": "up-3", "object": "chat.completion", "model": "upstream", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": FRAGMENT + "and approved."},
             "finish_reason": "stop"}]})], content_type="application/json")
    fragment = "" if body["model"] == "cut-empty" else FRAGMENT
    if body.get("stream"):
        chunks = [delta()] + ([delta(fragment)] if fragment else [])
        return sse_answer(*chunks, *(["[DONE]"] if body["model"] != "cut-close" else []))
    start = json.dumps({"id": "up-2", "object": "chat.completion", "model": "upstream", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": fragment + "and approved."}, "finish_reason": "stop"}]})
    return Answer(parts=[start[:len(start) // 2]], content_type="application/json")


@pytest.fixture(scope="module")
def upstream():
    with LoopbackServer(cutting_upstream) as server:
        yield server


@pytest.fixture(scope="module")
def proxy(tmp_path_factory, upstream):
    deployments = {
        "beyond-planner": ("openai/gpt-4o-mini", json.dumps(scripting.brief(1))),
        "beyond-verifier": ("openai/gpt-4o-mini", scripting.PASS),
        "beyond-summarizer": ("openai/gpt-4o-mini", RECAP),
        **{name: {"model": f"openai/{name}", "api_base": upstream.base_url} for name in
           ("cut-done", "cut-close", "cut-empty", "no-usage")},
    }
    server = LiteLLMProxy(tmp_path_factory.mktemp("litellm"), deployments).start()
    yield server
    server.stop()


def topology(base_url: str, executor: str, **executor_profile) -> dict:
    roles = {role: {"provider": "openai", "model": f"beyond-{role}", "base_url": base_url, "profile": "litellm"}
             for role in ROLES}
    roles["executor"] = {"provider": "openai", "model": executor, "base_url": base_url,
                         "profile": {"name": "litellm", **executor_profile}}
    return roles


async def run(topo: dict) -> list:
    parsed = parse_topology(topo)
    providers = build_role_providers(parsed, address_policy=OPERATOR, env={})
    events = [e async for e in Orchestrator(Context(task="Draft an access-control note"), parsed, providers).events()]
    await close_all(providers)
    return events


@pytest.mark.parametrize("executor", ["cut-done", "cut-close", "cut-empty"])
async def test_with_the_litellm_profile_a_cut_upstream_is_an_error_and_nothing_is_released(proxy, executor):
    events = await run(topology(proxy.base_url, executor))
    assert events[-1].type == "run_halted", proxy.log_tail()
    assert [e for e in events if e.type == "step_released"] == []
    calls = [e.data for e in events if e.type == "model_call" and e.data["role"] == "executor"]
    assert calls and all(c["error"] for c in calls)  # every executor call failed: no draft at all
    assert not any(e.type == "attempt_drafted" for e in events)


@pytest.mark.parametrize("executor", ["cut-done", "cut-close"])
async def test_streamed_through_the_proxy_a_cut_is_never_a_plain_pass(proxy, executor):
    """Why the profile does not stream: the proxy turns the cut into finish_reason "stop" and
    counts a usage of its own (recorded as not reported). Streamed anyway, nothing tells a cut
    reply from a whole one, so every streamed draft's completeness is unknown (`truncated: null`):
    rendered again, then released with a warning that says so, never as passed."""
    events = await run(topology(proxy.base_url, executor, stream=True))
    drafted = [e.data for e in events if e.type == "attempt_drafted"]
    assert drafted[0]["draft"] == FRAGMENT and all(d["truncated"] is None for d in drafted)
    calls = [e.data for e in events if e.type == "model_call" and e.data["role"] == "executor"]
    assert calls and all(c["finish_reason"] == "stop" and c["error"] is None for c in calls)
    assert all(c["usage"] is None for c in calls)  # the proxy's own count, not the model's
    released = [e.data for e in events if e.type == "step_released"]
    assert released and all(r["badge"] not in ("passed", "passed_after_rerender") for r in released)
    assert all(r["warnings"][0].startswith("Completeness unknown") for r in released)
    findings = [i["type"] for e in events if e.type == "verdict_recorded" and e.data["source"] == "mechanical"
                for i in e.data["parsed"]["issues"]]
    assert "completeness_unknown" in findings


async def test_streamed_through_the_proxy_an_empty_cut_is_never_released(proxy):
    """llama-cpp-python behind LiteLLM once gave two empty steps, released as passed."""
    events = await run(topology(proxy.base_url, "cut-empty", stream=True))
    drafts = [e.data for e in events if e.type == "attempt_drafted"]
    assert [d["draft"] for d in drafts] == ["", ""]  # "complete" replies with nothing in them
    assert [e for e in events if e.type == "step_released"] == []
    assert events[-1].type == "run_halted"
    assert [e.data["reason"] for e in events if e.type == "step_halted"] == [
        "the executor's draft was empty on the second attempt too; an empty step is never released"]


async def test_usage_the_upstream_never_reported_is_recorded_as_not_reported(proxy):
    """Not streamed, the proxy answers zeros for it (and a cost of 0.0 worked out from them)."""
    topo = parse_topology(topology(proxy.base_url, "no-usage"))
    providers = build_role_providers(topo, address_policy=OPERATOR, env={})
    result = await providers["executor"].complete(CompletionRequest(
        role="executor", model="no-usage", messages=(Message("user", "Draft."),)))
    await close_all(providers)
    assert result.text == FRAGMENT + "and approved." and result.raw["usage"]["prompt_tokens"] == 0
    assert (result.usage, result.cost, result.cost_source) == (None, None, None)
