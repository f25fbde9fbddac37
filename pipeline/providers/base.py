"""The one small interface every model provider implements.

A provider turns a `CompletionRequest` into a `Completion` or raises a `ProviderError`. Transport
retries (408/429/5xx, timeouts, a 200 carrying an error) happen inside the provider and are
counted in `Completion.transport_retries`; the orchestrator only ever sees a final result or a
final error (docs/verifier-contract.md).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

Role = Literal["planner", "executor", "verifier", "summarizer"]
#: The roles in the order a run uses them.
ROLES: tuple[Role, ...] = get_args(Role)
Effort = Literal["high", "medium", "low"]


@dataclass(frozen=True)
class Message:
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class CompletionRequest:
    """What a role asks of its model.

    `messages` is the whole prompt for HTTP providers. `payload` carries the same inputs as plain
    data for the built-in offline engine, which composes from structure rather than prose; for
    the verifier it is built by the same single function as the messages, so it carries nothing
    but the brief and the draft either.
    """

    role: Role
    model: str
    messages: tuple[Message, ...]
    effort: Effort = "low"
    json_schema: dict | None = None
    schema_name: str = "reply"
    max_tokens: int | None = None
    step_index: int | None = None
    attempt: int | None = None
    session_id: str | None = None
    payload: dict[str, Any] = field(default_factory=dict)
    #: The context the messages were made from (a planner's or an executor's): what a released
    #: draft may draw on, which its unsourced specifics are read against (pipeline/specifics).
    sources: Any = None


@dataclass
class Usage:
    """Token usage as the endpoint reported it, in disjoint buckets."""

    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0
    reasoning: int = 0


#: `reported`: the endpoint says it is the charge (OpenRouter's usage.cost); `estimated`: a
#: gateway's own figure (LiteLLM's price table), which may differ from what is billed.
CostSource = Literal["reported", "estimated"]


@dataclass
class Completion:
    text: str
    finish_reason: str | None = None
    reasoning: str = ""
    refusal: str | None = None
    #: None when the endpoint reported no usage: unknown, which is not the same as zero.
    usage: Usage | None = None
    #: In USD; None when the endpoint gave no figure.
    cost: float | None = None
    cost_source: CostSource | None = None
    model_served: str | None = None
    provider: str = ""
    latency_s: float = 0.0
    transport_retries: int = 0
    raw: Any = None
    #: The reply came through a gateway that can end a stream its upstream cut short as if it were
    #: complete (a profile's `masks_cut_streams`): whether it is whole cannot be told.
    completeness_unknown: bool = False

    @property
    def truncated(self) -> bool | None:
        """True when the output limit cut the reply off, None when nothing can tell (a gateway
        that masks cut streams), False when it ended on its own."""
        if self.finish_reason == "length":
            return True
        return None if self.completeness_unknown else False


class ProviderError(Exception):
    """A call's final failure, after any transport retries.

    `kind` is short and stable (`timeout`, `http_500`, `http_429`, `http_401`, `crash`,
    `bad_response`, `exhausted`, ...); the message is safe to show and never holds a secret.
    """

    retryable = False

    def __init__(self, kind: str, message: str, *, status: int | None = None, transport_retries: int = 0,
                 latency_s: float = 0.0):
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.transport_retries = transport_retries
        self.latency_s = latency_s

    def __str__(self) -> str:
        return f"{self.kind}: {self.args[0]}"


class RetryableError(ProviderError):
    """408, 429, 5xx, timeouts, a 200 with an error body or no choices: worth another try."""

    retryable = True


class PermanentError(ProviderError):
    """400, 401, 403, 402 without Retry-After: another try would fail the same way."""


class Provider:
    """What every model provider is: a name, the capabilities it declares, and `complete`.

    Capabilities are class attributes whose defaults are declared here once, so a provider says
    only where it differs (simonw/llm's model attributes, pydantic-ai's profiles), and the pipeline
    reads them through `declared`, never by a provider's name.
    """

    name: str = ""
    #: True for the built-in engine: the UI labels its output so nobody mistakes it for a model.
    offline: bool = False
    #: Whether a language model reads the requests. A step let through by a verifier that is not
    #: one (the offline engine's) is badged `checked`, never `passed` (docs/verifier-contract.md,
    #: "Who checked"): the badge follows this declaration, never the model's name. A provider that
    #: declares nothing is not taken for a model.
    language_model: bool = False

    async def complete(self, request: CompletionRequest) -> Completion:
        raise NotImplementedError

    @staticmethod
    def effort_sent(request: CompletionRequest) -> str | None:
        """The reasoning effort the endpoint is actually sent (an HTTP provider's profile may send
        none), so that a call's record says what was sent, not what the topology wished."""
        return request.effort

    async def context_window(self) -> int | None:
        """The model's context window in tokens as its server says it; None when it says none."""
        return None

    async def aclose(self) -> None:
        """Release what the provider holds (an HTTP client's connections); nothing by default."""
        return None


def declared(provider: object, capability: str):
    """What `provider` declares of `capability`, or `Provider`'s default when it declares nothing
    (an object with a `complete` of its own that is not built on `Provider`, such as a test double)."""
    return getattr(provider, capability, getattr(Provider, capability))
