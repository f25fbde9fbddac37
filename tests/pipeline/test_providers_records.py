"""What a call record can say: the model that served, usage or "not reported", where a cost came
from, and why a request went out without a key."""
from __future__ import annotations

import httpx
import pytest

from pipeline.providers.base import PermanentError, RetryableError
from pipeline.providers.profiles import PROFILES
from pipeline.providers.registry import OPERATOR, build_provider
from pipeline.topology import RoleConfig
from tests.pipeline.http_replay import OK_STREAM, Replay, ask, chunk, compat, sse
from tests.pipeline.loopback import LoopbackServer, json_answer

LITELLM_HEADERS = {"x-litellm-model-name": "openai/gpt-4o-mini", "x-litellm-model-group": "beyond-verifier",
                   "x-litellm-response-cost": "1.35e-05"}
USAGE = {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}


def reply_json(model: str = "beyond-verifier", usage: dict | None = None, **headers) -> httpx.Response:
    body = {"model": model, "choices": [{"index": 0, "message": {"content": "ok"}, "finish_reason": "stop"}]}
    if usage:
        body["usage"] = usage
    return httpx.Response(200, json=body, headers=headers)


async def test_litellm_headers_name_the_served_model_over_the_alias_in_the_body():
    replay = Replay(reply_json(usage=USAGE, **LITELLM_HEADERS))
    result = await compat(replay, "http://127.0.0.1:4000/v1", profile=PROFILES["litellm"]).complete(ask())
    assert result.model_served == "openai/gpt-4o-mini"
    assert (result.cost, result.cost_source) == (pytest.approx(1.35e-05), "estimated")
    assert (result.usage.input, result.usage.output) == (10, 20)


async def test_without_the_headers_the_body_names_the_served_model():
    result = await compat(Replay(reply_json(usage=USAGE)), "http://x/v1", profile=PROFILES["litellm"]).complete(ask())
    assert result.model_served == "beyond-verifier"
    assert (result.cost, result.cost_source) == (None, None)


async def test_a_profile_without_served_model_headers_ignores_them():
    replay = Replay(reply_json(usage=USAGE, **LITELLM_HEADERS))
    result = await compat(replay, "http://x/v1", profile=PROFILES["generic"]).complete(ask())
    assert result.model_served == "beyond-verifier"
    assert result.cost is None  # a cost header is a gateway's: only its profile reads it


@pytest.mark.parametrize("profile, source", [("openrouter", "reported"), ("generic", "reported"),
                                             ("litellm", "estimated")])
async def test_a_cost_in_the_usage_wins_over_a_header_and_its_profile_says_whose_figure_it_is(profile, source):
    """OpenRouter's usage.cost is its charge; LiteLLM's (include_cost_in_streaming_usage) is its
    price table's estimate, however it arrives."""
    replay = Replay(reply_json(usage={**USAGE, "cost": 0.002}, **LITELLM_HEADERS))
    result = await compat(replay, "http://x/v1", profile=PROFILES[profile]).complete(ask())
    assert (result.cost, result.cost_source) == (0.002, source)


async def test_zero_usage_for_a_reply_with_text_is_usage_not_reported_and_so_is_the_estimate_made_from_it():
    """LiteLLM's non-streamed answer when the model behind it reported no usage: all zeros, and a
    cost of 0.0 worked out from them."""
    zeros = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    replay = Replay(reply_json(usage=zeros, **{**LITELLM_HEADERS, "x-litellm-response-cost": "0.0"}))
    result = await compat(replay, "http://x/v1", profile=PROFILES["litellm"]).complete(ask())
    assert (result.usage, result.cost, result.cost_source) == (None, None, None)


async def test_a_usage_the_proxy_filled_into_a_stream_is_not_recorded_as_reported():
    """Streamed through LiteLLM, a usage is the upstream's or the proxy's own count; nothing tells which."""
    stream = sse(chunk("a"), chunk("", "stop"), {"choices": [], "usage": {**USAGE, "cost": 0.001}}, "data: [DONE]")
    profile = PROFILES["litellm"].model_copy(update={"stream": True})
    result = await compat(Replay(stream), "http://x/v1", profile=profile).complete(ask())
    assert result.usage is None
    assert (result.cost, result.cost_source) == (0.001, "estimated")  # its price table's figure, labelled so
    assert result.raw["usage"]["completion_tokens"] == 20  # still in the raw record, for what it is worth
    assert result.completeness_unknown and result.truncated is None  # a cut would have looked the same


async def test_only_a_stream_through_a_gateway_that_masks_cuts_is_of_unknown_completeness():
    stream = sse(chunk("a"), chunk("", "stop"), "data: [DONE]")
    plain = await compat(Replay(stream), "http://x/v1", profile=PROFILES["generic"]).complete(ask())
    assert plain.truncated is False and not plain.completeness_unknown
    replay = Replay(reply_json(usage=USAGE, **LITELLM_HEADERS))
    not_streamed = await compat(replay, "http://x/v1", profile=PROFILES["litellm"]).complete(ask())
    assert not_streamed.truncated is False  # not streamed: a cut upstream is the proxy's error, never a reply
    cut = sse(chunk("a"), chunk("", "length"), "data: [DONE]")
    streamed = PROFILES["litellm"].model_copy(update={"stream": True})
    assert (await compat(Replay(cut), "http://x/v1", profile=streamed).complete(ask())).truncated is True


@pytest.mark.parametrize("value", ["", "free", "nan", "inf"])
async def test_a_cost_header_that_is_not_a_number_is_no_cost(value):
    replay = Replay(reply_json(usage=USAGE, **{"x-litellm-response-cost": value}))
    result = await compat(replay, "http://x/v1", profile=PROFILES["litellm"]).complete(ask())
    assert (result.cost, result.cost_source) == (None, None)


async def test_a_stream_without_usage_records_usage_as_unknown_not_zero():
    result = await compat(Replay(sse(*OK_STREAM)), "http://x/v1").complete(ask())
    assert result.usage is None


async def test_a_stream_with_usage_records_it():
    replay = Replay(sse(chunk("a"), chunk("", "stop"), {"choices": [], "usage": USAGE}, "data: [DONE]"))
    result = await compat(replay, "http://x/v1").complete(ask())
    assert (result.usage.input, result.usage.output) == (10, 20)


# --- requests sent without a key ---------------------------------------------------------------

KEY = "sk-operator-0123456789"
WITHHELD = "no API key was sent to {url}: OPENAI_API_KEY is only sent to the endpoints listed in OPENAI_BASE_URL"


def unlisted_endpoint(server: LoopbackServer):
    cfg = RoleConfig(provider="openai", model="m", base_url=server.base_url, retries=1)
    return build_provider(cfg, address_policy=OPERATOR, env={"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": "https://api.openai.com/v1"})


@pytest.mark.parametrize("status", [401, 403])
async def test_a_401_or_403_from_an_endpoint_the_key_was_withheld_from_says_so_at_once(status):
    with LoopbackServer(lambda body, headers: json_answer(status, {"error": {"message": "missing key"}})) as server:
        provider = unlisted_endpoint(server)
        with pytest.raises(PermanentError) as caught:
            await provider.complete(ask("m"))
        await provider.aclose()
    assert WITHHELD.format(url=server.base_url) in str(caught.value)
    assert "missing key" in str(caught.value)
    assert len(server.bodies) == 1 and "authorization" not in {k.lower() for k in server.headers[0]}


async def test_a_bare_500_with_no_key_sent_is_retried_and_the_final_error_says_no_key_was_sent():
    with LoopbackServer(lambda body, headers: json_answer(500, {"detail": None},
                                                          {"retry-after": "0"})) as server:
        provider = unlisted_endpoint(server)
        with pytest.raises(RetryableError) as caught:
            await provider.complete(ask("m"))
        await provider.aclose()
    assert len(server.bodies) == 2  # the role's one retry
    assert str(caught.value).endswith(WITHHELD.format(url=server.base_url))


async def test_a_500_that_explains_itself_gets_no_key_note():
    replay = Replay(*[httpx.Response(500, json={"error": {"message": "model overloaded"}})] * 3)
    provider = compat(replay, "http://x/v1", api_key=None, no_key_note="no API key was sent to http://x/v1: ...")
    with pytest.raises(RetryableError) as caught:
        await provider.complete(ask())
    assert "no API key" not in str(caught.value)


async def test_a_401_with_no_key_configured_at_all_says_the_key_is_not_set():
    cfg = RoleConfig(provider="openai", model="m", base_url="http://127.0.0.1:9/v1")
    transport = httpx.MockTransport(lambda request: httpx.Response(401, json={"error": "unauthorized"}))
    provider = build_provider(cfg, address_policy=OPERATOR, env={}, transport=transport)
    with pytest.raises(PermanentError, match="no API key was sent to http://127.0.0.1:9/v1: OPENAI_API_KEY is not set"):
        await provider.complete(ask("m"))


async def test_a_401_when_the_key_was_sent_gets_no_no_key_note():
    cfg = RoleConfig(provider="openai", model="m", base_url="https://api.openai.com/v1")
    transport = httpx.MockTransport(lambda request: httpx.Response(401, json={"error": "bad key"}))
    provider = build_provider(cfg, address_policy=OPERATOR, env={"OPENAI_API_KEY": KEY}, transport=transport)
    with pytest.raises(PermanentError) as caught:
        await provider.complete(ask("m"))
    assert "no API key" not in str(caught.value)
