"""Unsourced specifics as readers see them (docs/verifier-contract.md, "Unsourced specifics"):
a quiet marker on each unsourced specific of a released step or recap, and the passages its other
specifics came from. Shared by the chat and the audit page, so an auditor reads what the member read.

Advisory only: nothing here says a step passed or failed anything.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from html import escape

from django.utils.safestring import SafeString, mark_safe

from pipeline.specifics import KIND_LABELS

SOURCE_LABELS = {"memory": "Memory", "file": "File", "evidence": "Evidence", "conversation": "Conversation",
                 "framework": "Framework", "brief": "Brief"}


def marker_tip(kind: str) -> str:
    """The marker's one-line explanation, from fixed words only."""
    return (f"Unsourced {KIND_LABELS.get(kind, 'specific')}: found in nothing the executor was given "
            "(memories, files, evidence, the conversation, the brief). Check it before relying on it.")


@dataclass
class SpecificsView:
    """A released step's (or the recap's) specifics: `unsourced` [{"text", "kind", "label", "tip"}]
    and `sources` [{"kind", "label", "ref", "text", "specifics"}]."""

    unsourced: list[dict] = field(default_factory=list)
    sources: list[dict] = field(default_factory=list)

    @property
    def shown(self) -> bool:
        return bool(self.unsourced or self.sources)


def specifics_view(unsourced: list[dict] | None, sources: list[dict] | None) -> SpecificsView | None:
    """None when the text was not read (a run from before the reading, or a reading that failed)."""
    if unsourced is None:
        return None
    return SpecificsView(
        unsourced=[{"text": u.get("text", ""), "kind": u.get("kind", ""),
                    "label": KIND_LABELS.get(u.get("kind"), "specific"), "tip": marker_tip(u.get("kind", ""))}
                   for u in unsourced],
        sources=[{"kind": s.get("kind", ""), "label": SOURCE_LABELS.get(s.get("kind"), "Source"),
                  "ref": s.get("ref", ""), "text": s.get("text", ""), "specifics": list(s.get("specifics") or [])}
                 for s in sources or []])


_TAG = re.compile(r"(<[^>]*>)")


def _as_html_text(text: str) -> str:
    """`text` as the sanitiser writes it in a text node (lib/markdown.py)."""
    return escape(text, quote=False).replace("\u00a0", "&nbsp;")


def mark_unsourced(html: SafeString, unsourced: list[dict] | None) -> SafeString:
    """Wrap each unsourced specific's text in `<mark class="unsourced">` with its explanation.

    `html` is already sanitised; only text between its tags is searched, and only fixed markup is
    added around what is found (the specific's own characters stay as the sanitiser wrote them), so
    model text cannot add markup through this. A specific split by markup ("**24** hours") is not
    marked in the text; it is still listed beside it."""
    tips = {}
    for item in unsourced or []:
        written = _as_html_text(item.get("text", ""))
        if written.strip():
            tips.setdefault(written, (item.get("kind", ""), marker_tip(item.get("kind", ""))))
    if not tips:
        return html
    pattern = re.compile("|".join(rf"(?<![\w@.+-]){re.escape(t)}(?![\w@-])" for t in sorted(tips, key=len, reverse=True)))

    def mark(match: re.Match) -> str:
        kind, tip = tips[match.group(0)]
        return (f'<mark class="unsourced" tabindex="0" data-kind="{escape(kind)}" title="{escape(tip)}" '
                f'data-tip="{escape(tip)}">{match.group(0)}</mark>')

    parts = _TAG.split(str(html))
    marked = [part if n % 2 else pattern.sub(mark, part) for n, part in enumerate(parts)]
    return mark_safe("".join(marked))  # noqa: S308  (sanitised input; only fixed markup added)
