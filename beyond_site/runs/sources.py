"""A research run's sources as readers see them: the pages it collected (used, that is cited by
the released document; approved but not cited; not used; refused) and the evidence ids (E1...)
beside released links to approved sources. Shared by the chat and the
audit page, so an auditor reads what the member read."""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from html import unescape

from django.utils.safestring import SafeString, mark_safe

from pipeline.integrity import find_urls, normalise_url, same_source


#: How a page served the document, as the Sources panel and the exports' appendix say it.
USED, APPROVED_NOT_CITED, NOT_USED, CITED_UNAPPROVED = "used", "not-cited", "not-used", "cited-unapproved"
USE_WORDS = {USED: "used", APPROVED_NOT_CITED: "approved by the plan, not cited", NOT_USED: "read, not used by the plan",
             CITED_UNAPPROVED: "cited, not approved by the plan (flagged)"}


@dataclass
class SourceView:
    """One page the run's web research collected: read or not, approved by the brief or not, cited
    by the released document or not."""

    id: str
    url: str
    title: str
    fetched_at: str
    status: str
    reason: str
    approved: bool
    #: Its address appears in a released step: the document cites it.
    cited: bool = False

    @property
    def link(self) -> str:
        """The URL as a link target only when it is a web address (search results are not ours)."""
        return self.url if self.url.lower().startswith(("http://", "https://")) else ""

    @property
    def use(self) -> str:
        """`used` only when the document cites it: approval by the brief says it may be, not that it is."""
        if self.status != "ok":
            return self.status
        if self.cited:
            return USED if self.approved else CITED_UNAPPROVED
        return APPROVED_NOT_CITED if self.approved else NOT_USED

    @property
    def use_words(self) -> str:
        return USE_WORDS.get(self.use) or f"not used: {self.reason or self.status}"


def source_views(items: list[dict], brief: dict | None, released: Iterable[str] = ()) -> list[SourceView]:
    """The pages, each marked approved (the brief's evidence) and cited (an address of it, as read
    or after its redirects, appears in `released`, the released steps' content)."""
    approved = {e.get("id") for e in (brief or {}).get("evidence") or []}
    written = {found.url for text in released for found in find_urls(text or "")}
    return [SourceView(id=i.get("id", ""), url=i.get("url", ""), title=i.get("title") or i.get("url", ""),
                       fetched_at=i.get("fetched_at") or "", status=i.get("status", ""), reason=i.get("reason") or "",
                       approved=i.get("id") in approved and i.get("status") == "ok",
                       cited=any(same_source(url, address) for url in written
                                 for address in (i.get("url"), i.get("final_url")) if address))
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
