"""Answer an auditor's question: "did this role see this fact?" from the recorded contexts.

The messages are rebuilt whole before searching, so a phrase that straddles two stored sections
is still found. The search ignores case and Unicode's compatibility forms (NFKC: full-width letters,
ligatures): a fact seen as "MEMCANARY" or "ｍｅｍｃａｎａｒｙ" was seen, and "not seen" must never
hide it. `exact=True` asks for the exact characters.
"""
from __future__ import annotations

import unicodedata

from beyond_site.runs.contexts import messages_of, part_texts
from beyond_site.runs.models import ModelCall, Run


def folded(text: str) -> str:
    """`text` as the search compares it: NFKC, then case-folded."""
    return unicodedata.normalize("NFKC", text).casefold()


def calls_that_saw(run: Run, text: str, *, exact: bool = False) -> list[ModelCall]:
    """The run's model calls whose given messages contain `text`, in call order."""
    if not text:
        return []
    form = (lambda value: value) if exact else folded
    needle = form(text)
    calls = list(run.model_calls.select_related("context").exclude(context=None).order_by("id"))
    texts = part_texts(call.context for call in calls)
    seen: dict[int, bool] = {}
    for call in calls:
        if call.context_id not in seen:
            seen[call.context_id] = any(needle in form(m["content"]) for m in messages_of(call.context.parts, texts))
    return [call for call in calls if seen[call.context_id]]
