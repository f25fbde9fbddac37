"""An evidence item: one fetched page (or the record of why it could not be used)."""
from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone

from pipeline.context import Evidence

#: What `status` says: the page is usable, we chose not to fetch it, or fetching it failed.
OK, REFUSED, FAILED = "ok", "refused", "failed"


def utc_now_iso() -> str:
    """ISO 8601, UTC, with microseconds: "2026-03-01T09:15:02.123456+00:00"."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class EvidenceItem:
    """`status` is "ok", "refused" (the fetch policy or robots.txt ruled it out before a request
    was made) or "failed" (tried, not usable); `reason` says why for the last two: timeout,
    too_big, bad_encoding, not_html, refused_by_policy, robots, robots_unavailable, http_404,
    too_many_redirects, connection_error, bad_url, no_text."""

    id: str
    url: str
    final_url: str = ""
    title: str = ""
    fetched_at: str = ""
    sha256: str = ""
    text: str = ""
    status: str = FAILED
    reason: str | None = None
    http_status: int | None = None
    bytes: int = 0
    elapsed_s: float = 0.0
    content_type: str = ""
    query: str = ""
    hops: list[str] = field(default_factory=list)

    @property
    def usable(self) -> bool:
        return self.status == OK and bool(self.text)

    def as_json(self, *, with_text: bool = True) -> dict:
        data = asdict(self)
        if not with_text:
            data.pop("text")
        return data

    @classmethod
    def from_json(cls, data: dict) -> EvidenceItem:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def for_context(self) -> Evidence:
        return Evidence(id=self.id, url=self.final_url or self.url, title=self.title, text=self.text)
