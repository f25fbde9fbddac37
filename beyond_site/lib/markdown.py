"""Model-made Markdown to safe HTML: the one helper the page, the websocket and exports share.

Two independent layers, so a bug in one is not an exploit: markdown-it with raw HTML disabled
(it escapes `<script>` and refuses `javascript:` links), then nh3 with a closed list of tags and
attributes and only absolute http/https/mailto links: a relative or protocol-relative href
(`/w/demo/...`, `//evil.example`) is dropped and the link text kept, so model output can neither
point into the app nor pass off another host as one of ours.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from urllib.parse import urlsplit

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

# The one Markdown parser: this module renders its HTML, the exports walk its tokens (exports/blocks.py).
MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")

TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "code", "pre", "blockquote",
    "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td", "del",
}
ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "th": {"align"}, "td": {"align"}}
URL_SCHEMES = {"http", "https", "mailto"}


def is_safe_link(url: str) -> bool:
    """True for an absolute http, https or mailto URL: the only links model text may keep."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    if parts.scheme.lower() not in URL_SCHEMES:
        return False
    # "https:evil" (no //) is relative to the page in a browser; web links need a host.
    return parts.scheme.lower() == "mailto" or bool(parts.netloc)


def _filter_attribute(element: str, attribute: str, value: str) -> str | None:
    if element == "a" and attribute == "href" and not is_safe_link(value):
        return None  # nh3 drops the attribute; the link text stays
    return value


class _Rendered:
    """The HTML of the texts rendered last, up to `budget` characters of Markdown: a released step
    is drawn again at every reload, reconnect and export, and at the run's end, and rendering
    Markdown costs about 4 ms per kilobyte here (markdown-it is pure Python)."""

    def __init__(self, budget: int):
        self.budget, self.size = budget, 0
        self.items: OrderedDict[str, SafeString] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, text: str) -> SafeString | None:
        with self.lock:
            html = self.items.get(text)
            if html is not None:
                self.items.move_to_end(text)
            return html

    def put(self, text: str, html: SafeString) -> None:
        if len(text) > self.budget // 4:
            return  # one huge text would push out everything else
        with self.lock:
            if text not in self.items:
                self.items[text] = html
                self.size += len(text)
            while self.size > self.budget:
                old, _ = self.items.popitem(last=False)
                self.size -= len(old)


_rendered = _Rendered(budget=8_000_000)


def markdown_to_html(text: str | None) -> SafeString:
    """Render untrusted Markdown (model output) to HTML that is safe to put in the page."""
    if not text:
        return mark_safe("")
    html = _rendered.get(text)
    if html is None:
        html = _render(text)
        _rendered.put(text, html)
    return html


def _render(text: str) -> SafeString:
    raw = MARKDOWN.render(text)
    clean = nh3.clean(
        raw,
        tags=TAGS,
        clean_content_tags={"script", "style"},
        attributes=ATTRIBUTES,
        attribute_filter=_filter_attribute,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer",
    )
    return mark_safe(clean)  # noqa: S308  (sanitised just above)
