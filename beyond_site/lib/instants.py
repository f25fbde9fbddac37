"""Instants recorded as ISO 8601 text (a research page's `fetched_at`, written by the pipeline as
"2026-12-03T07:01:22.123456+00:00"), read back and written for people: "3 Dec 2026, 07:01 UTC".

The stored text stays the record (in `datetime` attributes and the JSON exports); these words are
what a page or a document shows. Text that is not an instant is shown as it is, never guessed at.
"""
from __future__ import annotations

from datetime import datetime, timezone


def parse_instant(value) -> datetime | None:
    """The aware UTC datetime written in `value`, or None (empty, malformed, or with no zone)."""
    if isinstance(value, datetime):
        parsed = value
    else:
        try:
            parsed = datetime.fromisoformat(str(value or "").strip())
        except ValueError:
            return None
    if parsed.tzinfo is None:
        return None
    return parsed.astimezone(timezone.utc)


def instant_words(value) -> str:
    """ "3 Dec 2026, 07:01 UTC" for an instant; the text itself when it is not one."""
    parsed = parse_instant(value)
    if parsed is None:
        return str(value or "")
    return f"{parsed.day} {parsed:%b %Y, %H:%M} UTC"
