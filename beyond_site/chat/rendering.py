"""Model-made Markdown to safe HTML: the one helper the page, the websocket and exports share.

Two independent layers, so a bug in one is not an exploit: markdown-it with raw HTML disabled
(it escapes `<script>` and refuses `javascript:` links), then nh3 with a closed list of tags and
attributes and only http/https/mailto links.
"""
from __future__ import annotations

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")

TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "code", "pre", "blockquote",
    "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td", "del",
}
ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "th": {"align"}, "td": {"align"}}


def markdown_to_html(text: str | None) -> SafeString:
    """Render untrusted Markdown (model output) to HTML that is safe to put in the page."""
    if not text:
        return mark_safe("")
    raw = _md.render(text)
    clean = nh3.clean(
        raw,
        tags=TAGS,
        clean_content_tags={"script", "style"},
        attributes=ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer",
    )
    return mark_safe(clean)  # noqa: S308  (sanitised just above)
