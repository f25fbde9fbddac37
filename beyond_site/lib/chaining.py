"""The hash-chain primitive behind the tamper-evident record (docs/audit.md, "Tamper evidence").

A link's hash is SHA-256 over the previous link's hash and the canonical JSON of the link's
content. Canonical JSON, so that the same content always gives the same bytes whatever wrote it
(the recorder, `beyond_audit verify`, a script of an outside auditor):

- UTF-8, object keys sorted, no insignificant whitespace (`separators=(",", ":")`), non-ASCII
  characters written as themselves (`ensure_ascii=False`);
- datetimes as ISO 8601 in UTC with microseconds (`2026-12-01T02:28:16.123456+00:00`);
- no floats that are not finite (NaN and infinities are refused, they have no JSON form).

    hash(link) = sha256( prev_hash_hex + "\\n" + canonical_json(content) ).hexdigest()

The first link of a chain uses GENESIS as its previous hash.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from typing import Any

GENESIS = "0" * 64


def _default(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            raise ValueError("naive datetimes have no canonical form; store aware UTC datetimes")
        return value.astimezone(dt.timezone.utc).isoformat(timespec="microseconds")
    if isinstance(value, dt.date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} has no canonical JSON form")


def as_read_back(value: Any) -> Any:
    """`value` as a JSON column gives it back on every database: keys as strings, and integral
    floats as integers (PostgreSQL's jsonb returns 1e16 as 10000000000000000). A NaN or an
    infinity, which has no JSON form, is hashed as null rather than refused: an odd figure from a
    provider must not stop the record."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return int(value) if value.is_integer() else value
    if isinstance(value, dict):
        return {str(k): as_read_back(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_read_back(v) for v in value]
    return value


def canonical_json(content: Any) -> bytes:
    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False, default=_default).encode("utf-8")


def content_hash(content: Any) -> str:
    """SHA-256 of `content` as a JSON column gives it back, in canonical form: a row's fingerprint."""
    return hashlib.sha256(canonical_json(as_read_back(content))).hexdigest()


def link_hash(prev_hash: str, content: Any) -> str:
    digest = hashlib.sha256(prev_hash.encode("ascii") + b"\n")
    digest.update(canonical_json(content))
    return digest.hexdigest()
