"""build_provider: which class serves a role, with which key, and a clear error without one."""
from __future__ import annotations

import json

import httpx
import pytest

from pipeline.providers.base import CompletionRequest, Message
from pipeline.providers.openai_compat import OpenAICompatibleProvider
from pipeline.providers.openrouter import OpenRouterProvider
from pipeline.providers.registry import OPERATOR, build_provider
from pipeline.topology import RoleConfig, TopologyError

KEY = "sk-or-v1-REGISTRY-SECRET"
REPLY = {"model": "served", "choices": [{"index": 0, "message": {"content": "hi"}, "finish_reason": "stop"}]}


class Recorder:
    def __init__(self):
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(200, json=REPLY)


def ask(model: str = "") -> CompletionRequest:
    return CompletionRequest(role="verifier", model=model, messages=(Message("user", "hello"),))


def test_it_refuses_openrouter_without_a_key():
    cfg = RoleConfig(provider="openrouter", model="z-ai/glm-5.3")
    with pytest.raises(TopologyError, match="OPENROUTER_API_KEY"):
        build_provider(cfg, address_policy=OPERATOR, env={})
    with pytest.raises(TopologyError, match="OPENROUTER_API_KEY"):
        build_provider(cfg, address_policy=OPERATOR, env={"OPENROUTER_API_KEY": "  "})


async def test_it_builds_openrouter_with_the_settings_base_url_and_role_defaults():
    recorder = Recorder()
    cfg = RoleConfig(provider="openrouter", model="z-ai/glm-5.3", effort="high", max_tokens=500)
    provider = build_provider(cfg, openrouter_base_url="http://127.0.0.1:9/or/api/v1",
                              address_policy=OPERATOR, env={"OPENROUTER_API_KEY": KEY}, transport=httpx.MockTransport(recorder))
    assert isinstance(provider, OpenRouterProvider) and provider.name == "openrouter" and not provider.offline

    result = await provider.complete(ask())  # the request names no model: the role's model is used

    [request] = recorder.requests
    assert request.url == "http://127.0.0.1:9/or/api/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = json.loads(request.content)
    assert body["model"] == "z-ai/glm-5.3"
    assert body["max_tokens"] == 500  # the role's max_tokens, a ceiling: nothing added for reasoning
    assert result.text == "hi"
    await provider.aclose()


async def test_it_builds_an_openai_compatible_provider_with_an_optional_key():
    recorder = Recorder()
    cfg = RoleConfig(provider="openai", model="qwen3:0.6b", base_url="http://localhost:11434/v1")
    local = build_provider(cfg, address_policy=OPERATOR, env={}, transport=httpx.MockTransport(recorder))
    assert type(local) is OpenAICompatibleProvider and local.name == "openai"
    await local.complete(ask("qwen3:0.6b"))
    assert "authorization" not in recorder.requests[0].headers
    assert recorder.requests[0].url == "http://localhost:11434/v1/chat/completions"

    hosted = build_provider(cfg, address_policy=OPERATOR, env={"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": "http://localhost:11434/v1"},
                            transport=httpx.MockTransport(recorder))
    await hosted.complete(ask("qwen3:0.6b"))
    assert recorder.requests[1].headers["authorization"] == f"Bearer {KEY}"
    await local.aclose()
    await hosted.aclose()


def test_it_dispatches_scripted_roles_to_the_scripted_provider(tmp_path):
    scripted = pytest.importorskip("pipeline.providers.scripted")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"planner": ["{}"], "steps": {}, "summarizer": ["done"]}))
    provider = build_provider(RoleConfig(provider="scripted", path=str(script)), address_policy=OPERATOR, env={})
    assert isinstance(provider, scripted.ScriptedProvider)


async def test_the_openai_key_goes_only_to_the_endpoints_the_operator_named():
    recorder = Recorder()
    elsewhere = RoleConfig(provider="openai", model="m", base_url="https://collector.example/v1")
    provider = build_provider(elsewhere, address_policy=OPERATOR, env={"OPENAI_API_KEY": KEY}, transport=httpx.MockTransport(recorder))
    await provider.complete(ask("m"))
    assert "authorization" not in recorder.requests[0].headers
    await provider.aclose()
    official = RoleConfig(provider="openai", model="m", base_url="https://api.openai.com/v1")
    provider = build_provider(official, address_policy=OPERATOR, env={"OPENAI_API_KEY": KEY}, transport=httpx.MockTransport(recorder))
    await provider.complete(ask("m"))
    assert recorder.requests[1].headers["authorization"] == f"Bearer {KEY}"
    await provider.aclose()


def test_an_openrouter_role_cannot_send_the_key_to_another_url():
    cfg = RoleConfig(provider="openrouter", model="m", base_url="https://collector.example/api/v1")
    with pytest.raises(TopologyError, match="OPENROUTER_BASE_URL"):
        build_provider(cfg, address_policy=OPERATOR, env={"OPENROUTER_API_KEY": KEY})
    same = RoleConfig(provider="openrouter", model="m", base_url="https://openrouter.ai/api/v1")
    assert build_provider(same, address_policy=OPERATOR, env={"OPENROUTER_API_KEY": KEY}) is not None


def test_the_reply_size_limit_is_the_operators_setting():
    cfg = RoleConfig(provider="openai", model="m", base_url="http://127.0.0.1:9/v1")
    assert build_provider(cfg, address_policy=OPERATOR, env={}).options.max_reply_bytes == 8_000_000
    limited = build_provider(cfg, address_policy=OPERATOR, env={"BEYOND_MAX_REPLY_BYTES": "200000"})
    assert limited.options.max_reply_bytes == 200_000
    for wrong in ("lots", "-5", "100"):
        with pytest.raises(TopologyError, match="BEYOND_MAX_REPLY_BYTES"):
            build_provider(cfg, address_policy=OPERATOR, env={"BEYOND_MAX_REPLY_BYTES": wrong})
