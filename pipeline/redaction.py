"""Blank out configured secrets wherever text from outside (model replies, error bodies) is kept.

An endpoint may echo the key it was sent, in an error or in a normal reply, and a model may be
asked to print it back in pieces or disguised. What is blanked, for every configured secret:

- any 12 consecutive characters of it (the whole of a shorter one), so a prefix, the key minus a
  character or a fragment is caught as well as the whole;
- read through disguises: the text and the secret are compared after Unicode NFKC normalisation
  (full-width letters are letters), case folding, and with every character that is not a letter
  or a digit removed (spaces, line breaks, zero-width characters, dashes, dots), so a key spelled
  out with spaces or split across lines matches;
- in the forms a model may be asked for: reversed, ROT13, hexadecimal, its bytes in decimal, base64
  (at each of its three alignments, so a key inside a longer encoded text is found too) and base32
  (at each of its five).

The span of the original text from the first to the last character of a match becomes `MASK`.
Values shorter than `MIN_SECRET_LENGTH` are not treated as secrets: a `..._TOKEN=1` would
otherwise blank every "1".
"""
from __future__ import annotations

import base64
import bisect
import codecs
import functools
import os
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

MASK = "[redacted]"
MIN_SECRET_LENGTH = 8
#: Consecutive characters of a secret that are blanked wherever they appear.
WINDOW = 12
#: Environment variables whose values are secrets, by name and by name ending.
SECRET_NAMES = ("OPENAI_API_KEY", "OPENROUTER_API_KEY", "BRAVE_API_KEY", "DJANGO_SECRET_KEY")
SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_SECRET_KEY", "_PASSWORD")

_KEPT = re.compile(r"[^\W_]+")  # runs of letters and digits, in any script
#: In an ASCII text, what `_KEPT` leaves out (every character but letters and digits).
_NOT_KEPT_ASCII = bytes(c for c in range(128) if not chr(c).isalnum())


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


def _folded(text: str) -> str:
    """Letters and digits only, NFKC-normalised and case-folded."""
    return "".join(_KEPT.findall(unicodedata.normalize("NFKC", text).casefold()))


def _forms(secret: str) -> list[str]:
    """The folded forms a secret may take in a reply: itself, reversed, ROT13, hex, decimal bytes
    (their separators fold away), base64 and base32."""
    raw = secret.encode("utf-8")
    forms = [secret, secret[::-1], codecs.encode(secret, "rot13"), raw.hex(), "".join(str(b) for b in raw)]
    forms += [base64.b64encode(raw[shift:]).decode("ascii") for shift in range(3)]
    forms += [base64.b32encode(raw[shift:]).decode("ascii") for shift in range(5)]
    return [f for f in (_folded(form) for form in forms) if f]


class _FoldTable(dict):
    """How each character of a text is folded, read by `_Folded` and by `str.translate`: worked out
    the first time the character is met, then read from the table (a few hundred in practice)."""

    def __missing__(self, code: int) -> str:
        ch = chr(code)
        if not _KEPT.fullmatch(ch):
            folded = ""
        elif ch.isascii():
            folded = ch.lower()
        else:
            folded = "".join(c for c in unicodedata.normalize("NFKC", ch).casefold() if c.isalnum())
        self[code] = folded
        return folded


_FOLD = _FoldTable()


class _Folded:
    """A text folded as secrets are (`_folded`), with the way back from each folded character to
    the position of the original character it came from."""

    def __init__(self, text: str):
        pieces: list[str] = []
        self.starts: list[int] = []        # where each run starts in the folded text
        self.origins: list[int | list[int]] = []  # its start in the text, or each character's
        length = 0
        for run in _KEPT.finditer(text):
            word = run.group(0)
            if word.isascii():
                folded, origin = word.lower(), run.start()
            else:
                chars = [(c, run.start() + i) for i, ch in enumerate(word) for c in _FOLD[ord(ch)]]
                folded, origin = "".join(c for c, _ in chars), [i for _, i in chars]
            if folded:
                pieces.append(folded)
                self.starts.append(length)
                self.origins.append(origin)
                length += len(folded)
        self.text = "".join(pieces)

    def origin(self, index: int) -> int:
        run = bisect.bisect_right(self.starts, index) - 1
        origin = self.origins[run]
        offset = index - self.starts[run]
        return origin + offset if isinstance(origin, int) else origin[offset]


class Redactor:
    """Blanks every configured secret: any 12 of its consecutive characters, whatever the case, the
    spacing, the Unicode form, reversed, in ROT13, hex, decimal, base64 or base32."""

    def __init__(self, secrets: Iterable[str | None] = ()):
        values = frozenset(s.strip() for s in secrets if s and len(s.strip()) >= MIN_SECRET_LENGTH)
        self._secrets = values
        #: window length -> the folded windows of that length, and the seeds (their first halves
        #: and every other piece of that length) that say where a window may be
        self._windows, self._seeds = _tables(values)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Redactor:
        return cls(secrets_in_env(os.environ if env is None else env))

    def with_secrets(self, *secrets: str | None) -> Redactor:
        """This redactor plus more secrets (e.g. the key a provider was given directly)."""
        return Redactor([*self._secrets, *secrets])

    def __bool__(self) -> bool:
        return bool(self._windows)

    def __repr__(self) -> str:
        return f"Redactor({len(self._secrets)} secrets)"  # never the secrets themselves

    def redact(self, text: str) -> str:
        if not self._windows or not text:
            return text
        # Folded first in one pass (the letters and digits `_Folded` keeps, folded as it folds them),
        # and the way back to the text is worked out only when a secret was found: a run's prompts
        # hold dashes and quotes, and folding them word by word was a sixth of a run's recording.
        if text.isascii():
            quick = text.encode("ascii").translate(None, _NOT_KEPT_ASCII).lower().decode("ascii")
        else:
            quick = text.translate(_FOLD)
        if not self._covered(quick):
            return text
        folded = _Folded(text)
        covered = self._covered(folded.text)
        if not covered:
            return text
        out, last = [], 0
        for start, end in covered:
            first, final = folded.origin(start), folded.origin(end - 1) + 1
            out.append(text[last:first])
            out.append(MASK)
            last = final
        out.append(text[last:])
        return "".join(out)

    def _covered(self, folded: str) -> list[tuple[int, int]]:
        """The spans of `folded` made of secret windows, merged where they overlap (two copies side
        by side stay two)."""
        spans: set[tuple[int, int]] = set()
        for size, windows in self._windows.items():
            # Every window holds a seed starting at one of `stride` consecutive places, so looking
            # for seeds `stride` places apart misses none, and only around a seed are windows tried.
            seed = max(size // 2, 1)
            stride = size - seed + 1
            seeds = self._seeds[size]
            if len(folded) < size:
                continue
            for q in range(0, len(folded) - seed + 1, stride):
                if folded[q:q + seed] in seeds:
                    for i in range(max(q - size + seed, 0), min(q, len(folded) - size) + 1):
                        if folded[i:i + size] in windows:
                            spans.add((i, i + size))
        if not spans:
            return []
        merged: list[tuple[int, int]] = []
        for start, end in sorted(spans):
            if merged and start < merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        return merged

    def redact_data(self, value: Any) -> Any:
        """`redact` applied to every string in nested dicts, lists and tuples (keys included)."""
        return map_strings(value, self.redact)


@functools.lru_cache(maxsize=64)
def _tables(secrets: frozenset[str]) -> tuple[dict[int, frozenset[str]], dict[int, frozenset[str]]]:
    """A Redactor's windows and seeds for `secrets`, built once per set of secrets in a process: each
    run's recorder and each provider makes a Redactor, always of the same few secrets."""
    windows: dict[int, set[str]] = {}
    seeds: dict[int, set[str]] = {}
    for form in (f for value in secrets for f in _forms(value)):
        size = min(WINDOW, len(form))
        windows.setdefault(size, set()).update(form[i:i + size] for i in range(len(form) - size + 1))
        seed = max(size // 2, 1)
        seeds.setdefault(size, set()).update(form[i:i + seed] for i in range(len(form) - seed + 1))
    return ({size: frozenset(found) for size, found in windows.items()},
            {size: frozenset(found) for size, found in seeds.items()})


def map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """`change` applied to every string in nested dicts, lists and tuples (keys included)."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {map_strings(k, change): map_strings(v, change) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(map_strings(v, change) for v in value)
    return value
