import httpx
import pytest

from pipeline.providers import build_role_providers
from pipeline.providers.registry import OPERATOR
from pipeline.topology import TopologyError, parse_shorthand, parse_topology
from tests import scripting


def test_it_parses_every_shorthand_for_all_four_roles(tmp_path):
    assert parse_shorthand("offline").verifier.provider == "offline"
    assert parse_shorthand("scripted:/tmp/x.json").executor.path == "/tmp/x.json"
    router = parse_shorthand("openrouter:z-ai/glm-5.3")
    assert (router.planner.model, router.planner.effort, router.executor.effort) == ("z-ai/glm-5.3", "high", "low")
    local = parse_shorthand("openai:qwen3:8b@http://127.0.0.1:11434/v1")
    assert (local.summarizer.model, local.summarizer.base_url) == ("qwen3:8b", "http://127.0.0.1:11434/v1")


@pytest.mark.parametrize("text", ["", "gpt-4", "scripted:", "openai:model-without-url", "openrouter:"])
def test_it_refuses_unknown_shorthands(text):
    with pytest.raises(TopologyError, match="shorthand"):
        parse_shorthand(text)


def test_it_validates_topologies_with_clear_messages():
    with pytest.raises(TopologyError, match="executor"):
        parse_topology({"planner": {"provider": "offline"}})
    with pytest.raises(TopologyError, match="base_url"):
        parse_topology({r: {"provider": "openai", "model": "m"} for r in ("planner", "executor", "verifier", "summarizer")})
    with pytest.raises(TopologyError, match="effort"):
        parse_topology({r: {"provider": "offline", "effort": "max"} for r in ("planner", "executor", "verifier", "summarizer")})


def test_roles_share_one_scripted_instance_and_mixed_families_get_their_own(tmp_path, monkeypatch):
    path = scripting.write(tmp_path, scripting.script({}))
    monkeypatch.chdir(tmp_path)
    topo = parse_topology({
        "planner": {"provider": "scripted", "path": f"./{path.name}"},  # the same file, spelled otherwise
        "executor": {"provider": "openrouter", "model": "x-ai/grok-4", "effort": "low"},
        "verifier": {"provider": "openrouter", "model": "anthropic/claude-haiku-4.5", "effort": "low"},
        "summarizer": {"provider": "scripted", "path": str(path)},
    })
    providers = build_role_providers(topo, address_policy=OPERATOR, env={"OPENROUTER_API_KEY": "k"}, transport=httpx.MockTransport(lambda r: None))
    assert providers["planner"] is providers["summarizer"]
    assert providers["executor"] is not providers["verifier"]


def test_a_missing_key_is_a_clear_topology_error():
    with pytest.raises(TopologyError, match="OPENROUTER_API_KEY"):
        build_role_providers(parse_shorthand("openrouter:m"), address_policy=OPERATOR, env={})


async def test_an_endpoint_profile_reaches_the_request():
    seen = []

    def handler(request):
        seen.append(request.read())
        return httpx.Response(200, json={"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}],
                                         "model": "m"})

    topo = parse_topology({r: {"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1",
                               "profile": {"reasoning_effort": False, "stream": False}}
                           for r in ("planner", "executor", "verifier", "summarizer")})
    providers = build_role_providers(topo, address_policy=OPERATOR, env={}, transport=httpx.MockTransport(handler))
    from pipeline.providers.base import CompletionRequest, Message
    await providers["planner"].complete(CompletionRequest(role="planner", model="m", effort="high",
                                                          messages=(Message("user", "x"),)))
    assert b"reasoning_effort" not in seen[0]
    with pytest.raises(TopologyError, match="profile"):
        bad = parse_topology({r: {"provider": "openai", "model": "m", "base_url": "http://x", "profile": {"nope": 1}}
                              for r in ("planner", "executor", "verifier", "summarizer")})
        build_role_providers(bad, address_policy=OPERATOR, env={})


@pytest.mark.parametrize("url", ["https://user:sk-secret@api.example.com/v1", "https://api.example.com/v1?key=sk-secret",
                                 "ftp://api.example.com", "api.example.com/v1"])
def test_a_base_url_cannot_carry_a_key_or_be_anything_but_http(url):
    with pytest.raises(TopologyError, match="base_url") as caught:
        parse_shorthand(f"openai:m@{url}")
    assert "sk-secret" not in str(caught.value)
