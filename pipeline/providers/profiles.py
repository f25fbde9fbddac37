"""Endpoint profiles: what each kind of OpenAI-compatible server accepts, as declared data.

A role picks a profile by name (`"profile": "llamacpp"`), by name with per-field overrides
(`"profile": {"name": "litellm", "structured_output": "json_object"}`), or by overrides alone
(`"profile": {"structured_output": "json_object"}`: overrides of its provider's default profile).
A profile is never guessed from a URL or a model name: servers that look alike behave differently
(docs/model-servers.md says what each profile sends and why).
"""
from __future__ import annotations

from typing import Any, Literal
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pipeline.schemas import describe_errors

StructuredOutput = Literal["json_schema", "json_object_with_schema", "json_object", "none"]


class WindowSource(BaseModel):
    """Where a kind of server says a model's context window: one request, and where in its JSON
    answer the window is (docs/model-servers.md, "The model's context window"). vLLM lists
    `max_model_len` per model on /v1/models; llama-server gives its slots' `n_ctx` on /props;
    Ollama each loaded model's `context_length` on /api/ps (the window it runs with, often far
    below what the model was trained for); LM Studio `loaded_context_length` on
    /api/v0/models/{model}. llama-cpp-python's server says nothing of it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Below the server's root (the base URL without its `/v1`); `{model}` is the role's model.
    path: str
    method: Literal["GET", "POST"] = "GET"
    #: A POST's JSON body; string values may hold `{model}`.
    body: dict[str, str] | None = None
    #: Dotted path to a list of per-model entries, or None when the answer is about one model.
    entries: str | None = None
    #: The keys of an entry that name its model (the first that equals the role's model picks it).
    match: tuple[str, ...] = ("id",)
    #: Dotted paths to the window in tokens, first found wins.
    fields: tuple[str, ...] = Field(min_length=1)

    def url(self, base_url: str, model: str) -> str:
        root = base_url.rstrip("/")
        if root.endswith("/v1"):
            root = root[:-3]
        return f"{root}/{self.path.replace('{model}', quote(model, safe=''))}"

    def json_body(self, model: str) -> dict | None:
        return None if self.body is None else {k: v.replace("{model}", model) for k, v in self.body.items()}

    def window_in(self, answer: Any, model: str) -> int | None:
        """The window the answer gives for `model`, or None when it gives none that makes sense."""
        about = answer
        if self.entries is not None:
            listed = _at(answer, self.entries)
            about = next((e for e in listed if isinstance(e, dict) and any(e.get(k) == model for k in self.match)),
                         None) if isinstance(listed, list) else None
        for name in self.fields:
            value = _at(about, name)
            # A bool is an int to Python, and no window is under 512 tokens (a role's own minimum).
            if isinstance(value, int) and not isinstance(value, bool) and 512 <= value <= 10_000_000:
                return value
        return None


def _at(value: Any, dotted: str) -> Any:
    for key in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


class ProfileError(ValueError):
    """A profile name or override that cannot be used; the message says why."""


class EndpointProfile(BaseModel):
    """What an endpoint accepts and how it answers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "generic"
    description: str = ""
    #: How a JSON schema is asked for: `json_schema` (OpenAI's form), `json_object_with_schema`
    #: (`{"type": "json_object", "schema": ...}`), `json_object` (JSON of any shape), or `none`.
    #: Whatever is sent, the reply is validated after it arrives.
    structured_output: StructuredOutput = "json_schema"
    #: Send the valid shapes of the brief and the verdict as alternatives (`anyOf`), with their
    #: bounds of 0 and 1 (a non-empty title, at least one step or issue): a server that compiles
    #: the schema into a grammar then cannot write a brief of no step and no reason, or a failing
    #: verdict with no issue. Off where a server refuses them (OpenAI's strict mode refuses a
    #: root `anyOf`) or has not been checked with them (pipeline/providers/schema_forms.py).
    exact_shapes: bool = False
    #: Body field for the reasoning effort, dotted for a nested one (`reasoning.effort`); None:
    #: the effort is not sent, and no reasoning headroom is added to the token limit.
    effort_field: str | None = "reasoning_effort"
    max_tokens_field: str = "max_tokens"
    #: Send the system prompt at the head of the first user message instead of as a message of its
    #: own: some chat templates drop system messages without a word (llama-cpp-python's `gemma`).
    system_in_user: bool = False
    stream: bool = True
    #: Ask for usage in the stream's last chunk (`stream_options.include_usage`).
    stream_usage: bool = True
    #: Response headers naming the model that actually served the reply, most specific first;
    #: they win over the body's `model`, which a gateway fills with its alias.
    served_model_headers: tuple[str, ...] = ()
    #: A response header carrying the gateway's own cost figure: recorded as an estimate.
    cost_header: str | None = None
    #: What a `cost` inside the reply's usage is: the endpoint's own charge (OpenRouter), or a
    #: gateway's figure from its price table (LiteLLM with `include_cost_in_streaming_usage`).
    usage_cost: Literal["reported", "estimated"] = "reported"
    #: The server fills in a streamed reply's usage itself when the model behind it reported none
    #: (LiteLLM counts the text with its own tokenizer): a streamed usage cannot then be told from
    #: a real one, and is recorded as not reported.
    fills_in_stream_usage: bool = False
    #: A stream its upstream cut short can still end here as if complete (LiteLLM sends its own
    #: finish reason and `[DONE]`): a streamed reply's completeness is then unknown (`truncated:
    #: null` in the trace), and its step is never a plain pass.
    masks_cut_streams: bool = False
    #: Calls in flight at once per endpoint in this process; None: no limit of ours.
    concurrency: int | None = Field(default=None, ge=1)
    #: The model's context window in tokens (prompt and reply together) when the endpoint's kind
    #: tells it; None: unknown (a role's `context_tokens` says it). Runs fit their context to it.
    context_tokens: int | None = Field(default=None, ge=512)
    #: Where the server says the model's window (pipeline/providers/profiles.py): read at a run's
    #: start, it wins over `context_tokens`, and a role's own `context_tokens` can only lower it.
    window_source: WindowSource | None = None
    #: What one limit covers: the whole server (it serves one request at a time whatever the
    #: model name) or each model it serves.
    limit_per: Literal["server", "model"] = "model"
    #: The server retries failed upstream calls itself: our retries multiply with its own.
    server_retries: bool = False
    #: Transport retries of ours after the first attempt.
    retries: int = Field(default=3, ge=0, le=10)
    #: Model ids (by prefix) whose prompt cache needs explicit `cache_control` breakpoints (Anthropic
    #: and Gemini models behind OpenRouter); the others cache a shared prefix on their own.
    cache_control_models: tuple[str, ...] = ()


PROFILES: dict[str, EndpointProfile] = {p.name: p for p in (
    EndpointProfile(
        name="generic",
        description="Any OpenAI-compatible endpoint: the defaults when a role names no profile.",
    ),
    EndpointProfile(
        name="openai",
        description="OpenAI's API: strict JSON schemas, reasoning_effort, max_completion_tokens.",
        max_tokens_field="max_completion_tokens",
    ),
    EndpointProfile(
        name="openrouter",
        description="OpenRouter: reasoning.effort, cost reported in the usage, sticky sessions.",
        effort_field="reasoning.effort",
        cache_control_models=("anthropic/", "google/gemini"),
    ),
    EndpointProfile(
        name="litellm",
        description="LiteLLM proxy: not streamed (a stream hides upstream cuts), retries itself, names the "
                    "served model.",
        # The proxy refuses reasoning_effort for models it knows cannot reason (HTTP 400); name
        # the field in an override for a deployment that can.
        effort_field=None,
        # Behind the proxy, a stream its upstream cut short ([DONE] with no finish reason, or a
        # closed connection) arrives with finish_reason "stop" and a usage the proxy counted
        # itself: streamed, a fragment looks like a complete reply. Not streamed, the cut is an
        # error and the usage is the upstream's (zeros when it reported none).
        stream=False,
        # x-litellm-model-group repeats the alias the body already names; model-name is the
        # deployment's model behind it.
        served_model_headers=("x-litellm-model-name",),
        cost_header="x-litellm-response-cost",
        usage_cost="estimated",
        fills_in_stream_usage=True,
        masks_cut_streams=True,
        server_retries=True,
        retries=1,
    ),
    EndpointProfile(
        name="vllm",
        description="vLLM: JSON schemas by guided decoding, batches many requests at once.",
        window_source=WindowSource(path="v1/models", entries="data", fields=("max_model_len",)),
    ),
    EndpointProfile(
        name="ollama",
        description="Ollama: JSON schemas, no effort (non-thinking models refuse it), one request at a time.",
        effort_field=None,
        concurrency=1,
        retries=2,
        # The window a loaded model runs with (OLLAMA_CONTEXT_LENGTH, 4,096 by default on small
        # machines): requests over it are cut from the front without a word.
        window_source=WindowSource(path="api/ps", entries="models", match=("model", "name"),
                                   fields=("context_length",)),
    ),
    EndpointProfile(
        name="llamacpp",
        description="llama.cpp's own llama-server (NOT llama-cpp-python's: it 500s on these schemas), one slot.",
        effort_field=None,
        concurrency=1,
        limit_per="server",
        retries=2,
        window_source=WindowSource(path="props", fields=("default_generation_settings.n_ctx", "n_ctx")),
    ),
    EndpointProfile(
        name="lmstudio",
        description="LM Studio's server: JSON schemas, no effort, one request at a time; says its window.",
        effort_field=None,
        concurrency=1,
        retries=2,
        window_source=WindowSource(path="api/v0/models/{model}",
                                   fields=("loaded_context_length", "max_context_length")),
    ),
    EndpointProfile(
        name="llama-cpp-python",
        description="llama-cpp-python's server (not llama.cpp's): schema inside json_object, not streamed, "
                    "one request at a time.",
        structured_output="json_object_with_schema",
        # Checked with its grammar converter (llama_cpp/llama_grammar.py reads anyOf, $ref and
        # bounds of 0 and 1): without them Gemma 3 270M wrote briefs of no step and failing
        # verdicts of no issue (docs/model-servers.md).
        exact_shapes=True,
        # Its `gemma` chat format (the one `make model-server` uses) drops every system message
        # silently: the roles' instructions would never reach the model.
        system_in_user=True,
        effort_field=None,
        # Its streams carry no usage (stream_options is ignored), so a streamed call would be
        # recorded with no token counts; and a second request cuts a running stream short (or,
        # on the machines here, hangs the server), while a request not streamed just waits its turn.
        stream=False,
        stream_usage=False,
        concurrency=1,
        limit_per="server",
        retries=2,
        # Its server does not say its window (0.3.36: /v1/models names the alias only); `make
        # model-server` starts it with --n_ctx 8192. A server started with another (its own
        # default is 2048) needs the role's context_tokens.
        context_tokens=8192,
    ),
    EndpointProfile(
        name="transformers",
        description="transformers serve: ignores response_format (JSON asked for in the prompt only), one "
                    "at a time.",
        # It accepts response_format and generates free text anyway: sending it would only
        # pretend. The prompts describe the JSON; every reply is validated after it arrives.
        structured_output="none",
        effort_field=None,
        concurrency=1,
        limit_per="server",
        retries=2,
    ),
)}

#: The profile a role gets when it names none.
DEFAULT_PROFILE = {"openrouter": "openrouter", "openai": "generic"}


def profile_choices() -> list[tuple[str, str]]:
    """(name, one-line description) of every profile, for a settings page's select."""
    return [(p.name, p.description) for p in PROFILES.values()]


def resolve_profile(provider: str, spec: str | dict | None, *, concurrency: int | None = None,
                    retries: int | None = None) -> EndpointProfile:
    """The profile a role's `"profile"` value names, with its overrides and the role's own
    `concurrency` and `retries` applied; raise `ProfileError` with a clear message."""
    overrides: dict[str, Any] = {}
    if isinstance(spec, dict):
        overrides = dict(spec)
        name = overrides.pop("name", None) or DEFAULT_PROFILE.get(provider, "generic")
    else:
        name = spec or DEFAULT_PROFILE.get(provider, "generic")
    if not isinstance(name, str) or name not in PROFILES:
        raise ProfileError(f"unknown profile {name!r}; known profiles: {', '.join(PROFILES)}")
    if concurrency is not None:
        overrides["concurrency"] = concurrency
    if retries is not None:
        overrides["retries"] = retries
    base = PROFILES[name]
    if isinstance(overrides.get("reasoning_effort"), bool):
        # Stored topologies say {"reasoning_effort": false} for "do not send the effort".
        send = overrides.pop("reasoning_effort")
        overrides.setdefault("effort_field", (base.effort_field or "reasoning_effort") if send else None)
    try:
        return EndpointProfile.model_validate({**base.model_dump(), **overrides})
    except ValidationError as exc:
        raise ProfileError(f"invalid profile override for {name!r}: {describe_errors(exc, 5)}") from None
