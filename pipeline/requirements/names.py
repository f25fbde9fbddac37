"""Names in a task: the frameworks and regulations it names, and the systems, people and parties.

A framework is known by any of its names ("NIS2", "NIS 2 Directive", "Directive (EU) 2022/2555"
are one): the shipped packs' names and aliases, a list of other laws and schemes compliance tasks
name, and the ISO and NIST numbering for the rest. Any other capitalised run of words that is not
the first word of a sentence, a document's kind or a common capitalised term is a name.
"""
from __future__ import annotations

import re
from functools import lru_cache

from pipeline.frameworks import load_packs

from .kinds import ACRONYM_KINDS, HEADS

#: Laws and schemes no pack ships, each with the names a task or a document may give it.
OTHER_FRAMEWORKS: dict[str, tuple[str, ...]] = {
    "nis2": ("NIS2", "NIS 2", "NIS2 Directive", "NIS 2 Directive", "Directive (EU) 2022/2555", "2022/2555"),
    "dora": ("DORA", "Digital Operational Resilience Act", "Regulation (EU) 2022/2554", "2022/2554"),
    "hipaa": ("HIPAA", "Health Insurance Portability and Accountability Act"),
    "pci-dss": ("PCI DSS", "PCI-DSS", "PCI DSS v4.0", "PCI DSS 4.0", "Payment Card Industry Data Security Standard"),
    "ccpa": ("CCPA", "CPRA", "California Consumer Privacy Act"),
    "sox": ("SOX", "Sarbanes-Oxley", "Sarbanes-Oxley Act"),
    "ai-act": ("EU AI Act", "AI Act", "Regulation (EU) 2024/1689", "2024/1689"),
    "cra": ("Cyber Resilience Act", "CRA"),
    "cyber-essentials": ("Cyber Essentials", "Cyber Essentials Plus"),
    "hitrust": ("HITRUST", "HITRUST CSF"),
    "fedramp": ("FedRAMP",),
    "cmmc": ("CMMC",),
    "tisax": ("TISAX",),
    "lgpd": ("LGPD",),
    "pipeda": ("PIPEDA",),
    "dspt": ("DSPT", "DSP Toolkit", "Data Security and Protection Toolkit"),
    "eprivacy": ("ePrivacy Directive", "ePrivacy", "PECR"),
    "essential-eight": ("Essential Eight", "Essential 8"),
    "dpa-2018": ("Data Protection Act 2018", "DPA 2018"),
    "swiss-fadp": ("FADP", "nFADP", "revFADP"),
    "cis-controls": ("CIS Controls", "CIS Critical Security Controls"),
    "cobit": ("COBIT",),
    "itil": ("ITIL",),
}
_NUMBERED = re.compile(r"\bISO(?:/IEC)?\s*(?P<iso>\d{4,5})(?:-\d+)?(?::\s?(?P<year>\d{4}))?|\bNIST\s+(?:SP\s+)?"
                       r"(?P<nist>800-\d+[A-Za-z]?)(?:\s+Rev(?:ision)?\.?\s*\d+)?|\bSOC\s*(?P<soc>[123])\b")


@lru_cache(maxsize=1)
def _alias_pattern() -> tuple[re.Pattern, dict[str, str]]:
    keys: dict[str, str] = {}
    for key, pack in load_packs().items():
        for name in (pack.name, *pack.aliases):
            keys.setdefault(name.lower(), key)
    for key, names in OTHER_FRAMEWORKS.items():
        for name in names:
            keys.setdefault(name.lower(), key)
    # Short all-capitals names ("TSC", "CSF", "CRA") only as written; the rest in any case.
    parts = []
    for name in sorted(keys, key=len, reverse=True):
        original = next(n for n in _all_names() if n.lower() == name)
        body = re.escape(original) if len(original) <= 5 and original.isupper() else f"(?i:{re.escape(original)})"
        parts.append(body)
    pattern = re.compile(r"(?<![\w/])(?:" + "|".join(parts) + r")(?![\w]|:\d)")
    return pattern, keys


def _all_names() -> list[str]:
    names = [n for pack in load_packs().values() for n in (pack.name, *pack.aliases)]
    return names + [n for ns in OTHER_FRAMEWORKS.values() for n in ns]


_EDITION = re.compile(r":\s?\d{4}|\bRev|\b\d\.\d\b|\b(?:19|20)\d\d\b|\d(?:r|v)\d\b", re.I)


def framework_mentions(text: str) -> list[tuple[str, tuple[int, int], str]]:
    """(as written, span, key) for every framework or regulation `text` names; a name without an
    edition ("ISO 27001") gets its family's key ("iso27001"), which every edition meets."""
    pattern, keys = _alias_pattern()
    found = []
    for m in pattern.finditer(text):
        key = keys[m.group(0).lower()]
        found.append((m.group(0), m.span(), key if _EDITION.search(m.group(0)) else family(key)))
    for m in _NUMBERED.finditer(text):
        if any(a <= m.start() < b for _, (a, b), _ in found):
            continue
        key = (f"iso{m['iso']}" + (f"-{m['year']}" if m["year"] else "") if m["iso"]
               else f"nist-{m['nist'].lower()}" if m["nist"] else f"soc{m['soc']}")
        found.append((m.group(0), m.span(), key))
    return sorted(found, key=lambda f: f[1])


def framework_keys(text: str) -> set[str]:
    """The keys of every framework `text` names, each with its family's ("iso27001" beside
    "iso27001-2022"): a task that named no edition is met by any."""
    return {k for _, _, key in framework_mentions(text) for k in (key, family(key))}


def family(key: str) -> str:
    """A framework's key without its edition: "iso27001-2022" -> "iso27001", "nist-800-53r5" ->
    "nist-800-53", "soc2-tsc-2017" -> "soc2", "nist-csf-2.0" -> "nist-csf"."""
    key = re.sub(r"-tsc-\d{4}$", "", key)
    key = re.sub(r"-(?:(?:19|20)\d\d|\d\.\d)$", "", key)
    return re.sub(r"(800-\d+)r\d$", r"\1", key)


#: Capitalised words that are not names: a sentence's grammar, a document's parts, the calendar.
_NOT_NAMES = frozenset("""
i a an the our we my your their this that these those it its and or of for to in on at by with from as
annex appendix article articles clause clauses control controls section sections part step table figure
type rev revision version edition chapter page item items question questions answer answers
january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday
please draft write prepare create produce make build give turn convert update revise add list answer
complete fill provide send summarise summarize translate review check map compare describe explain
dpo ciso cio cto ceo cfo coo hr it isms sla kpi rto rpo mfa sso vpn pii phi eu uk us usa api saas
paas iaas q1 q2 q3 q4 faq tbc tbd n/a ok also new
""".split())
_TOKEN = re.compile(r"[A-Za-zÀ-ÿ][\w'’&.\-]*[\w]|[A-Za-z]|\d[\w.]*")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\n]\s*|[-*•]\s+|\d+[.)]\s+)$")


def _is_name_word(word: str) -> bool:
    low = word.lower().rstrip(".")
    if low in _NOT_NAMES or low.rstrip("s") in HEADS or low in HEADS or word.upper() in ACRONYM_KINDS:
        return False
    return word[0].isupper() or (any(c.isupper() for c in word[1:]) and word[0].isalpha())


def names_in(text: str, taken) -> list[tuple[str, tuple[int, int]]]:
    """Capitalised runs of words ("Microsoft 365", "Harbour Bank", "Jamf") that no other reader took."""
    tokens = [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]
    out, run = [], []
    for word, start, end in tokens + [("", len(text), len(text))]:
        free = not any(a <= start < b for a, b in taken)
        joins = run and (word.isdigit() or word in ("&", "of", "de", "du", "von", "van")) and free
        if word and free and (_is_name_word(word) or joins):
            if run and not re.fullmatch(r"\s+", text[run[-1][2]:start]):
                out.append(run)
                run = []
            run.append((word, start, end))
            continue
        if run:
            out.append(run)
        run = []
    names = []
    for run in out:
        while run and run[-1][0] in ("&", "of", "de", "du", "von", "van"):
            run.pop()
        if not run:
            continue
        start, end = run[0][1], run[-1][2]
        first_of_sentence = bool(_SENTENCE_START.search(text[:start]))
        if first_of_sentence and sum(not word[0].isdigit() for word, _, _ in run) < 2:
            continue  # "Task 1", "Draft": the sentence's first word, not a name
        names.append((text[start:end], (start, end)))
    return names


def same_framework(asked: str, written: set[str]) -> bool:
    """True when a text naming the frameworks `written` (framework_keys) names the one asked."""
    return asked in written or family(asked) in written
