"""Answer an auditor's question: "did this role see this fact?" from the recorded contexts.

Each model call's messages are stored content-addressed (ContextRecord parts -> Blobs); the
messages are rebuilt whole before searching, so a phrase that straddles two stored sections is
still found.
"""
from __future__ import annotations

from beyond_site.runs.models import ModelCall, Run
from beyond_site.workspaces.models import Blob


def calls_that_saw(run: Run, text: str, *, ignore_case: bool = False) -> list[ModelCall]:
    """The run's model calls whose given messages contain `text`, in call order."""
    if not text:
        return []
    needle = text.casefold() if ignore_case else text
    calls = list(run.model_calls.select_related("context").exclude(context=None).order_by("id"))
    wanted = {part["blob"] for call in calls for part in call.context.parts}
    blobs = {sha: bytes(data).decode("utf-8") for sha, data in
             Blob.objects.filter(sha256__in=wanted).values_list("sha256", "data")}
    seen: dict[int, bool] = {}
    for call in calls:
        if call.context_id not in seen:
            seen[call.context_id] = any(needle in (m.casefold() if ignore_case else m)
                                        for m in _messages(call.context.parts, blobs))
    return [call for call in calls if seen[call.context_id]]


def _messages(parts: list[dict], blobs: dict[str, str]) -> list[str]:
    messages: dict[int, str] = {}
    for part in parts:
        messages[part["message"]] = messages.get(part["message"], "") + blobs.get(part["blob"], "")
    return [messages[n] for n in sorted(messages)]
