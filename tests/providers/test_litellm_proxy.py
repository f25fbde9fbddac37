"""Beyond's `openai` provider with the `litellm` profile against the real LiteLLM proxy.

One proxy serves the module: a subprocess on a free loopback port, canned-reply deployments, no
network (see litellm_proxy.py). Each role's alias names a model behind it; the records must name
that model, from the proxy's headers, not the alias.
"""
from __future__ import annotations

import json

import pytest

from pipeline.context import Context
from pipeline.orchestrator import Orchestrator
from pipeline.providers import build_role_providers, close_all
from pipeline.providers.base import CompletionRequest, Message, PermanentError, RetryableError
from pipeline.providers.registry import OPERATOR, build_provider
from pipeline.topology import ROLES, RoleConfig, parse_topology
from tests import scripting
from tests.providers.litellm_proxy import LiteLLMProxy

DRAFT = "Access is granted per role and reviewed each quarter by the system owner."
RECAP = "Two parts of the access-control note were released."
DEPLOYMENTS = {
    "beyond-planner": ("openai/gpt-4o-mini", json.dumps(scripting.brief(2))),
    "beyond-executor": ("openai/gpt-4o-mini", DRAFT),
    "beyond-verifier": ("openai/o3-mini", scripting.PASS),
    "beyond-summarizer": ("openai/gpt-4o-mini", RECAP),
    "beyond-rate-limited": ("openai/gpt-4o-mini", "litellm.RateLimitError"),
    "beyond-mid-stream-error": ("openai/gpt-4o-mini", "Exception: mock_streaming_error"),
}


@pytest.fixture(scope="module")
def proxy(tmp_path_factory):
    # As a deployment that wants spend in its streams sets it: the usage then carries a `cost`.
    server = LiteLLMProxy(tmp_path_factory.mktemp("litellm"), DEPLOYMENTS,
                          {"include_cost_in_streaming_usage": True}).start()
    yield server
    server.stop()


def topology(base_url: str, **role_extra) -> dict:
    return {role: {"provider": "openai", "model": f"beyond-{role}", "base_url": base_url, "profile": "litellm",
                   "max_tokens": 2000, **role_extra} for role in ROLES}


def ask(model: str, **kwargs) -> CompletionRequest:
    return CompletionRequest(role="verifier", model=model, messages=(Message("user", "Check this."),), **kwargs)


async def test_a_full_run_through_the_proxy_releases_every_step_and_records_the_served_models(proxy):
    topo = parse_topology(topology(proxy.base_url))
    providers = build_role_providers(topo, address_policy=OPERATOR, env={})
    orchestrator = Orchestrator(Context(task="Draft an access-control note"), topo, providers)
    events = [event async for event in orchestrator.events()]
    await close_all(providers)

    assert events[-1].type == "run_completed", proxy.log_tail()
    released = [e.data for e in events if e.type == "step_released"]
    assert [(r["step"], r["badge"], r["content"]) for r in released] == [(1, "passed", DRAFT), (2, "passed", DRAFT)]
    assert [e.data["summary"] for e in events if e.type == "summary_ready"] == [RECAP]

    calls = [e.data for e in events if e.type == "model_call"]
    assert sorted(c["role"] for c in calls) == ["executor", "executor", "planner", "summarizer", "verifier", "verifier"]
    for call in calls:
        assert call["error"] is None and call["finish_reason"] == "stop"
        expected = DEPLOYMENTS[f"beyond-{call['role']}"][0]
        assert (call["model"], call["model_served"]) == (f"beyond-{call['role']}", expected)
        assert call["usage"]["output"] > 0  # the proxy reports usage in the stream when asked


async def test_the_profile_sends_no_effort_and_no_headroom_so_the_proxy_takes_the_request(proxy):
    provider = build_provider(RoleConfig(provider="openai", model="beyond-planner", base_url=proxy.base_url,
                                         profile="litellm"), address_policy=OPERATOR, env={})
    result = await provider.complete(ask("beyond-planner", effort="high", max_tokens=2000))
    await provider.aclose()
    assert json.loads(result.text)["steps"][0]["index"] == 1


async def test_effort_sent_to_a_non_reasoning_deployment_is_a_permanent_400_not_retried(proxy):
    cfg = RoleConfig(provider="openai", model="beyond-planner", base_url=proxy.base_url,
                     profile={"name": "litellm", "effort_field": "reasoning_effort"})
    provider = build_provider(cfg, address_policy=OPERATOR, env={})
    with pytest.raises(PermanentError) as caught:
        await provider.complete(ask("beyond-planner", effort="high"))
    await provider.aclose()
    assert caught.value.kind == "http_400" and caught.value.transport_retries == 0
    assert "UnsupportedParamsError" in str(caught.value) and "reasoning_effort" in str(caught.value)


async def executor_reply(proxy, **profile):
    cfg = RoleConfig(provider="openai", model="beyond-executor", base_url=proxy.base_url,
                     profile={"name": "litellm", **profile})
    provider = build_provider(cfg, address_policy=OPERATOR, env={})
    result = await provider.complete(ask("beyond-executor"))
    await provider.aclose()
    return result


async def test_a_non_streamed_reply_carries_the_proxys_cost_as_an_estimate(proxy):
    result = await executor_reply(proxy)  # the profile does not stream
    assert result.text == DRAFT and result.model_served == "openai/gpt-4o-mini"
    assert result.cost_source == "estimated" and result.cost > 0
    assert result.usage is not None and result.usage.output > 0


async def test_a_rate_limited_deployment_gets_one_retry_of_ours_on_top_of_the_proxys_own(proxy):
    provider = build_provider(RoleConfig(provider="openai", model="beyond-rate-limited", base_url=proxy.base_url,
                                         profile="litellm"), address_policy=OPERATOR, env={})
    with pytest.raises(RetryableError) as caught:
        await provider.complete(ask("beyond-rate-limited"))
    await provider.aclose()
    assert caught.value.kind == "http_429" and caught.value.transport_retries == 1
    assert "rate limit" in str(caught.value)


async def test_a_mid_stream_error_is_never_a_reply(proxy):
    provider = build_provider(RoleConfig(provider="openai", model="beyond-mid-stream-error", base_url=proxy.base_url,
                                         profile="litellm", retries=0), address_policy=OPERATOR, env={})
    with pytest.raises(RetryableError) as caught:
        await provider.complete(ask("beyond-mid-stream-error"))
    await provider.aclose()
    assert caught.value.kind == "http_529"


async def test_a_streamed_reply_carries_the_proxys_cost_as_an_estimate_and_its_usage_as_not_reported(proxy):
    """LiteLLM puts its price table's figure in a streamed usage as `cost`: an estimate, whatever
    the field is called; and its streamed usage may be its own count, so it is not recorded."""
    result = await executor_reply(proxy, stream=True)
    assert result.text == DRAFT and result.finish_reason == "stop"
    assert result.raw["usage"]["cost"] > 0, result.raw  # what the proxy sent
    assert result.cost_source == "estimated" and result.cost == result.raw["usage"]["cost"]
    assert result.usage is None
