"""A streamed reply counts only when it says how it finished.

A stream that ends without any finish reason (the connection closed, or `[DONE]` came with none,
as llama-cpp-python sends when another request interrupts it) is an error of that call, retried
like a 5xx; never a complete draft or verdict.
"""
from __future__ import annotations

import gzip
import re

import httpx
import pytest

from pipeline.providers.base import PermanentError, RetryableError
from pipeline.providers.openai_compat import OpenAICompatibleProvider
from pipeline.providers.profiles import PROFILES
from tests.pipeline.http_replay import (FAST, OK_STREAM, Replay, Sleeps, ask, chunk, compat, interactions,
                                        llama_cpp_python, openrouter, recorded_response, served, sse)
from tests.pipeline.loopback import Answer, LoopbackServer, sse_answer


FINISH = re.compile(r'"finish_reason"\s*:\s*"[^"]*"')


def cut_recording(name: str, *, keep_done: bool) -> httpx.Response:
    """A recorded stream with every finish reason made null: what a cut stream looks like."""
    [recorded] = interactions(name)
    body, cuts = FINISH.subn('"finish_reason": null', recorded["response"]["body"]["string"])
    assert cuts >= 1
    if not keep_done:
        body = body.replace("data: [DONE]", "")
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode())


@pytest.mark.parametrize("name", ["test_openrouter__test_openrouter_streaming_reasoning",
                                  "test_deepseek__test_deepseek_model_thinking_stream"])
@pytest.mark.parametrize("keep_done", [True, False], ids=["done-without-finish", "connection-closed"])
async def test_a_recorded_stream_without_its_finish_reason_is_retried_then_fails(name, keep_done):
    replay = Replay(*[cut_recording(name, keep_done=keep_done) for _ in range(3)])
    with pytest.raises(RetryableError) as caught:
        await compat(replay, "https://api.example/v1").complete(ask())
    assert caught.value.kind == "incomplete" and caught.value.transport_retries == 2
    assert ("[DONE] arrived" if keep_done else "the connection closed") in str(caught.value)
    assert len(replay.requests) == 3


async def test_the_same_recorded_stream_whole_is_a_complete_reply():
    [recorded] = interactions("test_deepseek__test_deepseek_model_thinking_stream")
    result = await compat(Replay(recorded_response(recorded)), "https://api.example/v1").complete(ask())
    assert result.finish_reason == "stop" and result.text.startswith("Hello there!")


@pytest.mark.parametrize("name", ["stream_interrupted_done", "stream_interrupted"])
async def test_a_llama_cpp_python_interrupted_stream_is_an_error_and_the_retry_gets_the_whole_reply(name):
    cut = llama_cpp_python(name)
    assert '"finish_reason": null' in cut["body"] and '"length"' not in cut["body"]
    replay = Replay(served(cut), served(llama_cpp_python("stream_complete")))
    provider = compat(replay, "http://127.0.0.1:8000/v1", api_key=None, profile=PROFILES["llama-cpp-python"])

    result = await provider.complete(ask("tiny"))

    assert result.transport_retries == 1
    assert result.finish_reason == "length" and result.truncated
    assert result.text == ">\tQ }h"  # the recorded reply, whole, and nothing of the cut one
    assert result.usage is None  # llama-cpp-python puts no usage in its streams


async def test_an_empty_draft_from_a_cut_stream_never_comes_back_as_a_reply():
    """The failure that released an empty step: a role chunk, then [DONE]."""
    role_only = sse({"model": "m", "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]},
                    "data: [DONE]")
    with pytest.raises(RetryableError) as caught:
        await compat(Replay(role_only), "http://127.0.0.1:8000/v1", options=FAST.model_copy(
            update={"max_retries": 0})).complete(ask())
    assert caught.value.kind == "incomplete"


async def test_openrouter_streams_need_a_finish_reason_too():
    replay = Replay(sse(chunk("half a draft"), "data: [DONE]"), sse(*OK_STREAM))
    result = await openrouter(replay).complete(ask())
    assert result.text == "fine" and result.transport_retries == 1


async def test_a_finish_reason_before_the_connection_closes_is_enough():
    result = await compat(Replay(sse(chunk("all"), chunk("", "stop"))), "http://x/v1").complete(ask())
    assert result.text == "all" and result.finish_reason == "stop"


async def test_a_loopback_server_that_closes_mid_stream_gets_a_retry():
    answers = [sse_answer(chunk("half"), chunk(" a draft")), sse_answer(chunk("whole"), chunk("", "stop"), "[DONE]")]
    with LoopbackServer(lambda body, headers: answers.pop(0)) as server:
        provider = OpenAICompatibleProvider(server.base_url, options=FAST, sleep=Sleeps())
        result = await provider.complete(ask())
        await provider.aclose()
    assert (result.text, result.transport_retries) == ("whole", 1)
    assert len(server.bodies) == 2


async def test_compressed_replies_are_read_over_real_http_and_only_gzip_or_deflate_is_asked_for():
    whole = sse_answer(chunk("whole"), chunk(" reply", "stop"), "[DONE]")
    packed = Answer(parts=[gzip.compress("".join(whole.parts).encode())], headers={"Content-Encoding": "gzip"})
    with LoopbackServer(lambda body, headers: packed) as server:
        provider = OpenAICompatibleProvider(server.base_url, options=FAST, sleep=Sleeps())
        result = await provider.complete(ask())
        await provider.aclose()
    assert (result.text, result.finish_reason) == ("whole reply", "stop")
    assert server.headers[0]["Accept-Encoding"] == "gzip, deflate"


async def test_a_stream_whose_text_adds_up_past_the_reply_limit_fails_without_a_retry():
    pieces = [chunk("x" * 1000) for _ in range(40)] + [chunk("", "stop"), "data: [DONE]"]
    options = FAST.model_copy(update={"max_reply_bytes": 20_000})
    with pytest.raises(PermanentError) as caught:
        await compat(Replay(sse(*pieces)), "http://x/v1", options=options).complete(ask())
    assert caught.value.kind == "too_large" and caught.value.transport_retries == 0
    assert "longer than 20,000 characters" in str(caught.value)
