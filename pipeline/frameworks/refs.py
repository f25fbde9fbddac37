"""Canonical display forms of framework references, and parsing of the ways people write them.

Shared by the pack loader (`canonical_ref`) and the citation extractor, so that a ref written in a
brief and the same ref found in a draft normalise to one string.
"""
from __future__ import annotations

import re

NIST_FAMILIES = ("AC AT AU CA CM CP IA IR MA MP PE PL PM PS PT RA SA SC SI SR").split()
CSF_FUNCTIONS = {"GOVERN": "GV", "IDENTIFY": "ID", "PROTECT": "PR", "DETECT": "DE", "RESPOND": "RS", "RECOVER": "RC"}
#: The CSF function codes as a regex alternation ("GV|ID|PR|DE|RS|RC"), for every pattern that spots CSF ids.
CSF_CODES = "|".join(CSF_FUNCTIONS.values())
_ROMAN = ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII", "XIII", "XIV", "XV"]

# Unicode dashes, non-breaking and thin spaces that drafts and briefs carry in refs.
_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"), "-")
_SPACES = dict.fromkeys(map(ord, "\u00a0\u2007\u202f\u2009\u200a"), " ")


def clean(text: str) -> str:
    """Unify dashes and odd spaces, collapse whitespace."""
    return re.sub(r"\s+", " ", text.translate(_DASHES).translate(_SPACES)).strip()


def roman(number: int) -> str:
    return _ROMAN[number - 1] if 1 <= number <= len(_ROMAN) else str(number)


def roman_to_int(text: str) -> int | None:
    text = text.upper()
    return _ROMAN.index(text) + 1 if text in _ROMAN else None


# ---- builders: components -> canonical ref -------------------------------------------------

def iso_ref(numbers: list[str] | tuple[str, ...], annex: bool) -> str:
    body = ".".join(str(int(n)) for n in numbers)
    return f"A.{body}" if annex else body


def gdpr_article_ref(article: str | int, parts: list[str] | tuple[str, ...] = ()) -> str:
    """`Art. 30` plus sub-parts written as `(1)`, `(a)`, `(ii)`."""
    return f"Art. {int(article)}" + "".join(f"({p.lower() if not p.isdigit() else int(p)})" for p in parts)


def nist_ref(family: str, number: str | int, enhancement: str | int | None = None,
             items: list[str] | tuple[str, ...] = ()) -> str:
    """`AC-2`, `AC-2(1)`; statement items as `AC-2a.1.` (base) or `AC-2(1)(a)` (enhancement)."""
    ref = f"{family.upper()}-{int(number)}"
    if enhancement is not None:
        ref += f"({int(enhancement)})" + "".join(f"({i.lower() if not i.isdigit() else int(i)})" for i in items)
    else:
        ref += "".join(f"{i.lower() if not i.isdigit() else int(i)}." for i in items)
    return ref


def csf_ref(function: str, category: str | None = None, number: str | int | None = None) -> str:
    ref = function.upper()
    if category:
        ref += "." + category.upper()
        if number is not None:
            ref += f"-{int(number):02d}"
    return ref


def soc2_ref(series: str, major: str | int, minor: str | int | None = None) -> str:
    ref = f"{series.upper()}{int(major)}"
    return ref if minor is None else f"{ref}.{int(minor)}"


def oscal_id_to_ref(oscal_id: str) -> str:
    """OSCAL control id -> display ref: `ac-2.1` -> `AC-2(1)`, `ac` -> `AC`, CSF ids unchanged."""
    m = re.fullmatch(r"([a-z]{2})-(\d+)(?:\.(\d+))?", oscal_id)
    if m:
        return nist_ref(m[1], m[2], m[3])
    if re.fullmatch(r"[a-z]{2}", oscal_id):
        return oscal_id.upper()
    return oscal_id


# ---- parsers: free text of one ref -> canonical ref ---------------------------------------

_GDPR_PART = re.compile(
    r"\s*(?:\((\w{1,4})\)"                                  # (1) (a) (ii)
    r"|(?:,\s*)?(?:para(?:graph)?\.?|par\.|Abs\.)\s*\(?(\d{1,2})\)?"  # para. 1
    r"|(?:,\s*)?(?:lit(?:era)?\.?|point|sub-?paragraph|letter)\s*\(?([a-z]|\d{1,2})\)?)",  # lit. a
    re.I,
)


def parse_gdpr_parts(rest: str) -> tuple[list[str], int]:
    """Read sub-parts after an article number; returns (parts, characters consumed)."""
    parts: list[str] = []
    pos = 0
    dotted = re.match(r"\.(\d{1,2})(?:\.([a-z])\b)?", rest)   # Article 5.1.f
    if dotted:
        parts = [p for p in dotted.groups() if p]
        pos = dotted.end()
    while True:
        m = _GDPR_PART.match(rest, pos)
        if not m:
            break
        parts.append(next(g for g in m.groups() if g))
        pos = m.end()
    return parts, pos


def _canonical_gdpr(text: str) -> str | None:
    text = re.sub(r"\b(?:GDPR|EU GDPR|UK GDPR)\b|Regulation \(EU\) 2016/679|\bof the\b", " ", text, flags=re.I)
    text = clean(text)
    if m := re.fullmatch(r"Recitals? (\d{1,3})", text, re.I):
        return f"Recital {int(m[1])}"
    if m := re.fullmatch(r"Chapters? ([IVXivx]+|\d{1,2})", text):
        return f"Chapter {m[1].upper() if not m[1].isdigit() else roman(int(m[1]))}"
    if m := re.fullmatch(r"points? \(?([a-z])\)? (?:of )?(.+)", text, re.I):
        inner = _canonical_gdpr(m[2])
        return f"{inner}({m[1].lower()})" if inner and inner.startswith("Art.") else None
    m = re.match(r"(?:Art(?:icle)?s?\.?|§)?\s*(\d{1,2})", text, re.I)
    if not m:
        return None
    parts, used = parse_gdpr_parts(text[m.end():])
    if text[m.end() + used:].strip(" .,"):
        return None
    return gdpr_article_ref(m[1], parts)


def _canonical_iso(text: str) -> str | None:
    text = clean(text)
    text = re.sub(r"^ISO(?:/IEC)? ?2700[12](?: ?: ?\d{4})?,? ?", "", text, flags=re.I)
    annex = False
    if re.search(r"\bof (?:the )?Annex A$", text, re.I):
        annex, text = True, re.sub(r"\s*\bof (?:the )?Annex A$", "", text, flags=re.I)
    if text.lower() == "annex a":
        return "Annex A"
    m = re.fullmatch(r"(Annex ?A ?\.? ?(?:controls? )?|A ?\. ?|A |controls? |clauses? |cl\. ?|§ ?|sections? )?"
                     r"(\d{1,2}(?:\.\d{1,2}){0,3})", text, re.I)
    if not m:
        return None
    cue = (m[1] or "").lower().strip()
    annex = annex or cue.startswith(("annex", "a", "control"))
    return iso_ref(m[2].split("."), annex)


def _canonical_nist(text: str) -> str | None:
    text = clean(text)
    text = re.sub(r"^(?:NIST )?(?:SP )?800-53[A-Z]?(?:,? Rev(?:ision|\.)? ?5)?,? ", "", text, flags=re.I)
    m = re.fullmatch(r"([A-Za-z]{2})-0*(\d{1,2})(?: ?\(0*(\d{1,2})\)|\.0*(\d{1,2}))?((?: ?\(?[a-z0-9]{1,2}\)?\.?)*)", text)
    if not m or m[1].upper() not in NIST_FAMILIES:
        return None
    if re.fullmatch(r"[A-Za-z]{2}", text):
        return text.upper()
    enhancement = m[3] or m[4]
    items = re.findall(r"[a-z]+|\d+", m[5] or "")
    return nist_ref(m[1], m[2], enhancement, items)


def _canonical_csf(text: str) -> str | None:
    text = clean(text)
    text = re.sub(r"^(?:NIST )?(?:CSF|Cybersecurity Framework)(?: ?v?2\.0)?,? ", "", text, flags=re.I)
    if m := re.fullmatch(r"([A-Za-z]+) ?\(([A-Za-z]{2})\)", text):   # Protect (PR)
        return m[2].upper() if CSF_FUNCTIONS.get(m[1].upper()) == m[2].upper() else None
    if text.upper() in CSF_FUNCTIONS:
        return CSF_FUNCTIONS[text.upper()]
    m = re.fullmatch(r"([A-Za-z]{2})(?:\.([A-Za-z]{2})(?: ?- ?0*(\d{1,2}))?)?", text)
    if not m or m[1].upper() not in CSF_FUNCTIONS.values():
        return None
    return csf_ref(m[1], m[2], m[3])


def _canonical_soc2(text: str) -> str | None:
    text = clean(text)
    text = re.sub(r"^(?:AICPA )?(?:SOC ?2|TSC(?: 2017)?|Trust Services Criteria),? ", "", text, flags=re.I)
    m = re.fullmatch(r"(CC|PI|A|C|P) ?(\d)(?:\.(\d{1,2}))?", text, re.I)
    return soc2_ref(m[1], m[2], m[3]) if m else None


_PARSERS = {
    "iso27001-2022": _canonical_iso,
    "iso27001-2013": _canonical_iso,
    "gdpr": _canonical_gdpr,
    "nist-800-53r5": _canonical_nist,
    "nist-csf-2.0": _canonical_csf,
    "soc2-tsc-2017": _canonical_soc2,
}


def canonical_ref(pack_key: str, ref_text: str) -> str | None:
    """Canonical form of `ref_text` for pack `pack_key` (no catalogue check), keeping sub-parts, or
    None if unreadable: "Article 30(1)(a)" -> "Art. 30(1)(a)", "Annex A 5.9" -> "A.5.9", "clause 9.2"
    -> "9.2", "AC-02(01)" -> "AC-2(1)", "PR.AA-1" -> "PR.AA-01", "CC 6.1" -> "CC6.1"."""
    parser = _PARSERS.get(pack_key)
    return parser(ref_text) if parser and ref_text and ref_text.strip() else None


def catalogue_ref(pack_key: str | None, ref: str) -> str:
    """The catalogue entry a canonical ref belongs to: sub-parts below the catalogue's level stripped.

    `Art. 30(1)(a)` -> `Art. 30`; `AC-2(1)(a)` -> `AC-2(1)`; `AC-2a.1.` -> `AC-2`.
    `pack_key` is a shipped pack's key (or an imported pack's scheme, None for its own ids).
    """
    if pack_key == "gdpr":
        return re.sub(r"\(.*$", "", ref)
    if pack_key == "nist-800-53r5":
        m = re.match(r"[A-Z]{2}-\d+(?:\(\d+\))?", ref)
        return m[0] if m else ref
    return ref


# Id grammars an imported catalogue may share with a shipped pack: each is recognisable from the
# ids alone, so a draft's ids can be read the same way for either catalogue.
_SELF_IDENTIFYING = ("nist-800-53r5", "nist-csf-2.0", "soc2-tsc-2017")


def detect_scheme(refs: list[str]) -> str | None:
    """The shipped id grammar nearly all of `refs` (an imported catalogue's ids) are written in, or None."""
    ids = [ref for ref in refs if any(ch.isdigit() for ch in ref)]
    if not ids:
        return None
    for scheme in _SELF_IDENTIFYING:
        if sum(canonical_ref(scheme, ref) == ref for ref in ids) >= 0.9 * len(ids):
            return scheme
    return None
