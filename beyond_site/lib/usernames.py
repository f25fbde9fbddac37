"""What a new username may be: nothing that reads as someone else's name.

Django already normalises a username (NFKC: full-width "ａｌｉｃｅ" becomes "alice"), takes only
letters, digits and `_ . @ + -` (no spaces, no bidi or zero-width characters), and refuses a
name another account has in any case ("Alice" beside "alice"). Here, on top of that:

1. **One script.** The letters of a name are all of one script: Latin, Cyrillic, Greek, Arabic,
   Hebrew, Devanagari... (Han, Hiragana, Katakana and Hangul count as one, as Japanese and Korean
   names mix them). Digits and `_ . @ + -` go with any. "аlice" (a Cyrillic "а", then Latin) is
   refused.
2. **Not a look-alike of ASCII.** A name outside ASCII whose every character can be mistaken for
   an ASCII letter or digit (Unicode's confusables data, `lookalikes.json`) is refused: Cyrillic
   "асе" reads as "ace", whether or not an "ace" exists yet.
3. **Not a look-alike of an existing name.** The name's skeleton (each character replaced by the
   ASCII character it can be mistaken for, the vertical strokes l, I and 1 as one, 0 as o, then
   lower-cased) must not be another account's: "bob1" beside "bobl", "Ivan" beside "lvan".

Names in one script that do not pass for ASCII ("иван", "山田", "josé") are welcome. The sign-up
form (accounts/views.py), the Django admin's "add user" and `beyond_workspace add-member
--create-user` all ask `username_refusal`.
"""
from __future__ import annotations

import json
import unicodedata
from functools import lru_cache
from pathlib import Path

from django.contrib.auth import get_user_model

#: Scripts that mix in one name (Japanese, Korean, Chinese): one script for the rule.
_EAST_ASIAN = {"CJK": "HAN", "HIRAGANA": "HAN", "KATAKANA": "HAN", "HANGUL": "HAN", "BOPOMOFO": "HAN",
               "IDEOGRAPHIC": "HAN"}
#: ASCII characters that read as others: the vertical strokes, and zero as the letter o.
_ASCII_FOLD = str.maketrans({"I": "l", "1": "l", "|": "l", "0": "o"})


@lru_cache(maxsize=1)
def _lookalikes() -> dict[str, str]:
    path = Path(__file__).with_name("lookalikes.json")
    return json.loads(path.read_text(encoding="utf-8"))["lookalikes"]


def script_of(char: str) -> str | None:
    """The script of a letter or digit (the first word of its Unicode name, East Asian scripts as one);
    None for what goes with any script: ASCII digits and punctuation, marks."""
    if char.isascii():
        return "LATIN" if char.isalpha() else None
    if unicodedata.category(char)[0] not in "LN":
        return None
    first = unicodedata.name(char, "UNKNOWN").split(" ")[0]
    return _EAST_ASIAN.get(first, first)


def skeleton(name: str) -> str:
    """`name` as it may be read: each look-alike as the ASCII character it passes for, lower-cased."""
    table = _lookalikes()
    text = unicodedata.normalize("NFKC", name)
    return "".join(table.get(char, char) for char in text).translate(_ASCII_FOLD).casefold()


def username_refusal(name: str, *, exclude_pk=None) -> str | None:
    """Why `name` (as the form cleaned it) cannot be a new username, or None."""
    name = unicodedata.normalize("NFKC", name)
    scripts = {script for script in map(script_of, name) if script}
    if len(scripts) > 1:
        return ("A username is written in one script: this one mixes "
                f"{' and '.join(sorted(s.title() for s in scripts))} letters that look alike.")
    shape = skeleton(name)
    if not name.isascii() and shape.isascii():
        return f"This username reads as “{shape}” in ASCII: write it in ASCII, or choose another."
    User = get_user_model()
    others = User.objects.exclude(pk=exclude_pk) if exclude_pk else User.objects.all()
    for existing in others.values_list(User.USERNAME_FIELD, flat=True).iterator(chunk_size=2000):
        if skeleton(existing) == shape:
            return "This username looks like one that is taken: choose another."
    return None
