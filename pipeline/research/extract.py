"""The main text of a fetched page: trafilatura for HTML, the decoded body for plain text."""
from __future__ import annotations

import re

import trafilatura
from lxml import html as lxml_html

HTML_TYPES = ("text/html", "application/xhtml+xml")
TEXT_TYPES = ("text/plain",)


def media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def charset(content_type: str) -> str | None:
    m = re.search(r"charset\s*=\s*\"?([\w.:-]+)", content_type, re.I)
    return m[1] if m else None


def decode(body: bytes, content_type: str) -> str:
    try:
        return body.decode(charset(content_type) or "utf-8", errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


def _squash(text: str) -> str:
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line).strip()


def extract_page(body: bytes, content_type: str, url: str) -> tuple[str, str]:
    """(title, text) of a page. Text may be "" when the page has no readable text."""
    kind = media_type(content_type)
    if kind in TEXT_TYPES:
        return "", _squash(decode(body, content_type))
    if not body.strip():
        return "", ""
    # favor_recall: pricing pages are short cards and tables, which precision mode tends to drop.
    text = trafilatura.extract(body, url=url, favor_recall=True, include_comments=False, include_tables=True,
                               deduplicate=False) or ""
    metadata = trafilatura.extract_metadata(body)
    title = (metadata.title if metadata and metadata.title else "") or ""
    if not text.strip():
        text = _plain_text(body)
    return " ".join(title.split()), _squash(text)


def _plain_text(body: bytes) -> str:
    """Every text node of the body, for pages trafilatura finds no main text in."""
    try:
        root = lxml_html.fromstring(body)
    except (ValueError, lxml_html.etree.ParserError):
        return ""
    for bad in root.xpath("//script|//style|//noscript|//template"):
        bad.drop_tree()
    return root.text_content()
