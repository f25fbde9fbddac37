"""`OfflineProvider`: the built-in engine that serves all four roles with no network and no API key.

Deterministic (same payload, same text; no randomness, no clock) and fast. It reads the
request's structured `payload`, never the prose prompt.
"""
from __future__ import annotations

import json

from pipeline.providers.base import Completion, CompletionRequest, Provider, ProviderError

from . import executor, planner, summarizer, verifier

MODEL = "beyond-offline-1"


class OfflineProvider(Provider):
    """Answers planner, executor, verifier and summarizer requests from templates and framework packs."""

    name = "offline"
    #: The UI labels offline output so nobody mistakes it for a model's.
    offline = True
    #: Templates and rules, not a model: its verifier's passes are mechanical checks only.
    language_model = False

    async def complete(self, request: CompletionRequest) -> Completion:
        """The role's reply for `request.payload`; ProviderError when the payload lacks what the role needs."""
        payload = request.payload or {}
        try:
            text = self._reply(request.role, payload)
        except KeyError as exc:
            raise ProviderError("bad_request", f"the offline {request.role} request lacks {exc.args[0]!r}") from None
        return Completion(text=text, finish_reason="stop", model_served=MODEL, provider=self.name)

    @staticmethod
    def _reply(role: str, payload: dict) -> str:
        if role == "planner":
            brief = planner.plan(payload["context"])
            return json.dumps(brief.model_dump(mode="json", exclude_none=True), ensure_ascii=False)
        if role == "executor":
            return executor.compose(payload["context"], payload["brief"], payload["step"],
                                    issues=payload.get("issues") if payload.get("attempt", 1) > 1 else None)
        if role == "verifier":
            return verifier.verdict_text(payload["brief"], payload["step_index"], payload["draft"])
        if role == "summarizer":
            return summarizer.recap(payload["brief"], payload["released"])
        raise ProviderError("bad_request", f"the offline engine has no {role!r} role")
