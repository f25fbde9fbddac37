"""Every example topology in docs/model-servers.md is valid and sends what its profile says."""
from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from pipeline.providers import build_role_providers, close_all
from pipeline.providers.base import CompletionRequest, Message
from pipeline.providers.profiles import PROFILES
from pipeline.providers.registry import OPERATOR
from pipeline.schemas import verdict_json_schema
from pipeline.topology import ROLES, parse_topology
from tests.pipeline.http_replay import OK_STREAM, sse

DOC = Path(__file__).resolve().parents[2] / "docs" / "model-servers.md"
EXAMPLE = re.compile(r"^### (\S+).*?\n```json\n(.*?)\n```", re.MULTILINE | re.DOTALL)


def examples() -> dict[str, dict]:
    return {name: json.loads(body) for name, body in EXAMPLE.findall(DOC.read_text())}


def test_the_doc_has_one_example_per_profile():
    assert list(examples()) == list(PROFILES)


@pytest.mark.parametrize("name", list(PROFILES))
async def test_an_example_topology_sends_what_its_profile_says(name):
    bodies = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return sse(*OK_STREAM)

    topo = parse_topology(examples()[name])
    providers = build_role_providers(topo, address_policy=OPERATOR, env={"OPENROUTER_API_KEY": "sk-or-doc-example"},
                                     transport=httpx.MockTransport(handler))
    for role in ROLES:
        cfg = topo.role(role)
        provider = providers[role]
        assert provider.profile.name == name, role
        await provider.complete(CompletionRequest(role=role, model=cfg.model, effort=cfg.effort,
                                                  max_tokens=cfg.max_tokens or 1000, messages=(Message("user", "x"),),
                                                  json_schema=verdict_json_schema()))
        body = bodies[-1]
        profile = provider.profile
        assert body["model"] == cfg.model
        effort = body.get("reasoning", {}).get("effort") if profile.effort_field == "reasoning.effort" \
            else body.get("reasoning_effort")
        assert effort == (cfg.effort if profile.effort_field else None), role
        assert profile.max_tokens_field in body
        if profile.structured_output == "none":
            assert "response_format" not in body
        else:
            assert body["response_format"]["type"] == {"json_object_with_schema": "json_object"}.get(
                profile.structured_output, profile.structured_output)
    await close_all(providers)
