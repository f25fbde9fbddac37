"""Model endpoints a workspace chose are reached through the guarded transport: an address the
policy refuses is a permanent error (never retried, no packet sent), and a redirect is never
followed, whichever address it points at."""
from __future__ import annotations

import httpx
import pytest

from pipeline.net import AddressPolicy
from pipeline.providers.base import CompletionRequest, Message, PermanentError
from pipeline.providers.registry import OPERATOR, build_provider
from pipeline.topology import RoleConfig
from tests.pipeline.loopback import LoopbackServer, sse_answer

REPLY = ({"model": "m", "choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}, "[DONE]")


def ask() -> CompletionRequest:
    return CompletionRequest(role="executor", model="m", messages=(Message("user", "hello"),))


def answering(body, headers):
    return sse_answer(*REPLY)


@pytest.mark.parametrize("host", ["127.0.0.1", "[64:ff9b::7f00:1]", "[::ffff:127.0.0.1]", "localhost"])
async def test_a_workspace_endpoint_on_this_machine_is_refused_at_connection_and_not_retried(host):
    with LoopbackServer(answering) as server:
        port = server.base_url.split(":")[-1].split("/")[0]
        provider = build_provider(RoleConfig(provider="openai", model="m", base_url=f"http://{host}:{port}/v1"),
                                  env={}, address_policy=AddressPolicy())
        with pytest.raises(PermanentError) as caught:
            await provider.complete(ask())
        await provider.aclose()
    assert caught.value.kind == "address_refused" and caught.value.transport_retries == 0
    assert "refused by the address policy" in str(caught.value) and "loopback" in str(caught.value)
    assert server.bodies == []  # nothing reached the server


async def test_an_endpoint_the_operator_allowed_is_reached_through_the_guarded_transport():
    with LoopbackServer(answering) as server:
        policy = AddressPolicy.from_base_urls(server.base_url)
        provider = build_provider(RoleConfig(provider="openai", model="m", base_url=server.base_url),
                                  env={}, address_policy=policy)
        result = await provider.complete(ask())
        await provider.aclose()
    assert result.text == "ok" and len(server.bodies) == 1


async def test_a_redirect_is_a_permanent_error_and_is_not_followed():
    seen = []

    def redirecting(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(307, headers={"Location": "http://169.254.169.254/latest/meta-data/"})

    provider = build_provider(RoleConfig(provider="openai", model="m", base_url="https://api.example.com/v1"),
                              address_policy=OPERATOR, env={}, transport=httpx.MockTransport(redirecting))
    with pytest.raises(PermanentError) as caught:
        await provider.complete(ask())
    await provider.aclose()
    assert seen == ["https://api.example.com/v1/chat/completions"]
    assert caught.value.kind == "http_307" and "redirects are not followed" in str(caught.value)


@pytest.mark.parametrize("policy", [None, "127.0.0.1:8111", frozenset()])
def test_no_provider_is_built_without_saying_where_it_may_connect(policy):
    cfg = RoleConfig(provider="openai", model="m", base_url="http://127.0.0.1:8111/v1")
    with pytest.raises(TypeError, match="AddressPolicy or OPERATOR"):
        build_provider(cfg, env={}, address_policy=policy)
    with pytest.raises(TypeError):
        build_provider(cfg, env={})  # the policy has no default
