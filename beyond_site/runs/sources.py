"""A research run's sources as readers see them: the pages it collected (used, not used, refused)
and the evidence ids (E1...) beside released links to approved sources. Shared by the chat and the
audit page, so an auditor reads what the member read."""
from __future__ import annotations

import re
from dataclasses import dataclass
from html import unescape

from django.utils.safestring import SafeString, mark_safe

from pipeline.integrity import normalise_url


@dataclass
class SourceView:
    """One page the run's web research collected: read or not, approved by the brief or not."""

    id: str
    url: str
    title: str
    fetched_at: str
    status: str
    reason: str
    approved: bool

    @property
    def link(self) -> str:
        """The URL as a link target only when it is a web address (search results are not ours)."""
        return self.url if self.url.lower().startswith(("http://", "https://")) else ""


def source_views(items: list[dict], brief: dict | None) -> list[SourceView]:
    approved = {e.get("id") for e in (brief or {}).get("evidence") or []}
    return [SourceView(id=i.get("id", ""), url=i.get("url", ""), title=i.get("title") or i.get("url", ""),
                       fetched_at=i.get("fetched_at") or "", status=i.get("status", ""), reason=i.get("reason") or "",
                       approved=i.get("id") in approved and i.get("status") == "ok")
            for i in items]


_LINK = re.compile(r'<a href="([^"]+)"')


def mark_sources(html: SafeString, sources: list[SourceView]) -> SafeString:
    """Links in released content that point at approved evidence carry its id (E1...), so a reader
    sees which source backs them. `html` is already sanitised; only fixed markup is added."""
    approved = [(normalise_url(s.url), s.id) for s in sources if s.approved]
    if not approved:
        return html

    def tag(match: re.Match) -> str:
        url = normalise_url(unescape(match.group(1)))
        found = next((id_ for known, id_ in approved if known and known == url), None)
        return match.group(0) + (f' data-evidence="{found}" title="Source {found}"' if found else "")

    marked = _LINK.sub(tag, str(html))
    marked = re.sub(r'(data-evidence="(E\d+)"[^>]*>.*?</a>)', r'\1<sup class="evidence-id">\2</sup>', marked)
    return mark_safe(marked)  # noqa: S308  (sanitised input; only fixed attributes and ids added)
