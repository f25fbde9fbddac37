"""Turn model replies into a Brief or a Verdict, or say precisely why not.

Strict by design: a verdict that is not exactly the specified object is unparseable and can never
count as a pass. A key given twice at any depth makes a reply unparseable too: Python's `json`
would keep the last one, so `{"pass": false, "pass": true, "issues": []}` would read as a pass.
Two leniencies, neither of which changes what a reply means: a Markdown code fence around the
JSON, which models add even when told not to; and a control character written raw inside a string
(a newline where JSON wants `\n`), which llama.cpp's grammars allow in a string and Gemma 3 270M
writes (docs/model-servers.md).
"""
from __future__ import annotations

import json
import re

from pydantic import ValidationError

from pipeline.schemas import Brief, Verdict, describe_errors

_FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```$", re.DOTALL)


class ReplyError(ValueError):
    """A reply that does not parse; the message says what was wrong, for the record and a retry."""


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise ReplyError(f"the reply gives the key {key[:60]!r} twice in one object")
        seen.add(key)
    return dict(pairs)


def _json_object(text: str) -> dict:
    body = (text or "").strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    if not body:
        raise ReplyError("the reply is empty")
    try:
        value = json.loads(body, object_pairs_hook=_unique_keys, strict=False)
    except json.JSONDecodeError as exc:
        raise ReplyError(f"the reply is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if not isinstance(value, dict):
        raise ReplyError(f"the reply is JSON but not an object (got {type(value).__name__})")
    return value


def parse_brief(text: str) -> Brief:
    try:
        return Brief.model_validate(_json_object(text))
    except ValidationError as exc:
        raise ReplyError(f"the brief does not validate: {describe_errors(exc)}") from None


def parse_verdict(text: str) -> Verdict:
    try:
        return Verdict.model_validate(_json_object(text))
    except ValidationError as exc:
        raise ReplyError(f"the verdict does not validate: {describe_errors(exc)}") from None
