"""Endpoint profiles: chosen by name in a topology, overridable per field, and what each sends."""
from __future__ import annotations

import json

import httpx
import pytest

from pipeline.context import Context, Evidence
from pipeline.parsing import ReplyError, parse_brief
from pipeline.providers import build_role_providers
from pipeline.providers.base import PermanentError, RetryableError
from pipeline.providers.profiles import PROFILES, ProfileError, profile_choices, resolve_profile
from pipeline.providers.registry import OPERATOR, build_provider
from pipeline.requests import build_planner_request
from pipeline.schemas import Brief, brief_json_schema, verdict_json_schema
from pipeline.topology import ROLES, RoleConfig, TopologyError, parse_topology
from tests import scripting
from tests.pipeline.http_replay import OK_STREAM, Replay, ask, compat, llama_cpp_python, served, sse

EXPECTED_NAMES = ["generic", "openai", "openrouter", "litellm", "vllm", "ollama", "llamacpp", "lmstudio", "llama-cpp-python",
                  "transformers"]


def every_role(**cfg) -> dict:
    return {role: dict(cfg) for role in ROLES}


def test_every_profile_is_listed_with_a_one_line_description():
    choices = profile_choices()
    assert [name for name, _ in choices] == EXPECTED_NAMES
    for _, description in choices:
        assert description and "\n" not in description and len(description) < 120


@pytest.mark.parametrize("spec, expected", [
    ("llamacpp", {"name": "llamacpp", "concurrency": 1, "effort_field": None}),
    ({"structured_output": "json_object"}, {"name": "generic", "structured_output": "json_object"}),
    ({"name": "litellm", "effort_field": "reasoning_effort"},
     {"name": "litellm", "effort_field": "reasoning_effort", "retries": 1, "server_retries": True}),
    ({"reasoning_effort": False, "stream": False}, {"name": "generic", "effort_field": None, "stream": False}),
    (None, {"name": "generic"}),
])
def test_a_role_names_a_profile_overrides_one_or_both(spec, expected):
    cfg = parse_topology(every_role(provider="openai", model="m", base_url="http://127.0.0.1:9/v1",
                                    profile=spec)).planner
    profile = resolve_profile(cfg.provider, cfg.profile)
    assert {k: getattr(profile, k) for k in expected} == expected


def test_openrouter_roles_default_to_the_openrouter_profile():
    assert resolve_profile("openrouter", None).effort_field == "reasoning.effort"
    assert resolve_profile("openrouter", {"reasoning_effort": True}).effort_field == "reasoning.effort"


def test_role_level_concurrency_and_retries_win_over_the_profile():
    profile = resolve_profile("openai", {"name": "ollama", "retries": 5}, concurrency=3, retries=0)
    assert (profile.concurrency, profile.retries) == (3, 0)


@pytest.mark.parametrize("spec, message", [
    ("lamacpp", "unknown profile 'lamacpp'"),
    ({"name": "nope"}, "unknown profile 'nope'"),
    ({"structured_output": "yaml"}, "structured_output"),
    ({"concurrency": 0}, "concurrency"),
    ({"frobnicate": True}, "frobnicate"),
])
def test_a_bad_profile_is_a_topology_error_when_the_topology_is_read(spec, message):
    with pytest.raises(TopologyError, match=message):
        parse_topology(every_role(provider="openai", model="m", base_url="http://127.0.0.1:9/v1", profile=spec))
    with pytest.raises(ProfileError):
        resolve_profile("openai", spec)


def test_role_concurrency_and_retries_are_bounded():
    with pytest.raises(TopologyError, match="concurrency"):
        parse_topology(every_role(provider="openai", model="m", base_url="http://x/v1", concurrency=0))
    with pytest.raises(TopologyError, match="retries"):
        parse_topology(every_role(provider="openai", model="m", base_url="http://x/v1", retries=-1))


# --- what each profile sends ------------------------------------------------------------------

async def sent_body(profile_name: str, **request) -> dict:
    replay = Replay(sse(*OK_STREAM))
    provider = compat(replay, "http://127.0.0.1:9/v1", api_key=None, profile=PROFILES[profile_name])
    await provider.complete(ask(**request))
    return replay.bodies[0]


VERDICT = dict(json_schema=verdict_json_schema(), schema_name="verdict")


@pytest.mark.parametrize("name, effort_sent, tokens_field, format_type, stream_options", [
    ("generic", {"reasoning_effort": "high"}, "max_tokens", "json_schema", True),
    ("openai", {"reasoning_effort": "high"}, "max_completion_tokens", "json_schema", True),
    ("openrouter", {"reasoning": {"effort": "high"}}, "max_tokens", "json_schema", True),
    ("litellm", {}, "max_tokens", "json_schema", False),
    ("vllm", {"reasoning_effort": "high"}, "max_tokens", "json_schema", True),
    ("ollama", {}, "max_tokens", "json_schema", True),
    ("llamacpp", {}, "max_tokens", "json_schema", True),
    ("llama-cpp-python", {}, "max_tokens", "json_object", False),
])
async def test_what_each_profile_sends(name, effort_sent, tokens_field, format_type, stream_options):
    body = await sent_body(name, effort="high", max_tokens=2000, **VERDICT)
    assert {k: body[k] for k in ("reasoning_effort", "reasoning") if k in body} == effort_sent
    assert body[tokens_field] == 2000  # a ceiling, whatever the effort
    assert body["response_format"]["type"] == format_type
    assert ("stream_options" in body) is stream_options


async def test_with_the_effort_not_sent_max_tokens_gets_no_reasoning_headroom():
    """A planner set to 2000 tokens sends 2000, not 2000 + the headroom for effort high."""
    body = await sent_body("litellm", effort="high", max_tokens=2000)
    assert body["max_tokens"] == 2000 and "reasoning_effort" not in body


async def test_llama_cpp_python_gets_its_schema_inside_json_object():
    body = await sent_body("llama-cpp-python", **VERDICT)
    assert body["response_format"]["type"] == "json_object"
    assert body["response_format"]["schema"]["required"] == ["pass", "issues"]
    recorded = llama_cpp_python("json_object_with_schema")
    assert recorded["request"]["response_format"]["type"] == "json_object" and recorded["status"] == 200


async def test_the_json_schema_form_is_what_llama_cpp_python_refuses_with_a_500():
    """The recorded 500: why its profile never sends the json_schema form."""
    refused = llama_cpp_python("json_schema_refused")
    assert refused["request"]["response_format"]["type"] == "json_schema"
    replay = Replay(*[served(refused)] * 3)
    provider = compat(replay, "http://127.0.0.1:9/v1", api_key=None)
    with pytest.raises(Exception, match="HTTP 500"):
        await provider.complete(ask(**VERDICT))


async def test_picking_llamacpp_for_a_llama_cpp_python_server_says_so_and_keeps_its_traceback_out():
    refused = llama_cpp_python("json_schema_refused")
    assert 'File \\"/tmp/tv-llama/lib/python3.11/site-packages/llama_cpp/server/app.py\\", line 376' in refused["body"]
    replay = Replay(*[served(refused)] * 3)
    provider = compat(replay, "http://127.0.0.1:9/v1", api_key=None, profile=PROFILES["llamacpp"])
    with pytest.raises(RetryableError) as caught:
        await provider.complete(ask(**VERDICT))
    message = str(caught.value)
    assert "Input should be 'text' or 'json_object'" in message  # what the server said of the request stays
    assert "/tmp/" not in message and "app.py" not in message and "line 376" not in message
    assert message.endswith("if this endpoint is llama-cpp-python, choose the llama-cpp-python profile")


async def test_the_transformers_profile_sends_no_response_format_and_checks_the_reply_instead():
    body = await sent_body("transformers", effort="high", max_tokens=48, **VERDICT)
    assert "response_format" not in body and "reasoning_effort" not in body and body["max_tokens"] == 48
    assert PROFILES["transformers"].concurrency == 1


async def test_a_profile_without_structured_output_sends_no_response_format():
    replay = Replay(sse(*OK_STREAM))
    provider = compat(replay, "http://127.0.0.1:9/v1", profile=resolve_profile("openai", {"structured_output": "none"}))
    await provider.complete(ask(**VERDICT))
    assert "response_format" not in replay.bodies[0]


# --- grammar-friendly schemas ------------------------------------------------------------------

@pytest.mark.parametrize("name", ["generic", "openai", "llamacpp", "vllm"])
async def test_the_brief_schema_as_sent_has_no_length_or_count_bounds_and_no_alternatives(name):
    assert "maxLength" in json.dumps(brief_json_schema())  # the bounds exist...
    body = await sent_body(name, json_schema=brief_json_schema(), schema_name="reasoning_brief")
    schema = body["response_format"]["json_schema"]["schema"]
    sent = json.dumps(schema)
    for keyword in ("maxLength", "minLength", "maxItems", "minItems"):
        assert keyword not in sent  # ...but are not sent
    assert '"content_spec"' in sent and '"steps"' in sent
    assert "anyOf" not in schema and "anyOf" in brief_json_schema()  # OpenAI's strict mode refuses a root anyOf


async def test_the_verdict_schema_as_sent_in_openai_form_is_strict_and_has_no_alternatives():
    sent = (await sent_body("openai", **VERDICT))["response_format"]["json_schema"]
    assert sent["strict"] is True and "anyOf" not in sent["schema"] and "minLength" not in json.dumps(sent)


def alternatives(schema: dict) -> list[dict]:
    return [branch["properties"] for branch in schema["anyOf"]]


async def test_llama_cpp_python_is_sent_the_exact_shapes_of_a_brief():
    body = await sent_body("llama-cpp-python", json_schema=brief_json_schema(), schema_name="reasoning_brief")
    schema = body["response_format"]["schema"]
    sent = json.dumps(schema)
    assert "maxLength" not in sent and '"maxItems": 40' not in sent  # long repetitions stay out
    plan, decline = alternatives(schema)
    assert plan["steps"]["minItems"] == 1 and "decline_reason" not in plan
    assert decline["steps"]["maxItems"] == 0 and decline["decline_reason"]["minLength"] == 1
    assert decline["decline_reason"]["type"] == "string"  # not null: a declined brief says why
    step = schema["$defs"]["StepPlan"]["properties"]
    assert step["title"]["minLength"] == step["content_spec"]["minLength"] == 1
    assert step["index"]["enum"] == list(range(1, 41))  # grammar converters ignore minimum/maximum
    assert schema["properties"]["task"]["minLength"] == 1


async def test_llama_cpp_python_is_sent_the_exact_shapes_of_a_verdict():
    schema = (await sent_body("llama-cpp-python", **VERDICT))["response_format"]["schema"]
    passed, failed = alternatives(schema)
    assert passed["pass"]["enum"] == [True] and passed["issues"]["maxItems"] == 0
    assert failed["pass"]["enum"] == [False] and failed["issues"]["minItems"] == 1
    assert failed["issues"]["items"]["properties"]["detail"]["minLength"] == 1


@pytest.mark.parametrize("shape, valid", [
    ({"title": "Note", "requirements": [{"id": "R1", "text": "a note", "steps": [1]}],
      "steps": [{"index": 1, "title": "Scope", "content_spec": "Who is covered."}]}, True),
    ({"steps": []}, False),
    ({"steps": [], "decline_reason": "No policy text was given."}, True),
    ({"steps": [], "decline_reason": ""}, False),
    ({"steps": [{"index": 1, "title": "", "content_spec": "x"}]}, False),
    ({"steps": [{"index": 0, "title": "t", "content_spec": "x"}]}, False),
])
async def test_the_exact_brief_shapes_admit_what_the_brief_admits(shape, valid):
    """Each alternative, read as a grammar engine reads it, against pydantic's own judgement."""
    schema = (await sent_body("llama-cpp-python", json_schema=brief_json_schema()))["response_format"]["schema"]
    document = {"task": "Draft a note", **shape}
    assert any(admits(branch, document, schema["$defs"]) for branch in schema["anyOf"]) is valid
    try:
        Brief.model_validate(document)
    except ValueError:
        assert not valid
    else:
        assert valid


def admits(schema: dict, value, defs: dict) -> bool:
    """Just enough of JSON schema for the brief's exact shapes (no validator library is installed)."""
    if "$ref" in schema:
        return admits(defs[schema["$ref"].rsplit("/", 1)[1]], value, defs)
    if "anyOf" in schema:
        return any(admits(branch, value, defs) for branch in schema["anyOf"])
    if "enum" in schema and value not in schema["enum"]:
        return False
    kind = schema.get("type")
    if kind == "object":
        return (isinstance(value, dict) and set(schema["required"]) <= set(value)
                and set(value) <= set(schema["properties"])
                and all(admits(schema["properties"][k], v, defs) for k, v in value.items()))
    if kind == "array":
        return (isinstance(value, list) and schema.get("minItems", 0) <= len(value) <= schema.get("maxItems", 10**9)
                and all(admits(schema["items"], item, defs) for item in value))
    if kind == "string":
        return isinstance(value, str) and len(value) >= schema.get("minLength", 0)
    if kind == "null":
        return value is None
    return True


@pytest.mark.parametrize("name, sent", [
    ("llama-cpp-python", [{"role": "user", "content": "You are the VERIFIER.\n\nThe draft."}]),
    ("generic", [{"role": "system", "content": "You are the VERIFIER."}, {"role": "user", "content": "The draft."}]),
])
async def test_the_system_prompt_opens_the_first_user_message_where_a_template_drops_it(name, sent):
    """llama-cpp-python's `gemma` chat format drops system messages: the role's instructions go
    in the first user message instead."""
    from pipeline.providers.base import CompletionRequest, Message
    replay = Replay(sse(*OK_STREAM))
    provider = compat(replay, "http://127.0.0.1:9/v1", api_key=None, profile=PROFILES[name])
    await provider.complete(CompletionRequest(role="verifier", model="m", messages=(
        Message("system", "You are the VERIFIER."), Message("user", "The draft."))))
    assert replay.bodies[0]["messages"] == sent


def test_an_over_long_brief_field_is_still_rejected_when_parsed():
    brief = scripting.brief(1)
    brief["steps"][0]["content_spec"] = "x" * 4001
    with pytest.raises(ReplyError, match="content_spec"):
        parse_brief(json.dumps(brief))


# --- retries ---------------------------------------------------------------------------------

@pytest.mark.parametrize("profile, role_retries, attempts", [
    ("generic", None, 4), ("litellm", None, 2), ("litellm", 0, 1), ("ollama", 5, 6)])
async def test_transport_retries_come_from_the_profile_or_the_role(profile, role_retries, attempts):
    seen = []

    def handler(request):
        seen.append(request)
        return httpx.Response(503, headers={"retry-after": "0"}, json={"error": {"message": "busy"}})

    cfg = RoleConfig(provider="openai", model="m", base_url="http://127.0.0.1:9/v1", profile=profile,
                     retries=role_retries)
    provider = build_provider(cfg, address_policy=OPERATOR, env={}, transport=httpx.MockTransport(handler))
    with pytest.raises(Exception, match="HTTP 503"):
        await provider.complete(ask("m"))
    assert len(seen) == attempts


async def test_a_permanent_400_is_not_retried_whatever_the_profile():
    replay = Replay(httpx.Response(400, json={"error": {"message": "UnsupportedParamsError: ['reasoning_effort']"}}))
    with pytest.raises(PermanentError, match="UnsupportedParamsError"):
        await compat(replay, "http://127.0.0.1:9/v1", profile=PROFILES["generic"]).complete(ask())
    assert len(replay.requests) == 1


async def test_the_profile_reaches_every_role_through_build_role_providers():
    bodies = []

    def handler(request):
        bodies.append(json.loads(request.content))
        return sse(*OK_STREAM)

    topo = parse_topology(every_role(provider="openai", model="tiny", base_url="http://127.0.0.1:9/v1",
                                     profile="llama-cpp-python", max_tokens=300))
    providers = build_role_providers(topo, address_policy=OPERATOR, env={}, transport=httpx.MockTransport(handler))
    await providers["planner"].complete(ask("tiny", effort="high", max_tokens=300,
                                            json_schema=brief_json_schema()))
    [body] = bodies
    assert "reasoning_effort" not in body and body["max_tokens"] == 300
    assert body["response_format"]["type"] == "json_object" and "maxLength" not in json.dumps(body)


def test_anthropic_models_behind_openrouter_get_cache_breakpoints_on_the_shared_prefix():
    from pipeline.providers.base import CompletionRequest, Message
    from pipeline.providers.openrouter import OpenRouterProvider

    request = CompletionRequest(role="executor", model="anthropic/claude-haiku-4.5", messages=(
        Message("system", "You are the EXECUTOR."), Message("user", "# Workspace memories\n- a fact"),
        Message("user", "Render step 2.")))
    body = OpenRouterProvider(api_key="k", model="anthropic/claude-haiku-4.5").build_body(request)
    system, context, step = body["messages"]
    assert system["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert context["content"] == [{"type": "text", "text": "# Workspace memories\n- a fact",
                                   "cache_control": {"type": "ephemeral"}}]
    assert step["content"] == "Render step 2."  # the per-step part stays plain and uncached
    plain = OpenRouterProvider(api_key="k", model="z-ai/glm-5.3").build_body(
        CompletionRequest(role="executor", model="z-ai/glm-5.3", messages=request.messages))
    assert all(isinstance(m["content"], str) for m in plain["messages"])  # it caches on its own


def test_each_caller_gets_its_own_copy_of_the_brief_schema():
    first = brief_json_schema()
    assert first == Brief.model_json_schema()
    first["properties"].clear()  # a hook that edits its copy...
    assert brief_json_schema() == Brief.model_json_schema()  # ...edits nobody else's


def test_a_planner_without_research_pages_is_not_offered_the_evidence_field():
    # A grammar-constrained model fills every field it is offered: on a run without research it
    # invented evidence pages, and the brief was refused.
    cfg = RoleConfig(provider="openai", model="m", base_url="http://127.0.0.1:8088/v1")
    plain = build_planner_request(Context(task="Draft a policy"), cfg).json_schema
    assert "evidence" not in json.dumps(plain) and "EvidenceRef" not in json.dumps(plain)
    assert plain["required"] == ["task", "steps"] and len(plain["anyOf"]) == 2
    page = Evidence("E1", "https://example.org/a", "A page", "The fee is $49 per month.")
    researched = build_planner_request(Context(task="Draft a policy", evidence=(page,)), cfg).json_schema
    assert researched == brief_json_schema() and "evidence" in researched["properties"]
    # What the model may write without it is still a brief.
    assert parse_brief(json.dumps({"task": "Draft a policy", "steps": [
        {"index": 1, "title": "Scope", "content_spec": "Who it covers."}]})).steps
