"""The integrity gate: URLs and prices in a text against the brief's approved evidence.

Runs only on runs that did web research (an evidence set exists, even if empty); without one,
`check_integrity` returns no issue because there is no ground truth to hold a text to.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pipeline.schemas import Brief, Issue

from .prices import Price, find_prices, same_price
from .urls import find_urls, same_source


class _Page:
    """The fields the gate reads from an evidence item, given as an object or as its JSON."""

    def __init__(self, item: Any):
        get = item.get if isinstance(item, Mapping) else (lambda key, default=None: getattr(item, key, default))
        self.id: str = get("id", "") or ""
        self.url: str = get("url", "") or ""
        self.final_url: str = get("final_url", "") or ""
        self.text: str = get("text", "") or ""
        self.usable: bool = get("status", "ok") == "ok" and bool(self.text)


def _pages(evidence: Iterable[Any]) -> list[_Page]:
    return [_Page(item) for item in evidence]


class IntegrityGate:
    """A brief's approved evidence, ready to check drafts (and the recap) against."""

    def __init__(self, brief: Brief, evidence: Iterable[Any]):
        approved_ids = {ref.id for ref in brief.evidence or []}
        self.pages = [p for p in _pages(evidence) if p.id in approved_ids and p.usable]
        self.urls = [u for p in self.pages for u in (p.url, p.final_url) if u]
        self.prices: list[Price] = [price for p in self.pages for price in find_prices(p.text)]

    def url_approved(self, url: str) -> bool:
        return any(same_source(url, u) for u in self.urls)

    def price_supported(self, price: Price) -> bool:
        return any(same_price(price, stated) for stated in self.prices)

    def check(self, text: str) -> list[Issue]:
        issues: list[Issue] = []
        seen: set[tuple[str, str]] = set()

        def add(kind: str, detail: str, quote: str) -> None:
            if (kind, quote) not in seen:
                seen.add((kind, quote))
                issues.append(Issue(type=kind, detail=detail, quote=quote))

        found_urls = find_urls(text)
        for found in found_urls:
            if not self.url_approved(found.url):
                add("unapproved_url", f"{found.url} is not one of the approved evidence URLs; cite a source only "
                                      "by the URL of an approved evidence item", found.url)
        # Prices inside a URL ("/plans/eur-49") are not prices the text states.
        blanked = list(text)
        for found in found_urls:
            blanked[found.span[0]:found.span[1]] = " " * (found.span[1] - found.span[0])
        for price in find_prices("".join(blanked)):
            if not self.price_supported(price):
                add("unsupported_price", f"the price {price.surface} (read as {price.shown()}) is not stated in "
                                         "any approved evidence item", price.surface)
        return issues


def check_integrity(brief: Brief, draft: str, evidence: Iterable[Any] | None) -> list[Issue]:
    """`unapproved_url` and `unsupported_price` issues for `draft` (a step draft or the recap).

    `evidence`: the run's evidence items (EvidenceItem objects or their JSON), or None for a run
    without web research, where the gate does not run. Only the items the brief approves, and
    whose page was read, count."""
    if evidence is None:
        return []
    return IntegrityGate(brief, evidence).check(draft)


def check_brief_evidence(brief: Brief, evidence: Sequence[Any] | None) -> list[str]:
    """Warnings about the brief's evidence list: ids the research did not produce, pages that
    could not be read, URLs that differ from the page's. [] when all is well."""
    refs = brief.evidence or []
    if evidence is None:
        return ["The brief approves evidence, but this run did no web research."] if refs else []
    pages = {p.id: p for p in _pages(evidence)}
    warnings = []
    for ref in refs:
        page = pages.get(ref.id)
        if page is None:
            warnings.append(f"The brief approves {ref.id}, which is not an evidence item of this run.")
        elif not page.usable:
            warnings.append(f"The brief approves {ref.id}, whose page could not be read; it supports nothing.")
        elif not any(same_source(ref.url, u) for u in (page.url, page.final_url) if u):
            warnings.append(f"The brief gives {ref.id} the URL {ref.url}; the page was read from "
                            f"{page.final_url or page.url}, which is the URL that counts.")
    return warnings
