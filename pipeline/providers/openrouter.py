"""OpenRouter: the OpenAI-compatible provider with OpenRouter's request fields and error shape."""
from __future__ import annotations

import asyncio
from typing import Any

import httpx

from pipeline.providers.base import CompletionRequest
from pipeline.providers.openai_compat import OpenAICompatibleProvider, ProviderOptions, ReplyState, Sleep
from pipeline.providers.profiles import PROFILES, EndpointProfile
from pipeline.redaction import Redactor

DEFAULT_BASE_URL = "https://openrouter.ai/api/v1"


class OpenRouterProvider(OpenAICompatibleProvider):
    """OpenRouter's chat completions: usage with cost, sticky sessions, upstream error details
    (its `reasoning.effort` comes from the `openrouter` profile).

    `referer` and `title` become the optional `HTTP-Referer` and `X-Title` attribution headers.
    """

    def __init__(self, *, api_key: str, base_url: str = DEFAULT_BASE_URL, model: str = "",
                 options: ProviderOptions | None = None, profile: EndpointProfile | None = None,
                 referer: str | None = None, title: str | None = None,
                 transport: httpx.AsyncBaseTransport | None = None, sleep: Sleep = asyncio.sleep,
                 redactor: Redactor | None = None):
        headers = {}
        if referer:
            headers["HTTP-Referer"] = referer
        if title:
            headers["X-Title"] = title
        super().__init__(base_url, api_key=api_key, name="openrouter", model=model,
                         profile=profile or PROFILES["openrouter"], options=options, headers=headers,
                         transport=transport, sleep=sleep, redactor=redactor)

    def apply_structured_output(self, body: dict, request: CompletionRequest) -> None:
        super().apply_structured_output(body, request)
        # Without this OpenRouter may route to a host that silently ignores response_format.
        body["provider"] = {"require_parameters": True}

    def extra_body(self, body: dict, request: CompletionRequest) -> None:
        body["usage"] = {"include": True}
        if request.session_id:
            # One id per run keeps a run's calls on the same host, so its prompt cache stays warm.
            body["session_id"] = request.session_id

    def error_message(self, payload: Any) -> str | None:
        """`{"error": {"message", "metadata": {"provider_name", "raw"}}}`: the upstream's words matter most."""
        message = super().error_message(payload)
        error = payload.get("error") if isinstance(payload, dict) else None
        metadata = error.get("metadata") if isinstance(error, dict) else None
        if not isinstance(metadata, dict):
            return message
        upstream = metadata.get("provider_name")
        raw = metadata.get("raw")
        if upstream:
            message = f"{message} ({upstream})"
        if isinstance(raw, str) and raw:
            message = f"{message}: {raw}"
        return message

    def note_choice(self, choice: dict, state: ReplyState) -> None:
        if choice.get("native_finish_reason"):
            state.extras["native_finish_reason"] = choice["native_finish_reason"]
