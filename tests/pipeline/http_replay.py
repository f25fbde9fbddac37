"""What the HTTP provider tests share: recorded payloads, a replaying MockTransport, providers
wired to it, and requests.

The recordings are pydantic-ai's VCR cassettes (fixtures/llm-recordings) and the replies recorded
from llama-cpp-python's server (fixtures/llama-cpp-python, see the README there).
"""
from __future__ import annotations

import json
from pathlib import Path

import httpx
import yaml

from pipeline.providers.base import CompletionRequest, Message
from pipeline.providers.openai_compat import OpenAICompatibleProvider, ProviderOptions
from pipeline.providers.openrouter import OpenRouterProvider

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

# Real OpenRouter, OpenAI, Ollama and DeepSeek payloads recorded by pydantic-ai (MIT, see LICENSE there).
RECORDINGS = FIXTURES / "llm-recordings"

API_KEY = "sk-or-v1-TEST-SECRET-0123456789abcdef"
FAST = ProviderOptions(max_retries=2, backoff_base_s=0.01, jitter=0)


def interactions(name: str) -> list[dict]:
    return yaml.safe_load((RECORDINGS / f"{name}.yaml").read_text())["interactions"]


def recorded_response(interaction: dict) -> httpx.Response:
    """The recorded reply as httpx would receive it: status, content type and body."""
    recorded = interaction["response"]
    headers = {k: v[0] for k, v in (recorded.get("headers") or {}).items() if k == "content-type"}
    if "body" in recorded:
        content = recorded["body"]["string"].encode()
    else:
        content = json.dumps(recorded["parsed_body"]).encode()
    return httpx.Response(recorded["status"]["code"], headers=headers, content=content)


def sse(*chunks: dict | str) -> httpx.Response:
    """A streamed reply made of the given chunks (dicts become `data:` JSON lines)."""
    lines = [c if isinstance(c, str) else f"data: {json.dumps(c)}" for c in chunks]
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content="\n\n".join(lines) + "\n\n")


def chunk(content: str = "", finish_reason: str | None = None, **extra) -> dict:
    return {"model": "m-served", "choices": [{"index": 0, "delta": {"content": content},
                                              "finish_reason": finish_reason}], **extra}


OK_STREAM = (chunk("fine"), chunk("", "stop"), "data: [DONE]")


class Replay:
    """A MockTransport handler that serves responses (or raises exceptions) in order."""

    def __init__(self, *responses):
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        item = self.responses.pop(0)
        if isinstance(item, type) and issubclass(item, Exception):
            raise item("simulated", request=request)
        return item

    @property
    def bodies(self) -> list[dict]:
        return [json.loads(r.content) for r in self.requests]


class Sleeps(list):
    """Stands in for asyncio.sleep and remembers each computed delay."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def openrouter(replay: Replay, sleeps: Sleeps | None = None, **options) -> OpenRouterProvider:
    opts = FAST.model_copy(update=options)
    return OpenRouterProvider(api_key=API_KEY, transport=httpx.MockTransport(replay), options=opts,
                              sleep=Sleeps() if sleeps is None else sleeps,
                              title="Beyond", referer="https://beyond.test")


def compat(replay: Replay, base_url: str, sleeps: Sleeps | None = None, api_key: str | None = API_KEY,
           **kwargs) -> OpenAICompatibleProvider:
    return OpenAICompatibleProvider(base_url, api_key=api_key, transport=httpx.MockTransport(replay),
                                    options=kwargs.pop("options", FAST),
                                    sleep=Sleeps() if sleeps is None else sleeps, **kwargs)


def ask(model: str = "some/model", text: str = "What is 2+2?", **kwargs) -> CompletionRequest:
    return CompletionRequest(role="executor", model=model, messages=(Message("user", text),), **kwargs)


def llama_cpp_python(name: str) -> dict:
    """One reply recorded from llama-cpp-python's server: request, status, content type, body."""
    return json.loads((FIXTURES / "llama-cpp-python" / f"{name}.json").read_text())


def served(recording: dict) -> httpx.Response:
    return httpx.Response(recording["status"], headers={"content-type": recording["content_type"]},
                          content=recording["body"].encode())
