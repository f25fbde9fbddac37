"""A model's context window as its server says it (pipeline/providers/profiles.py), asked over HTTP
the way each kind of server answers it, and kept a while per endpoint (pipeline/window.py)."""
from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from pipeline import window
from pipeline.providers import build_role_providers, close_all
from pipeline.providers.registry import OPERATOR
from pipeline.topology import ROLES, parse_topology

# Answers shaped as each server documents them (vLLM's OpenAI-compatible server, llama.cpp's
# llama-server, Ollama's /api/ps, LM Studio's REST API v0), trimmed to the fields around the window.
ANSWERS = {
    "vllm": ("GET", "/v1/models", {"object": "list", "data": [
        {"id": "other/model", "object": "model", "max_model_len": 131072},
        {"id": "qwen/qwen2.5-7b", "object": "model", "owned_by": "vllm", "root": "qwen/qwen2.5-7b",
         "max_model_len": 32768}]}),
    "llamacpp": ("GET", "/props", {"default_generation_settings": {"n_ctx": 16384, "temperature": 0.8},
                                   "total_slots": 1, "model_path": "models/qwen.gguf"}),
    "ollama": ("GET", "/api/ps", {"models": [
        {"name": "qwen2.5:0.5b", "model": "qwen2.5:0.5b", "size": 492523008, "size_vram": 0,
         "expires_at": "2026-11-02T08:15:34Z", "context_length": 4096}]}),
    "lmstudio": ("GET", "/api/v0/models/qwen%2Fqwen2.5-7b", {
        "id": "qwen/qwen2.5-7b", "object": "model", "type": "llm", "state": "loaded",
        "max_context_length": 32768, "loaded_context_length": 8192}),
}
MODELS = {"vllm": "qwen/qwen2.5-7b", "llamacpp": "qwen", "ollama": "qwen2.5:0.5b", "lmstudio": "qwen/qwen2.5-7b"}
SAID = {"vllm": 32768, "llamacpp": 16384, "ollama": 4096, "lmstudio": 8192}


class Server:
    """An HTTP server double reached through httpx's MockTransport: answers one path, counts asks."""

    def __init__(self, method: str, path: str, answer, *, status: int = 200, delay: float = 0.0):
        self.method, self.path, self.answer, self.status, self.delay = method, path, answer, status, delay
        self.asked: list[str] = []

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.asked.append(f"{request.method} {request.url.raw_path.decode()}")
        await asyncio.sleep(self.delay)
        if (request.method, request.url.raw_path.decode()) != (self.method, self.path):
            return httpx.Response(404, json={"error": "not found"})
        body = self.answer if isinstance(self.answer, bytes) else json.dumps(self.answer).encode()
        return httpx.Response(self.status, content=body, headers={"content-type": "application/json"})


def providers_for(profile: str, server: Server, model: str | None = None, **role):
    cfg = {"provider": "openai", "model": model or MODELS[profile], "base_url": "http://models.test/v1",
           "profile": profile, **role}
    topology = parse_topology({name: cfg if name in ("planner", "executor") else {"provider": "offline"}
                               for name in ROLES})
    providers = build_role_providers(topology, address_policy=OPERATOR, env={},
                                     transport=httpx.MockTransport(server))
    return topology, providers


@pytest.fixture(autouse=True)
def forget_windows():
    window._said.clear()
    yield
    window._said.clear()


@pytest.mark.parametrize("profile", sorted(ANSWERS))
async def test_each_kind_of_server_is_asked_its_window_where_it_says_it(profile):
    server = Server(*ANSWERS[profile])
    topology, providers = providers_for(profile, server)
    try:
        assert await providers["planner"].context_window() == SAID[profile]
        said = await window.read_windows(topology, providers)
    finally:
        await close_all(providers)
    assert said == {"planner": SAID[profile], "executor": SAID[profile]}
    fitted = window.context_budget(topology, 1_000_000, said)
    assert fitted.window == SAID[profile]


async def test_a_server_is_asked_once_per_endpoint_and_its_answer_kept_a_while(monkeypatch):
    server = Server(*ANSWERS["vllm"])
    topology, providers = providers_for("vllm", server)
    try:
        await window.read_windows(topology, providers)
        await window.read_windows(topology, providers)
        assert server.asked == ["GET /v1/models"]               # planner and executor share the endpoint
        assert window.known_windows(topology) == {"planner": 32768, "executor": 32768}
        monkeypatch.setattr(window, "WINDOW_KEPT_S", 0.0)
        assert window.known_windows(topology) == {}
        await window.read_windows(topology, providers)
        assert len(server.asked) == 2
    finally:
        await close_all(providers)


@pytest.mark.parametrize("server", [
    Server("GET", "/v1/models", {"object": "list", "data": [{"id": "another-model", "max_model_len": 4096}]}),
    Server("GET", "/nowhere", {}),                                                   # 404
    Server("GET", "/v1/models", b"<html>gateway</html>"),                            # not JSON
    Server("GET", "/v1/models", {"data": [{"id": "qwen/qwen2.5-7b", "max_model_len": True}]}),
    Server("GET", "/v1/models", {"data": [{"id": "qwen/qwen2.5-7b", "max_model_len": 100}]}),
    Server("GET", "/v1/models", {"data": [{"id": "qwen/qwen2.5-7b", "max_model_len": "32768"}]}),
    Server("GET", "/v1/models", {"data": "everything"}),
    Server("GET", "/v1/models", b"{" + b" " * (2 * 1024 * 1024) + b"}"),             # over the read bound
], ids=["model not listed", "404", "not json", "bool", "too small", "a string", "no list", "too large"])
async def test_an_answer_that_says_no_sensible_window_leaves_the_profiles(server):
    topology, providers = providers_for("vllm", server, context_tokens=6000)
    try:
        said = await window.read_windows(topology, providers)
    finally:
        await close_all(providers)
    assert said == {}
    assert window.context_budget(topology, 1_000_000, said).window == 6000   # the role's own setting


async def test_a_server_slow_to_say_is_not_waited_for(monkeypatch):
    monkeypatch.setattr("pipeline.providers.openai_compat.WINDOW_TIMEOUT_S", 0.05)
    server = Server(*ANSWERS["llamacpp"], delay=1.0)
    topology, providers = providers_for("llamacpp", server)
    try:
        assert await window.read_windows(topology, providers) == {}
    finally:
        await close_all(providers)


async def test_a_profile_that_names_no_source_asks_nothing():
    server = Server(*ANSWERS["vllm"])
    topology, providers = providers_for("llama-cpp-python", server, model="gemma-3-270m")
    try:
        assert await window.read_windows(topology, providers) == {}
    finally:
        await close_all(providers)
    assert server.asked == []
    assert window.context_budget(topology, 1_000_000).window == 8192   # the profile's own


async def test_the_model_name_is_a_path_segment_never_a_path():
    server = Server("GET", "/api/v0/models/..%2F..%2Fadmin", {"loaded_context_length": 4096})
    topology, providers = providers_for("lmstudio", server, model="../../admin")
    try:
        assert await providers["planner"].context_window() == 4096
    finally:
        await close_all(providers)
    assert server.asked == ["GET /api/v0/models/..%2F..%2Fadmin"]
