"""A provider for any OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, vLLM, llama.cpp).

The transport (auth, streaming, retries, the endpoint's concurrency limit) lives in
`OpenAICompatibleProvider`; what differs between endpoints lives in an `EndpointProfile`
(profiles.py: declared data) and in a few small hook methods a subclass overrides
(`apply_structured_output`, `extra_body`, `error_message`, `note_choice`, `map_usage`), as
`openrouter.py` does. No call site asks which vendor it is talking to.
"""
from __future__ import annotations

import asyncio
import json
import logging
import math
import random
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field

from pipeline.net import ACCEPT_ENCODING, AddressRefused, BodyRefused, EncodingRefused, iter_lines, read_body
from pipeline.providers.base import Completion, CompletionRequest, PermanentError, Provider, RetryableError, Usage
from pipeline.providers.error_text import without_server_detail
from pipeline.providers.limits import endpoint_slot
from pipeline.providers.profiles import EndpointProfile
from pipeline.providers.schema_forms import grammar_friendly, is_strict_compatible
from pipeline.providers.sse import DONE, iter_sse_data
from pipeline.redaction import Redactor

log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[None]]
#: An error body is read this far at most: its message is cut to a few hundred characters anyway.
ERROR_BODY_BYTES = 64 * 1024
#: Added to the final error of a structured call that a `llamacpp` endpoint answered with a 500.
LLAMACPP_500_NOTE = ("the llamacpp profile is for llama.cpp's own llama-server; llama-cpp-python's server answers "
                     "this form of structured output with a 500: if this endpoint is llama-cpp-python, choose the "
                     "llama-cpp-python profile")
#: A body larger than this is parsed in a thread, so the event loop is not held while it is.
PARSE_OFF_LOOP_BYTES = 256 * 1024
#: The answer that says a model's window is read this far at most (a long model list included),
#: and waited for this long: a run starts on its profile's window rather than wait longer.
WINDOW_BODY_BYTES = 1024 * 1024
WINDOW_TIMEOUT_S = 5.0


class ProviderOptions(BaseModel):
    """Transport tuning; tests shrink the delays, deployments rarely touch the rest."""

    model_config = ConfigDict(extra="forbid")

    #: None: the profile's `retries`.
    max_retries: int | None = Field(default=None, ge=0)
    backoff_base_s: float = Field(default=1.0, ge=0)
    backoff_max_s: float = Field(default=30.0, ge=0)
    #: Fraction of a backoff delay that is randomised, so parallel steps do not retry in lockstep.
    jitter: float = Field(default=0.25, ge=0, le=1)
    retry_after_cap_s: float = Field(default=120.0, ge=0)
    connect_timeout_s: float = Field(default=15.0, gt=0)
    #: Longest silence between two bytes; keep-alive comments reset it.
    read_timeout_s: float = Field(default=180.0, gt=0)
    #: Ceiling on one attempt end to end, so a trickling stream cannot hang a run. A reply that is
    #: not streamed is silent until it is whole: the read timeout is then this one.
    attempt_timeout_s: float = Field(default=900.0, gt=0)
    #: A reply's size limit (BEYOND_MAX_REPLY_BYTES): a body that is not streamed, in bytes; for
    #: a stream, any one line and the text its chunks add up to, in characters. Over it, the call
    #: fails (`too_large`) and is not retried. An error body is read up to ERROR_BODY_BYTES.
    max_reply_bytes: int = Field(default=8_000_000, ge=1024)
    #: The role's max_tokens: a ceiling on everything the model generates, reasoning included,
    #: sent as it is (a reasoning model needs room in it for its thinking).
    default_max_tokens: int | None = Field(default=None, ge=1)


class _AttemptFailed(Exception):
    """One attempt's failure, before the retry loop decides whether it is final."""

    def __init__(self, kind: str, message: str, *, retryable: bool, status: int | None = None,
                 retry_after_s: float | None = None, note: str | None = None):
        super().__init__(message)
        self.kind, self.message, self.retryable = kind, message, retryable
        self.status, self.retry_after_s = status, retry_after_s
        #: Added to the message should this failure be the final one.
        self.note = note


@dataclass
class ReplyState:
    """What the chunks (or the one non-streamed body) of a reply have said so far."""

    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    finish_reason: str | None = None
    usage: dict | None = None
    model: str | None = None
    provider: str | None = None
    id: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    #: Characters of text, reasoning and refusal held so far.
    held: int = 0
    streamed: bool = False
    chunks: int = 0
    saw_choice: bool = False
    done: bool = False


def parse_retry_after(value: str | None, cap_s: float) -> float | None:
    """Seconds to wait from a `Retry-After` header (delta-seconds or HTTP date), capped."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError, IndexError):
            return None
    return min(max(seconds, 0.0), cap_s)


class OpenAICompatibleProvider(Provider):
    """Chat completions over one reusable `httpx.AsyncClient`, with transport retries.

    Safe to share across concurrent requests; call `aclose()` when done. The API key goes into
    the Authorization header only. It and every other configured secret (`redactor`) are blanked
    from what the endpoint sends back: reply text, reasoning, raw fields and error messages.
    `no_key_note` says why no key was sent, when none was; it is added to the final error of a
    401, a 403 or a bare 5xx, where a missing key is the likely cause.
    """

    language_model = True

    def __init__(self, base_url: str, *, api_key: str | None = None, name: str = "openai",
                 model: str = "", profile: EndpointProfile | None = None,
                 options: ProviderOptions | None = None, headers: Mapping[str, str] | None = None,
                 transport: httpx.AsyncBaseTransport | None = None, sleep: Sleep = asyncio.sleep,
                 redactor: Redactor | None = None, no_key_note: str | None = None):
        self.name = name
        self.model = model
        self.profile = profile or EndpointProfile()
        self.options = options or ProviderOptions()
        self.max_retries = self.profile.retries if self.options.max_retries is None else self.options.max_retries
        self._redactor = (redactor or Redactor()).with_secrets(api_key)
        self._no_key_note = None if api_key else no_key_note
        self._sleep = sleep
        all_headers = {"Accept": "application/json, text/event-stream", "Accept-Encoding": ACCEPT_ENCODING,
                       **(headers or {})}
        if api_key:
            all_headers["Authorization"] = f"Bearer {api_key}"
        opts = self.options
        read_timeout_s = opts.read_timeout_s if self.profile.stream else opts.attempt_timeout_s
        timeout = httpx.Timeout(read_timeout_s, connect=opts.connect_timeout_s)
        # Redirects are never followed: the endpoint is the one the topology names and the address
        # policy checked, and a Location header must not carry the key somewhere else.
        self._client = httpx.AsyncClient(base_url=base_url, headers=all_headers, timeout=timeout,
                                         transport=transport, follow_redirects=False)

    def effort_sent(self, request: CompletionRequest) -> str | None:
        """None when this endpoint's profile sends no effort."""
        return request.effort if self.profile.effort_field else None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, base_url={str(self._client.base_url)!r})"

    async def aclose(self) -> None:
        await self._client.aclose()

    async def context_window(self) -> int | None:
        """The model's context window as the server says it (its profile's `window_source`), or
        None: the profile names no source, or the server did not answer it in time and in sense."""
        source = self.profile.window_source
        if source is None or not self.model:
            return None
        url = source.url(str(self._client.base_url), self.model)
        try:
            async with asyncio.timeout(WINDOW_TIMEOUT_S):
                async with self._client.stream(source.method, url, json=source.json_body(self.model)) as response:
                    if response.status_code != 200:
                        return None
                    answer = await _parse_json(await read_body(response, max_bytes=WINDOW_BODY_BYTES))
        except (TimeoutError, httpx.HTTPError, BodyRefused) as exc:  # AddressRefused is an httpx error
            log.info("%s did not say its window: %s", self.name, self._safe(f"{type(exc).__name__}: {exc}"))
            return None
        return source.window_in(answer, self.model)

    def endpoint_key(self, model: str) -> str:
        """What one concurrency limit covers: the server, or one model on it."""
        base = str(self._client.base_url).rstrip("/")
        return base if self.profile.limit_per == "server" else f"{base} {model}"

    # --- hooks a vendor subclass may override -------------------------------------------------

    def apply_structured_output(self, body: dict, request: CompletionRequest) -> None:
        mode = self.profile.structured_output
        schema = grammar_friendly(request.json_schema, exact=self.profile.exact_shapes)
        if mode == "json_schema":
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": request.schema_name, "schema": schema, "strict": is_strict_compatible(schema)}}
        elif mode == "json_object_with_schema":
            body["response_format"] = {"type": "json_object", "schema": schema}
        elif mode == "json_object":
            body["response_format"] = {"type": "json_object"}

    def extra_body(self, body: dict, request: CompletionRequest) -> None:
        """Vendor-specific request fields; none for a plain OpenAI-compatible endpoint."""

    def error_message(self, payload: Any) -> str | None:
        """The human-readable message of an error body (`{"error": {...}}` or `{"error": "..."}`)."""
        if not isinstance(payload, dict):
            return None
        error = payload.get("error", payload)
        if isinstance(error, str):
            return error
        if isinstance(error, dict):
            message = error.get("message")
            return str(message) if message else None
        return None

    def note_choice(self, choice: dict, state: ReplyState) -> None:
        """Record vendor extras of a choice in `state.extras`; nothing for plain endpoints."""

    def map_usage(self, usage: dict | None) -> Usage | None:
        """Map reported usage to disjoint buckets (cached and reasoning tokens are not counted
        twice); None when the endpoint reported none. No prompt token and no completion token is
        none reported either: every call has a prompt, and zeros are what a gateway (LiteLLM) sends
        when the model behind it reported nothing."""
        if not usage or not (_int(usage.get("prompt_tokens")) or _int(usage.get("completion_tokens"))):
            return None
        prompt_details = usage.get("prompt_tokens_details") or {}
        completion_details = usage.get("completion_tokens_details") or {}
        cache_read = _int(prompt_details.get("cached_tokens")) or _int(usage.get("prompt_cache_hit_tokens"))
        cache_write = _int(prompt_details.get("cache_write_tokens")) or _int(usage.get("cache_write_tokens"))
        reasoning = _int(completion_details.get("reasoning_tokens"))
        return Usage(
            input=max(_int(usage.get("prompt_tokens")) - cache_read - cache_write, 0),
            cache_read=cache_read,
            cache_write=cache_write,
            output=max(_int(usage.get("completion_tokens")) - reasoning, 0),
            reasoning=reasoning,
        )

    # --- request ------------------------------------------------------------------------------

    def build_body(self, request: CompletionRequest) -> dict:
        """The JSON body for one request; the profile and the hooks add what the endpoint needs."""
        profile = self.profile
        body: dict[str, Any] = {
            "model": request.model or self.model,
            "messages": _messages(request.messages, system_in_user=profile.system_in_user),
            "stream": profile.stream,
        }
        if profile.stream and profile.stream_usage:
            body["stream_options"] = {"include_usage": True}
        if profile.effort_field:
            _set_dotted(body, profile.effort_field, request.effort)
        max_tokens = request.max_tokens or self.options.default_max_tokens
        if max_tokens:
            # The operator's number is a ceiling: nothing is added to it, for reasoning or anything else.
            body[profile.max_tokens_field] = max_tokens
        if request.json_schema is not None and profile.structured_output != "none":
            self.apply_structured_output(body, request)
        if body["model"].startswith(profile.cache_control_models):
            mark_cache_breakpoints(body["messages"])
        self.extra_body(body, request)
        return body

    async def complete(self, request: CompletionRequest) -> Completion:
        """Run one request, retrying transport failures; raise RetryableError/PermanentError at the end."""
        body = self.build_body(request)
        endpoint = self.endpoint_key(body["model"])
        started = time.monotonic()
        retries = 0
        while True:
            try:
                async with endpoint_slot(endpoint, self.profile.concurrency):
                    async with asyncio.timeout(self.options.attempt_timeout_s):
                        completion = await self._attempt(body)
                completion.transport_retries = retries
                completion.latency_s = time.monotonic() - started
                return completion
            except TimeoutError:
                failure = _AttemptFailed("timeout", f"no complete reply from {self.name} within "
                                         f"{self.options.attempt_timeout_s:g}s", retryable=True)
            except _AttemptFailed as exc:
                failure = exc
            if not failure.retryable or retries >= self.max_retries:
                error_class = RetryableError if failure.retryable else PermanentError
                message = f"{failure.message}; {failure.note}" if failure.note else failure.message
                raise error_class(failure.kind, message, status=failure.status,
                                  transport_retries=retries, latency_s=time.monotonic() - started) from None
            delay = self.retry_delay(retries, failure.retry_after_s)
            retries += 1
            log.warning("%s %s: %s; retry %d of %d in %.2fs", self.name, failure.kind, failure.message,
                        retries, self.max_retries, delay)
            await self._sleep(delay)

    def retry_delay(self, retries_so_far: int, retry_after_s: float | None) -> float:
        """`Retry-After` when the server gave one (already capped), else jittered exponential backoff."""
        if retry_after_s is not None:
            return retry_after_s
        opts = self.options
        delay = min(opts.backoff_base_s * 2 ** retries_so_far, opts.backoff_max_s)
        return delay * (1 - opts.jitter * random.random())

    # --- one attempt --------------------------------------------------------------------------

    async def _attempt(self, body: dict) -> Completion:
        try:
            async with self._client.stream("POST", "chat/completions", json=body) as response:
                if response.status_code != 200:
                    raise self._http_failure(response, await _error_body(response),
                                             structured="response_format" in body)
                if "text/event-stream" in response.headers.get("content-type", ""):
                    state = await self._read_stream(response)
                else:
                    raw = await read_body(response, max_bytes=self.options.max_reply_bytes)
                    state = self._read_json(await _parse_json(raw))
        except BodyRefused as exc:  # too large, or a refused encoding: another try would bring the same reply
            raise _AttemptFailed(exc.reason, f"{self.name}'s reply was not read: {exc}", retryable=False) from None
        except httpx.TimeoutException as exc:
            raise _AttemptFailed("timeout", f"{type(exc).__name__} from {self.name}", retryable=True) from None
        except AddressRefused as exc:  # the address policy will refuse it again: no retry
            raise _AttemptFailed("address_refused", self._safe(str(exc)), retryable=False) from None
        except httpx.TransportError as exc:
            # Refused connections and streams cut mid-way are worth another try.
            message = self._safe(f"{type(exc).__name__}: {exc}")
            raise _AttemptFailed("connection", message, retryable=True) from None
        return self._completion(state, response.headers)

    def _http_failure(self, response: httpx.Response, body: bytes, *, structured: bool = False) -> _AttemptFailed:
        status = response.status_code
        retry_after = parse_retry_after(response.headers.get("retry-after"), self.options.retry_after_cap_s)
        retryable = status in (408, 429) or status >= 500 or (status == 402 and retry_after is not None)
        detail = self.error_message(_json_or_none(body))
        if response.is_redirect:
            detail = "it answered with a redirect, and redirects are not followed for model endpoints"
        over = context_overflow(detail) if status == 400 and detail else None
        if over:  # the same request would be refused again: in words, and not retried
            needed, window = over
            return _AttemptFailed("context_too_long", self._safe(
                f"HTTP 400 from {self.name}: the task and context need {needed:,} tokens; this model takes "
                f"{window:,} (its context window). Set the role's context_tokens to {window} so that runs fit it"),
                retryable=False, status=status)
        # A server that wanted a key says 401 or 403, or (some local servers) a 500 with no word.
        missing_key = status in (401, 403) or (status >= 500 and not detail)
        note = self._no_key_note if missing_key else None
        if status == 500 and structured and self.profile.name == "llamacpp":
            note = LLAMACPP_500_NOTE
        message = self._safe(f"HTTP {status} from {self.name}: {detail or response.reason_phrase or 'no detail'}")
        return _AttemptFailed(f"http_{status}", message, retryable=retryable, status=status, retry_after_s=retry_after,
                              note=note)

    async def _read_stream(self, response: httpx.Response) -> ReplyState:
        state = ReplyState(streamed=True)
        cap = self.options.max_reply_bytes
        async for data in iter_sse_data(iter_lines(response, max_line_chars=cap), max_event_chars=cap):
            if data.strip() == DONE:
                state.done = True
                break
            try:
                chunk = json.loads(data)
            except ValueError:
                raise _AttemptFailed("bad_response", f"{self.name} sent a stream chunk that is not JSON",
                                     retryable=True) from None
            self._absorb(chunk, state)
        if not state.saw_choice:
            raise _AttemptFailed("bad_response", f"{self.name} streamed no choices", retryable=True)
        if state.finish_reason is None:
            # A server that cuts a reply short (closing the connection, or sending [DONE] as
            # llama-cpp-python does when another request interrupts it) gives no finish reason:
            # what arrived is a fragment, never a complete draft or verdict.
            how = "[DONE] arrived" if state.done else "the connection closed"
            raise _AttemptFailed("incomplete", f"{self.name}'s stream ended without a finish reason ({how})",
                                 retryable=True)
        return state

    def _read_json(self, payload: Any) -> ReplyState:
        if not isinstance(payload, dict):
            raise _AttemptFailed("bad_response", f"{self.name} replied with a body that is not a JSON object",
                                 retryable=True)
        state = ReplyState()
        self._absorb(payload, state)
        if not state.saw_choice:
            raise _AttemptFailed("bad_response", f"{self.name} replied with no choices", retryable=True)
        return state

    def _absorb(self, chunk: dict, state: ReplyState) -> None:
        """Fold one chunk (or a whole non-streamed body) into `state`; an `error` key fails the attempt."""
        if chunk.get("error"):
            detail = self.error_message(chunk) or "unspecified error"
            raise _AttemptFailed("provider_error", self._safe(f"{self.name} reported an error: {detail}"),
                                 retryable=True)
        state.chunks += 1
        state.id = state.id or chunk.get("id")
        state.model = chunk.get("model") or state.model
        state.provider = chunk.get("provider") or state.provider
        if chunk.get("usage"):
            state.usage = chunk["usage"]
        choices = chunk.get("choices") or []
        if not choices:
            return
        choice = choices[0]
        state.saw_choice = True
        part = choice.get("delta") or choice.get("message") or {}
        if isinstance(part.get("content"), str):
            state.text.append(part["content"])
            state.held += len(part["content"])
        if isinstance(part.get("refusal"), str) and part["refusal"]:
            state.refusal.append(part["refusal"])
            state.held += len(part["refusal"])
        state.reasoning.append(_reasoning_text(part))
        state.held += len(state.reasoning[-1])
        if state.held > self.options.max_reply_bytes:
            raise _AttemptFailed("too_large", f"{self.name}'s reply is longer than "
                                 f"{self.options.max_reply_bytes:,} characters", retryable=False)
        # A later chunk with a null finish_reason must not erase "length".
        if choice.get("finish_reason"):
            state.finish_reason = choice["finish_reason"]
        if state.finish_reason == "error":
            raise _AttemptFailed("provider_error", f"{self.name} ended the reply with an error", retryable=True)
        self.note_choice(choice, state)

    def _completion(self, state: ReplyState, headers: httpx.Headers) -> Completion:
        served = next((headers[h] for h in self.profile.served_model_headers if headers.get(h)), None)
        usage = self.map_usage(state.usage)
        cost, cost_source = self._cost(state.usage, headers)
        if usage is None and cost_source == "estimated":
            cost, cost_source = None, None  # an estimate worked out from no usage at all is no figure
        if state.streamed and self.profile.fills_in_stream_usage:
            usage = None  # the gateway's own count or the model's: nothing tells which
        raw = {"id": state.id, "model": state.model, "provider": state.provider,
               "finish_reason": state.finish_reason,
               "usage": state.usage, "chunks": state.chunks, **state.extras}
        redact = self._redactor.redact
        return Completion(
            text=redact("".join(state.text)),
            finish_reason=state.finish_reason,
            reasoning=redact("".join(state.reasoning)),
            refusal=redact("".join(state.refusal)) or None,
            usage=usage,
            cost=cost,
            cost_source=cost_source,
            model_served=redact(served or state.model or "") or None,
            provider=redact(state.provider or self.name),
            raw=self._redactor.redact_data(raw),
            completeness_unknown=state.streamed and self.profile.masks_cut_streams,
        )

    def _cost(self, usage: dict | None, headers: httpx.Headers) -> tuple[float | None, str | None]:
        """The cost in the usage (the endpoint's charge, or a gateway's estimate: the profile says
        which), else the gateway's estimate in a header."""
        reported = (usage or {}).get("cost")
        if isinstance(reported, (int, float)) and not isinstance(reported, bool) and math.isfinite(reported):
            return float(reported), self.profile.usage_cost
        if self.profile.cost_header:
            try:
                estimate = float(headers.get(self.profile.cost_header, ""))
            except ValueError:
                return None, None
            if math.isfinite(estimate):
                return estimate, "estimated"
        return None, None

    def _safe(self, text: str, limit: int = 600) -> str:
        """Blank out every configured secret, should a server ever echo one, and the server's own
        tracebacks and file paths (error_text.py); cut to size."""
        text = self._redactor.redact(without_server_detail(text))
        return text if len(text) <= limit else text[:limit] + "..."


def _set_dotted(body: dict, path: str, value: Any) -> None:
    """`reasoning.effort` sets body["reasoning"]["effort"]."""
    *parents, leaf = path.split(".")
    for key in parents:
        body = body.setdefault(key, {})
    body[leaf] = value


def _reasoning_text(part: dict) -> str:
    """Reasoning from a delta or message: `reasoning` (OpenRouter, Ollama), `reasoning_content`
    (DeepSeek, vLLM), else the text of `reasoning_details` (which OpenRouter duplicates in `reasoning`)."""
    for key in ("reasoning", "reasoning_content"):
        if isinstance(part.get(key), str) and part[key]:
            return part[key]
    pieces = []
    for detail in part.get("reasoning_details") or []:
        if isinstance(detail, dict):
            text = detail.get("text") or detail.get("summary")
            if isinstance(text, str):
                pieces.append(text)
    return "".join(pieces)


#: How servers say a request is over the model's window: (needed, window) from llama-cpp-python,
#: from OpenAI and vLLM, and from llama.cpp's server.
_OVERFLOW = (
    (re.compile(r"Requested tokens \((\d+)\) exceed context window of (\d+)", re.I), (1, 2)),
    (re.compile(r"maximum context length is (\d+) tokens.*?(?:requested|resulted in) (\d+) tokens", re.I | re.S), (2, 1)),
    (re.compile(r"request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)", re.I), (1, 2)),
)


def context_overflow(detail: str) -> tuple[int, int] | None:
    """(tokens the request needed, the model's window) when `detail` says it was over the window."""
    for pattern, (needed, window) in _OVERFLOW:
        found = pattern.search(detail)
        if found:
            return int(found.group(needed)), int(found.group(window))
    return None


def _json_or_none(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


async def _parse_json(body: bytes) -> Any:
    """The JSON of a reply body, None when it is not JSON; parsed in a thread when it is large."""
    if len(body) > PARSE_OFF_LOOP_BYTES:
        return await asyncio.to_thread(_json_or_none, body)
    return _json_or_none(body)


async def _error_body(response: httpx.Response) -> bytes:
    """The start of an error body, decoded under a bound; empty when it cannot be read."""
    try:
        return await read_body(response, max_bytes=ERROR_BODY_BYTES, cut=True)
    except (EncodingRefused, httpx.HTTPError):
        return b""


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def mark_cache_breakpoints(messages: list[dict]) -> None:
    """Mark every message but the last as a prompt-cache breakpoint (at most three, the fourth
    being the provider's limit): the system prompt and the long stable context are then read from
    the cache by every later call of the run that shares them, and only the per-step part is new."""
    for message in messages[:-1][-3:]:
        if isinstance(message.get("content"), str):
            message["content"] = [{"type": "text", "text": message["content"], "cache_control": {"type": "ephemeral"}}]


def _messages(messages, *, system_in_user: bool) -> list[dict]:
    """The request's messages as sent; with `system_in_user`, the system prompts open the first
    user message (separated by a blank line) instead of going as messages of their own."""
    sent = [{"role": m.role, "content": m.content} for m in messages]
    if not system_in_user:
        return sent
    system = [m["content"] for m in sent if m["role"] == "system"]
    rest = [m for m in sent if m["role"] != "system"]
    if system:
        first_user = next((m for m in rest if m["role"] == "user"), None)
        if first_user is None:
            rest.insert(0, {"role": "user", "content": "\n\n".join(system)})
        else:
            first_user["content"] = "\n\n".join([*system, first_user["content"]])
    return rest

