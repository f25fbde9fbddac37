"""The real HTTP providers, driven over httpx.MockTransport with recorded vendor payloads.

The recordings are pydantic-ai's VCR cassettes (fixtures/llm-recordings); each test serves the
recorded status, content type and body, and checks both what we parse and what we send.
"""
from __future__ import annotations

import asyncio
import json
import logging
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import httpx
import pytest

from pipeline.providers.base import PermanentError, RetryableError
from pipeline.providers.openrouter import OpenRouterProvider
from pipeline.providers.profiles import EndpointProfile
from tests.pipeline.http_replay import (API_KEY, FAST, OK_STREAM, Replay, Sleeps, ask, chunk, compat, interactions,
                                        openrouter, recorded_response, sse)

def assert_key_only_in_auth_header(request: httpx.Request) -> None:
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert API_KEY not in request.content.decode()
    assert API_KEY not in str(request.url)
    others = [v for k, v in request.headers.items() if k != "authorization"]
    assert not any(API_KEY in v for v in others)


# --- recorded replies ---------------------------------------------------------------------------

async def test_it_streams_openrouter_reasoning_content_usage_and_served_model():
    [recorded] = interactions("test_openrouter__test_openrouter_streaming_reasoning")
    assert ": OPENROUTER PROCESSING" in recorded["response"]["body"]["string"]  # keep-alives are in it
    replay = Replay(recorded_response(recorded))
    provider = openrouter(replay)

    result = await provider.complete(ask("anthropic/claude-sonnet-4.5", effort="high", session_id="run-42"))

    assert result.text == "2 + 2 = 4"
    assert result.reasoning == "This is a simple arithmetic question. 2+2 equals 4."
    assert result.finish_reason == "stop" and not result.truncated
    assert result.model_served == "anthropic/claude-sonnet-4.5"
    assert result.provider == "Google"
    assert result.raw["native_finish_reason"] == "stop"
    usage = result.usage
    assert (usage.input, usage.cache_read, usage.output, usage.reasoning) == (43, 0, 23, 13)
    assert result.cost == pytest.approx(0.000669) and result.cost_source == "reported"
    assert result.transport_retries == 0 and result.latency_s >= 0

    [request] = replay.requests
    assert request.url == "https://openrouter.ai/api/v1/chat/completions"
    body = replay.bodies[0]
    assert body["model"] == "anthropic/claude-sonnet-4.5"
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["reasoning"] == {"effort": "high"} and "reasoning_effort" not in body
    assert body["usage"] == {"include": True}
    assert body["session_id"] == "run-42"
    assert "response_format" not in body and "provider" not in body
    assert request.headers["x-title"] == "Beyond" and request.headers["http-referer"] == "https://beyond.test"
    assert_key_only_in_auth_header(request)
    await provider.aclose()


async def test_it_reads_a_non_streamed_openrouter_reply_with_effort_high():
    [recorded] = interactions("test_openrouter__test_openrouter_thinking_high_emits_effort_high")
    assert recorded["request"]["parsed_body"]["reasoning"]["effort"] == "high"
    replay = Replay(recorded_response(recorded))
    provider = openrouter(replay)

    result = await provider.complete(ask("anthropic/claude-sonnet-4.5", effort="high"))

    assert replay.bodies[0]["reasoning"] == {"effort": "high"}
    assert result.text == "ok"
    assert result.reasoning.startswith('The user is asking me to reply with the single word "ok"')
    assert result.model_served == "anthropic/claude-4.5-sonnet-20250929"
    assert result.provider == "Amazon Bedrock"
    assert result.raw["native_finish_reason"] == "end_turn"
    usage = result.usage
    assert (usage.input, usage.cache_read, usage.cache_write, usage.output, usage.reasoning) == (43, 0, 0, 5, 48)
    assert result.cost == pytest.approx(0.000924) and result.cost_source == "reported"


async def test_it_maps_openrouter_usage_with_and_without_cost():
    first, second = interactions("test_openrouter__test_openrouter_usage")
    provider = openrouter(Replay(recorded_response(first), recorded_response(second)))

    without_cost = await provider.complete(ask("openai/gpt-5-mini"))
    with_cost = await provider.complete(ask("openai/gpt-5-mini"))

    assert without_cost.text.startswith("Brief summary")
    assert without_cost.reasoning.startswith("**Exploring Venus**")
    assert (without_cost.usage.input, without_cost.usage.output, without_cost.usage.reasoning) == (17, 811, 704)
    assert (without_cost.cost, without_cost.cost_source) == (None, None)
    assert (with_cost.usage.output, with_cost.usage.reasoning) == (2177 - 960, 960)
    assert with_cost.cost == pytest.approx(0.00435825) and with_cost.cost_source == "reported"
    assert with_cost.provider == "OpenAI"


async def test_it_reads_openrouter_reasoning_from_glm():
    [recorded] = interactions("test_openrouter__test_openrouter_with_reasoning")
    result = await openrouter(Replay(recorded_response(recorded))).complete(ask("z-ai/glm-4.6"))

    assert "Voltaire" in result.text
    assert result.reasoning.startswith("1.  **Deconstruct the User's Prompt:**")
    assert (result.model_served, result.provider) == ("z-ai/glm-4.6", "BaseTen")


async def test_it_sends_openai_native_json_schema_output():
    recorded = interactions("test_openai__test_openai_native_output")[1]
    sent_format = recorded["request"]["parsed_body"]["response_format"]
    replay = Replay(recorded_response(recorded))
    provider = compat(replay, "https://api.openai.com/v1")

    result = await provider.complete(ask("gpt-4o", json_schema=sent_format["json_schema"]["schema"],
                                         schema_name="result"))

    body = replay.bodies[0]
    assert body["response_format"] == sent_format  # including strict: false for a non-strict schema
    assert body["reasoning_effort"] == "low" and "reasoning" not in body
    assert "provider" not in body and "usage" not in body and "session_id" not in body
    assert replay.requests[0].url == "https://api.openai.com/v1/chat/completions"
    assert_key_only_in_auth_header(replay.requests[0])
    assert json.loads(result.text) == {"city": "Mexico City", "country": "Mexico"}
    assert result.model_served == "gpt-4o-2024-08-06" and result.provider == "openai"
    assert (result.usage.input, result.usage.output, result.usage.reasoning) == (92, 15, 0)


async def test_it_reads_an_openai_tool_call_reply_as_empty_text():
    recorded = interactions("test_openai__test_openai_native_output")[0]
    result = await compat(Replay(recorded_response(recorded)), "https://api.openai.com/v1").complete(ask("gpt-4o"))
    assert (result.text, result.finish_reason, result.refusal) == ("", "tool_calls", None)


async def test_it_asks_strict_mode_only_for_a_strict_compatible_schema():
    schema = {"type": "object", "properties": {"pass": {"type": "boolean"}}, "required": ["pass"],
              "additionalProperties": False}
    replay = Replay(sse(*OK_STREAM))
    await compat(replay, "http://vllm.local/v1").complete(ask(json_schema=schema, schema_name="verdict"))
    sent = replay.bodies[0]["response_format"]["json_schema"]
    assert sent == {"name": "verdict", "schema": schema, "strict": True}


async def test_it_talks_to_ollama_without_a_key_and_reads_its_reasoning():
    [recorded] = interactions("test_ollama__test_ollama_local_native_output_uses_json_schema")
    sent = recorded["request"]["parsed_body"]
    replay = Replay(recorded_response(recorded))
    provider = compat(replay, "http://localhost:11434/v1", api_key=None, profile=EndpointProfile(stream=False))

    schema = sent["response_format"]["json_schema"]["schema"]
    result = await provider.complete(ask("qwen3:0.6b", json_schema=schema, schema_name="CityLocation"))

    body = replay.bodies[0]
    assert body["stream"] is False and "stream_options" not in body
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["name"] == "CityLocation"
    assert body["response_format"]["json_schema"]["schema"] == sent["response_format"]["json_schema"]["schema"]
    assert "authorization" not in replay.requests[0].headers
    assert json.loads(result.text) == {"city": "Paris", "country": "France"}
    assert result.reasoning.startswith("Okay, the user is asking for the capital of France.")
    assert (result.usage.input, result.usage.output) == (136, 15)
    assert result.model_served == "qwen3:0.6b"


async def test_it_streams_a_deepseek_thinking_reply():
    [recorded] = interactions("test_deepseek__test_deepseek_model_thinking_stream")
    replay = Replay(recorded_response(recorded))
    result = await compat(replay, "https://api.deepseek.com").complete(ask("deepseek-reasoner", text="Hello"))

    assert replay.requests[0].url == "https://api.deepseek.com/chat/completions"
    assert result.text == "Hello there! 😊 How can I help you today?"
    assert result.reasoning.startswith('Hmm, the user just said "Hello".')
    assert result.finish_reason == "stop"
    assert (result.usage.input, result.usage.output, result.usage.reasoning) == (6, 14, 198)
    assert result.model_served == "deepseek-reasoner"


async def test_it_retries_the_recorded_openrouter_429s_then_gives_up_with_their_message():
    recorded = interactions("test_openrouter__test_openrouter_errors_raised")
    sleeps = Sleeps()
    replay = Replay(*[recorded_response(r) for r in recorded])

    with pytest.raises(RetryableError) as caught:
        await openrouter(replay, sleeps).complete(ask("google/gemini-2.0-flash-exp:free"))

    error = caught.value
    assert (error.kind, error.status, error.transport_retries) == ("http_429", 429, 2)
    assert "Provider returned error (Google)" in str(error) and "rate-limited upstream" in str(error)
    assert sleeps == [0.01, 0.02]  # exponential backoff, no Retry-After in the recording
    assert len(replay.requests) == 3


# --- retries ------------------------------------------------------------------------------------

async def test_it_honours_retry_after_seconds_on_429():
    sleeps = Sleeps()
    replay = Replay(httpx.Response(429, headers={"retry-after": "7"}, json={"error": {"message": "slow down"}}),
                    sse(*OK_STREAM))
    result = await openrouter(replay, sleeps).complete(ask())
    assert sleeps == [7.0]
    assert result.text == "fine" and result.transport_retries == 1


async def test_it_honours_retry_after_as_an_http_date_and_caps_it():
    sleeps = Sleeps()
    soon = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=30), usegmt=True)
    replay = Replay(httpx.Response(503, headers={"retry-after": soon}),
                    httpx.Response(429, headers={"retry-after": "9999"}),
                    sse(*OK_STREAM))
    result = await openrouter(replay, sleeps, retry_after_cap_s=60).complete(ask())
    assert 25 <= sleeps[0] <= 30
    assert sleeps[1] == 60
    assert result.transport_retries == 2


@pytest.mark.parametrize("status", [408, 500, 502, 503])
async def test_it_retries_server_errors(status):
    replay = Replay(httpx.Response(status, text="upstream broke"), sse(*OK_STREAM))
    result = await openrouter(replay).complete(ask())
    assert result.text == "fine" and result.transport_retries == 1


async def test_it_retries_a_200_that_carries_an_error_body():
    error_body = {"error": {"code": 502, "message": "upstream hiccup"}}
    replay = Replay(httpx.Response(200, json=error_body), sse(*OK_STREAM))
    result = await openrouter(replay).complete(ask())
    assert result.transport_retries == 1


async def test_it_retries_a_200_with_no_choices():
    replay = Replay(httpx.Response(200, json={"id": "x", "choices": []}), sse(*OK_STREAM))
    result = await openrouter(replay).complete(ask())
    assert result.transport_retries == 1


async def test_it_retries_a_mid_stream_error_chunk():
    broken = sse(chunk("half a dra"),
                 {"error": {"code": 502, "message": "Provider disconnected"},
                  "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}]})
    replay = Replay(broken, sse(*OK_STREAM))
    result = await openrouter(replay).complete(ask())
    assert result.text == "fine"  # nothing of the failed attempt leaks into the reply
    assert result.transport_retries == 1


async def test_it_retries_a_stream_cut_before_it_finished():
    replay = Replay(sse(chunk("half")), sse(*OK_STREAM))
    result = await openrouter(replay).complete(ask())
    assert result.text == "fine" and result.transport_retries == 1


async def test_it_retries_a_read_timeout_and_reports_timeout_at_the_end():
    result = await openrouter(Replay(httpx.ReadTimeout, sse(*OK_STREAM))).complete(ask())
    assert result.transport_retries == 1

    with pytest.raises(RetryableError) as caught:
        await openrouter(Replay(httpx.ReadTimeout, httpx.ConnectTimeout, httpx.ReadTimeout)).complete(ask())
    assert caught.value.kind == "timeout" and caught.value.transport_retries == 2


async def test_it_retries_refused_and_dropped_connections():
    result = await openrouter(Replay(httpx.ConnectError, sse(*OK_STREAM))).complete(ask())
    assert result.transport_retries == 1

    with pytest.raises(RetryableError) as caught:
        await openrouter(Replay(*[httpx.RemoteProtocolError] * 3)).complete(ask())
    assert caught.value.kind == "connection" and caught.value.transport_retries == 2


async def test_it_gives_up_on_an_attempt_that_exceeds_its_deadline():
    async def slow(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(1)
        return sse(*OK_STREAM)

    provider = OpenRouterProvider(api_key=API_KEY, transport=httpx.MockTransport(slow), sleep=Sleeps(),
                                  options=FAST.model_copy(update={"attempt_timeout_s": 0.01, "max_retries": 0}))
    with pytest.raises(RetryableError) as caught:
        await provider.complete(ask())
    assert caught.value.kind == "timeout"


@pytest.mark.parametrize("status", [400, 401, 403, 404])
async def test_it_does_not_retry_client_errors(status):
    replay = Replay(httpx.Response(status, json={"error": {"message": "no"}}), sse(*OK_STREAM))
    with pytest.raises(PermanentError) as caught:
        await openrouter(replay).complete(ask())
    error = caught.value
    assert (error.kind, error.status, error.transport_retries) == (f"http_{status}", status, 0)
    assert not caught.value.retryable
    assert len(replay.requests) == 1


async def test_it_retries_402_only_when_told_when_to_come_back():
    with pytest.raises(PermanentError):
        await openrouter(Replay(httpx.Response(402, json={"error": {"message": "credits"}}))).complete(ask())

    sleeps = Sleeps()
    replay = Replay(httpx.Response(402, headers={"retry-after": "3"}), sse(*OK_STREAM))
    result = await openrouter(replay, sleeps).complete(ask())
    assert sleeps == [3.0] and result.transport_retries == 1


async def test_backoff_grows_exponentially_with_bounded_jitter():
    provider = openrouter(Replay(), backoff_base_s=1.0, backoff_max_s=5.0, jitter=0.25)
    for retries, ceiling in [(0, 1.0), (1, 2.0), (2, 4.0), (5, 5.0)]:
        delay = provider.retry_delay(retries, None)
        assert 0.75 * ceiling <= delay <= ceiling


# --- reply details ------------------------------------------------------------------------------

async def test_a_later_null_finish_reason_does_not_erase_length():
    replay = Replay(sse(chunk("cut"), chunk(" off", "length"), chunk("", None, usage={"prompt_tokens": 5,
                        "completion_tokens": 9}), "data: [DONE]"))
    result = await openrouter(replay).complete(ask())
    assert result.finish_reason == "length" and result.truncated
    assert result.text == "cut off"
    assert (result.usage.input, result.usage.output) == (5, 9)


async def test_it_maps_cached_and_cache_write_tokens_to_disjoint_buckets():
    usage = {"prompt_tokens": 1000, "completion_tokens": 300, "cost": 0.01,
             "prompt_tokens_details": {"cached_tokens": 600, "cache_write_tokens": 100},
             "completion_tokens_details": {"reasoning_tokens": 200}}
    result = await openrouter(Replay(sse(chunk("x", "stop", usage=usage), "data: [DONE]"))).complete(ask())
    u = result.usage
    assert (u.input, u.cache_read, u.cache_write, u.output, u.reasoning, result.cost) == (300, 600, 100, 100, 200, 0.01)


async def test_it_asks_openrouter_to_require_parameters_for_structured_output():
    replay = Replay(sse(*OK_STREAM))
    await openrouter(replay).complete(ask(json_schema={"type": "object"}, schema_name="brief"))
    body = replay.bodies[0]
    assert body["provider"] == {"require_parameters": True}
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["name"] == "brief"


async def test_it_can_fall_back_to_json_object_mode():
    replay = Replay(sse(*OK_STREAM))
    provider = compat(replay, "http://llama.local/v1", profile=EndpointProfile(structured_output="json_object"))
    await provider.complete(ask(json_schema={"type": "object"}))
    assert replay.bodies[0]["response_format"] == {"type": "json_object"}


async def test_max_tokens_is_a_ceiling_sent_as_it_is_whatever_the_effort():
    """An operator's 48 once went out as 16,432 (a hidden reasoning headroom): 268 s of generation."""
    replay = Replay(sse(*OK_STREAM), sse(*OK_STREAM), sse(*OK_STREAM))
    provider = openrouter(replay)
    await provider.complete(ask(max_tokens=48, effort="high"))
    await provider.complete(ask(max_tokens=2000, effort="low"))
    await provider.complete(ask())
    assert [b.get("max_tokens") for b in replay.bodies] == [48, 2000, None]


async def test_it_serves_concurrent_requests_on_one_client():
    replay = Replay(*[sse(*OK_STREAM) for _ in range(5)])
    provider = openrouter(replay)
    results = await asyncio.gather(*[provider.complete(ask()) for _ in range(5)])
    assert [r.text for r in results] == ["fine"] * 5
    await provider.aclose()


# --- secrets ------------------------------------------------------------------------------------

async def test_the_api_key_never_reaches_exceptions_or_logs(caplog):
    caplog.set_level(logging.DEBUG)
    echo = {"error": {"message": f"Incorrect API key provided: {API_KEY}"}}
    replay = Replay(httpx.Response(500, json=echo), httpx.Response(401, json=echo))
    provider = openrouter(replay)

    with pytest.raises(PermanentError) as caught:
        await provider.complete(ask())

    assert caught.value.kind == "http_401"
    assert "Incorrect API key provided" in str(caught.value)
    assert API_KEY not in str(caught.value) and API_KEY not in repr(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert API_KEY not in str(caught.value.__context__)
    assert "retry 1 of 2" in caplog.text
    assert API_KEY not in caplog.text
    assert API_KEY not in repr(provider)


@pytest.mark.parametrize("message", [
    # llama-cpp-python's server (llama_cpp/server/errors.py), OpenAI's, and llama.cpp's llama-server
    "This model's maximum context length is 8192 tokens. However, you requested 9345 tokens (7297 in the "
    "messages, 2048 in the completion). Please reduce the length of the messages or completion.",
    "This model's maximum context length is 8192 tokens. However, your messages resulted in 9345 tokens. "
    "Please reduce the length of the messages.",
    "the request (9345 tokens) exceeds the available context size (8192 tokens), try increasing it",
])
async def test_a_request_over_the_models_window_is_refused_in_words_and_not_retried(message):
    replay = Replay(httpx.Response(400, json={"error": {"message": message, "code": "context_length_exceeded"}}),
                    sse(*OK_STREAM))
    with pytest.raises(PermanentError) as caught:
        await openrouter(replay).complete(ask())
    assert caught.value.kind == "context_too_long" and len(replay.requests) == 1
    assert "need 9,345 tokens; this model takes 8,192" in str(caught.value)
    assert "context_tokens to 8192" in str(caught.value)
