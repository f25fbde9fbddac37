"""Write beyond_site/lib/lookalikes.json: every character that Unicode's confusables data says can be
mistaken for an ASCII letter or digit, with that letter or digit (lower-cased). Sign-up reads it to
refuse look-alike usernames (beyond_site/lib/usernames.py).

The data comes from Unicode's confusables.txt as the `confusable-homoglyphs` package ships it. Run by
hand when Unicode publishes new data, in an environment of its own (the site does not depend on the
package: it would hold 18 MB of tables in every process for a table of 3 KB):

    python -m venv /tmp/lookalikes && /tmp/lookalikes/bin/pip install confusable-homoglyphs==3.3.1
    /tmp/lookalikes/bin/python scripts/make_lookalikes.py
"""
from __future__ import annotations

import json
from pathlib import Path

from confusable_homoglyphs import __version__ as version
from confusable_homoglyphs.utils import load

OUT = Path(__file__).resolve().parents[1] / "beyond_site" / "lib" / "lookalikes.json"


def prototype(forms: set[str]) -> str:
    """The one ASCII character a look-alike stands for: "l" for the vertical strokes (l, I, 1), else a
    letter (lower-cased) before a digit (Cyrillic "о" is the letter o, though 0 looks like it too)."""
    if forms & {"l", "I", "1"}:
        return "l"
    return min((form.lower() for form in forms), key=lambda form: (form.isdigit(), form))


def main() -> None:
    table = {}
    for char, homoglyphs in sorted(load("confusables.json").items()):
        if len(char) != 1 or char.isascii():
            continue
        forms = {h["c"] for h in homoglyphs if len(h["c"]) == 1 and h["c"].isascii() and h["c"].isalnum()}
        if forms:
            table[char] = prototype(forms)
    OUT.write_text(json.dumps({"source": f"Unicode confusables.txt via confusable-homoglyphs {version}",
                               "lookalikes": table},
                              ensure_ascii=False, sort_keys=True, indent=0) + "\n", encoding="utf-8")
    print(f"{len(table)} characters written to {OUT}")


if __name__ == "__main__":
    main()
