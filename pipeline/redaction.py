"""Blank out configured secrets wherever text from outside (model replies, error bodies) is kept.

An endpoint may echo the key it was sent, in an error or in a normal reply, and a model may be
asked to print it back upper-cased or reversed. Every configured secret is matched whatever its
case, and so is its reversed copy. Values shorter than `MIN_SECRET_LENGTH` are not treated as
secrets: a `..._TOKEN=1` would otherwise blank every "1".
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

MASK = "[redacted]"
MIN_SECRET_LENGTH = 8
#: Environment variables whose values are secrets, by name and by name ending.
SECRET_NAMES = ("OPENAI_API_KEY", "OPENROUTER_API_KEY", "BRAVE_API_KEY", "DJANGO_SECRET_KEY")
SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_SECRET_KEY", "_PASSWORD")


def secrets_in_env(env: Mapping[str, str]) -> list[str]:
    """The configured secrets: named variables, and passwords inside `..._URL` variables
    (`postgres://user:PASSWORD@host/db`)."""
    found = []
    for name, value in env.items():
        upper = name.upper()
        if upper in SECRET_NAMES or upper.endswith(SECRET_SUFFIXES):
            found.append(value)
        elif upper.endswith("_URL") and "@" in value:
            try:
                password = urlsplit(value.strip()).password
            except ValueError:
                password = None
            if password:
                found.append(password)
    return found


class Redactor:
    """Replaces each secret (any case, and reversed) with `MASK`."""

    def __init__(self, secrets: Iterable[str | None] = ()):
        values = {s.strip() for s in secrets if s and len(s.strip()) >= MIN_SECRET_LENGTH}
        self._secrets = frozenset(values)
        forms = values | {v[::-1] for v in values}
        # Longest first, so a secret that contains another is blanked whole.
        alternatives = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
        self._pattern = re.compile(alternatives, re.IGNORECASE) if forms else None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Redactor:
        return cls(secrets_in_env(os.environ if env is None else env))

    def with_secrets(self, *secrets: str | None) -> Redactor:
        """This redactor plus more secrets (e.g. the key a provider was given directly)."""
        return Redactor([*self._secrets, *secrets])

    def __bool__(self) -> bool:
        return self._pattern is not None

    def __repr__(self) -> str:
        return f"Redactor({len(self._secrets)} secrets)"  # never the secrets themselves

    def redact(self, text: str) -> str:
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(MASK, text)

    def redact_data(self, value: Any) -> Any:
        """`redact` applied to every string in nested dicts, lists and tuples (keys included)."""
        return map_strings(value, self.redact)


def map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """`change` applied to every string in nested dicts, lists and tuples (keys included)."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {map_strings(k, change): map_strings(v, change) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(map_strings(v, change) for v in value)
    return value
