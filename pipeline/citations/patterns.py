"""The tokeniser: one ordered alternation of regexes, most specific first, because ids overlap
across frameworks (SOC 2 `A1.2` looks like ISO `A.1.2`, `C1.1` sits inside other tokens).

At each position the first alternative that matches wins, so ids that contain other ids
(`PR.AC-1` contains `AC-1`) and non-citation numbers (dates, versions, the standard's own name)
are claimed before a bare number can be read.
"""
from __future__ import annotations

import re

from pipeline.frameworks.refs import CSF_CODES, NIST_FAMILIES

_FAMILIES = "|".join(NIST_FAMILIES)
_FAMILIES_LOWER = _FAMILIES.lower()
_SP = r"[ \t\u00a0\u202f]"          # a space that does not cross lines
_DASH = r"[-\u2010-\u2015\u2212]"

# (token type, regex). Order matters.
_TOKENS: list[tuple[str, str]] = [
    # The document's own headings and numbered lists: "## 9.3 Review", "2.1 Scope", "1. Purpose".
    ("noise", rf"^[ \t>]*(?:#{{1,6}}{_SP}+|[-*+]{_SP}+)?\d{{1,3}}(?:\.\d{{1,3}})*[.)]?(?={_SP})"),
    # Framework names (anchors). Their numbers are never citations.
    ("fw_iso", rf"\bISO(?:/IEC)?{_SP}?(2700[12])(?:{_SP}?(?::|\(){_SP}?((?:19|20)\d\d)\)?)?(?![\d])"
               rf"|\b(2700[12]):((?:19|20)\d\d)\b"),
    ("fw_gdpr", r"\b(?:EU |UK )?GDPR\b|\bRegulation\s*\(EU\)\s*(?:No\.?\s*)?2016/679|\b2016/679\b"
                r"|\bGeneral Data Protection Regulation\b|\bDSGVO\b|\bRGPD\b"),
    ("fw_nist", rf"\b(?:NIST{_SP}*)?(?:SP{_SP}*)?800{_DASH}53[AB]?(?:{_SP}*,?{_SP}*(?:Rev(?:ision|\.)?{_SP}*\d|r\d))?"),
    ("fw_csf", rf"\b(?:NIST{_SP}+)?(?:CSF|Cybersecurity{_SP}Framework)(?:{_SP}*v?\d\.\d)?"),
    ("fw_soc2", rf"\bSOC{_SP}?2(?:{_SP}*Type{_SP}*(?:II|I|1|2)\b)?|\b(?:AICPA{_SP}+)?TSC(?:{_SP}*2017)?\b"
                r"|\bTrust Services? Criteria(?:\s*\(?2017\)?)?"),
    # "section 9.2 of ISO 27001": a section number that names the standard is a clause.
    ("iso_section", rf"\b[Ss]ections?{_SP}+(\d{{1,2}}(?:\.\d{{1,2}}){{0,2}}){_SP}+of{_SP}+(?:the{_SP}+)?(?=ISO)"),
    # The document's own cross-references and other numbered things.
    ("noise", r"\b(?:[Ss]ections?|SECTION|[Tt]ables?|[Ff]igures?|Fig\.|[Aa]ppendi(?:x|ces)|[Pp]ages?|pp?\.|"
              r"[Ss]teps?|[Vv]ersions?|[Rr]eleases?|Rev(?:ision)?\.?|[Ii]tems?|[Ll]ines?|[Rr]ows?|[Cc]olumns?|"
              r"[Pp]arts?|[Pp]hases?|[Ss]tages?|[Tt]iers?|[Ll]evels?|[Nn]o\.|[Nn]umbers?|[Qq]uestions?|"
              rf"[Rr]isks?|[Tt]ickets?|[Ii]ssues?|#){_SP}*(?:[A-Z]\.?)?\d{{1,4}}(?:\.\d{{1,4}})*"),
    ("noise", r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}[./]\d{1,2}[./](?:(?:19|20)\d\d|\d\d)(?![\d.])"),  # dates
    ("noise", r"\b\d{1,3}(?:\.\d{1,3}){3}(?:/\d{1,2})?\b"),                                        # IPv4
    ("noise", r"(?<![\w.])[vV]\d+(?:\.\d+)*\b|\b\d{1,2}:\d{2}\b|\b\d{1,2}\.\d{2}"
              rf"{_SP}?(?:am|pm|a\.m\.|p\.m\.|h|Uhr)\b"),                                          # versions, times
    ("noise", rf"[$€£¥]{_SP}?\d[\d,.]*|\b\d[\d,.]*{_SP}?(?:%|percent|per{_SP}cent|EUR|USD|GBP|CHF|[kKmM]\b|bn\b|"
              r"ms\b|GB\b|MB\b|TB\b|days?\b|hours?\b|hrs?\b|minutes?\b|mins?\b|years?\b|months?\b|weeks?\b|"
              r"employees\b|staff\b|users\b|people\b|times\b|x\b)"),                                 # amounts
    # Self-identifying ids.
    ("csf_function", r"\b(GOVERN|Govern|IDENTIFY|Identify|PROTECT|Protect|DETECT|Detect|RESPOND|Respond|"
                     rf"RECOVER|Recover){_SP}*\(({CSF_CODES})\)"),
    ("csf_id", rf"(?<![\w.])({CSF_CODES})\.([A-Z]{{2}})(?:{_DASH}(\d{{1,2}})(?!\d))?(?![\w])"),
    ("nist_id", rf"(?<![\w.\-])({_FAMILIES}){_DASH}(\d{{1,2}})(?!\d)(?:{_SP}?\((\d{{1,2}})\))?"
                r"((?:\((?:[a-z]|\d{1,2})\)|(?<=\d)[a-z]\.(?:\d{1,2}(?:\.|(?![\d.])))?|(?<=\d) [a-z]\.(?:\d{1,2}\.)?"
                r"|(?<=\d)[a-z](?:\.\d{1,2}(?![\d.]))?(?!\w))*)"),   # AC-2a., AC-2 a., AC-2g, AT-2a.1
    ("nist_id", rf"(?<![\w.\-])({_FAMILIES_LOWER})-(\d{{1,2}})\.(\d{{1,2}})(?![\d.])()"),
    ("soc2_id", rf"(?<![\w.])(?:(CC|PI){_SP}?|(A|C|P))(\d)\.(\d{{1,2}})(?![\d]|\.\d)"),
    ("annex_id", rf"(?<![\w.])(?:Annex{_SP}+A{_SP}*[.,]?{_SP}*(?:[Cc]ontrols?{_SP}+)?|A{_SP}?\.{_SP}?|A{_SP}(?=\d{{1,2}}\.\d))"
                 r"(\d{1,2}\.\d{1,2}(?:\.\d{1,2})?)(?![\d]|\.\d)"),
    ("gdpr_point", rf"\bpoints?{_SP}+\(([a-z])\){_SP}+of{_SP}+(?:Article|Art\.?){_SP}*(\d{{1,2}})(?:{_SP}?\((\d{{1,2}})\))?"),
    ("gdpr_para", rf"\bparagraph{_SP}+(\d{{1,2}}){_SP}+of{_SP}+(?:Article|Art\.?){_SP}*(\d{{1,2}})(?!\d)"),
    # Keyword anchors: they make the next bare number a citation.
    ("annex_kw", rf"\bAnnex{_SP}+A\b(?:{_SP}+[Cc]ontrols?)?"),
    ("gdpr_kw", r"(?<![\w])(?:ARTICLES?|[Aa]rticles?|[Aa]rts?\.|Art\b)"),
    ("recital_kw", r"\b[Rr]ecitals?\b"),
    ("chapter_kw", r"\b[Cc]hapters?\b"),
    ("clause_kw", r"\b[Cc]lauses?\b|\bcl\.|§§?"),
    ("control_kw", r"\b[Cc]ontrols?\b"),
    # List and range operators.
    ("range", rf"{_DASH}|\bto\b|\bthrough\b|\bthru\b|\.\.|\buntil\b"),
    ("sep", r",|/|&|\band/or\b|\band\b|\bor\b|\bas well as\b|\bplus\b"),
    # Bare items.
    ("paren_letter", r"\(([a-z])\)"),
    ("num", r"(?<![\w.])(?:\((\d{1,2})\)|(\d{1,3}(?:\.\d{1,3}){0,3}))(?![\d]|\.\d)"),
    ("roman", r"\b([IVX]{1,5})\b"),
]

#: Any shipped framework's name ("ISO/IEC 27001:2022", "GDPR", "NIST SP 800-53 Rev. 5", ...).
FRAMEWORK_NAME = "|".join(f"(?:{rx})" for kind, rx in _TOKENS if kind.startswith("fw_"))
SPACE, DASH = _SP, _DASH

_NAMES = [f"t{i}" for i in range(len(_TOKENS))]
TOKEN_TYPES = [kind for kind, _ in _TOKENS]
# Each alternative is wrapped in its own named group; that outer group closes last, so
# `lastgroup` names the alternative that matched.
# Speed: no token starts inside a word or on a space within a line, so reject those positions
# before trying thirty alternatives (a 20 kB draft must tokenise in a few milliseconds).
_LOWER_STARTS = ("to|through|thru|until|and|or|as|plus|art|recital|chapter|cl|control|section|table|figure|fig|"
                 "appendi|page|pp?\\.|step|version|release|rev|item|line|row|column|part|phase|stage|tier|"
                 "level|no\\.|number|question|risk|ticket|issue|v\\d|point|paragraph|[a-z]{2}-\\d")
_GUARD = rf"(?!(?<=[A-Za-z])[A-Za-z])(?!(?<=[^\n])[ \t])(?=[^a-z]|(?:{_LOWER_STARTS}))"
MASTER = re.compile(_GUARD + "(?:" + "|".join(f"(?P<{name}>{rx})" for name, (_, rx) in zip(_NAMES, _TOKENS)) + ")", re.M)
_GROUP_RANGES = []
for _i, _name in enumerate(_NAMES):
    _first = MASTER.groupindex[_name]
    _next = MASTER.groupindex[_NAMES[_i + 1]] if _i + 1 < len(_NAMES) else MASTER.groups + 1
    _GROUP_RANGES.append((_first, _next - 1))   # inner groups are _first+1 .. _next-1
_INDEX = {name: i for i, name in enumerate(_NAMES)}


def tokens(text: str):
    """Yield (type, start, end, inner groups) for every token, left to right."""
    for m in MASTER.finditer(text):
        index = _INDEX[m.lastgroup]
        first, last = _GROUP_RANGES[index]
        yield TOKEN_TYPES[index], m.start(), m.end(), m.groups()[first:last]


# Title or quote written next to a citation.
TITLE_PAREN = re.compile(rf"{_SP}*\({_SP}*[\"“‘']?([^()\n\"”’]{{2,150}}?)[\"”’']?{_SP}*\)")
TITLE_QUOTE = re.compile(rf"{_SP}*,?{_SP}*[\"“„«‘]([^\"”“»’\n]{{2,200}})[\"”“»’]")
TITLE_DASH = re.compile(rf"{_SP}+[\u2013\u2014-]{_SP}+([^\n.;:|()\"”“]{{2,150}})")
TITLE_COLON = re.compile(rf"{_SP}*:{_SP}+([A-Z][^\n.;:|()\"”“]{{2,150}})")
TITLE_TABLE = re.compile(rf"{_SP}*\|{_SP}*([^|\n]{{2,150}}?){_SP}*\|")
QUOTED_TEXT = re.compile(
    rf"{_SP}*,?{_SP}*(?:(?:which|that){_SP}+)?(?:states?|requires?|reads?|says?|provides?|stipulates?|mandates?|"
    rf"specif(?:y|ies)|demands?|obliges?|sets out)?(?:{_SP}+that)?{_SP}*:?{_SP}*[\"“„«]([^\"”“»]{{3,1200}})[\"”“»]"
)
REF_IN_PARENS = re.compile(rf"{_SP}*\(([^()\n]{{1,40}})\)")
# Words before a citation that make the quote after it its wording: `according to Art. 30(1), "…"`.
WORDING_LEAD_IN = re.compile(rf"(?:according{_SP}+to|in{_SP}+the{_SP}+words{_SP}+of|quoting|as{_SP}+(?:worded|stated|"
                             rf"set{_SP}+out|laid{_SP}+down|written|phrased|required|defined)\s+(?:in|by)){_SP}*$", re.I)
# A "title" that is really another reference or a framework name is not a title.
NOT_A_TITLE = re.compile(
    r"^\s*(?:see\b|cf\.|e\.g\.|i\.e\.|ISO|NIST|GDPR|SOC|TSC|CSF|Annex|Art\.?\s*\d|Article|Recital|Chapter|clause|"
    r"A\.?\s?\d|[A-Z]{2}-\d|[A-Z]{2}\.[A-Z]{2}|CC\s?\d|PI\d|[ACP]\d\.|\(?\d|and\b|or\b|to\b|through\b)", re.I)

# Text after a keyword-anchored number that shows it belongs to another instrument:
# "Article 28 of the DPA", "clause 4 of the MSA", "Art. 21 NIS2", "§ 26 BDSG".
_OWN = r"(?:ISO|GDPR|EU GDPR|the GDPR|General Data|Regulation \(EU\) 2016/679|2016/679|DSGVO|Annex A|27001|27002|the standard|the Regulation|this Regulation)"
FOREIGN_SUFFIX = re.compile(
    rf"{_SP}+(?:(?:of|in|under|from){_SP}+(?:the{_SP}+|this{_SP}+|our{_SP}+|your{_SP}+|its{_SP}+|their{_SP}+|that{_SP}+|each{_SP}+)?(?!{_OWN})\w"
    rf"|(?!(?:EU |UK )?GDPR\b|DSGVO\b|RGPD\b|ISO\b)(?:NIS{_SP}?2|DORA|[A-Z]{{2,}}[a-z]?\d?)\b)"
)
FOREIGN_PREFIX = re.compile(
    r"(?:NIS\s?2|DORA|AI Act|Directive|TFEU|BDSG|CCPA|HIPAA|UWG|HGB|eIDAS|Data Act|Regulation(?! \(EU\) 2016/679))"
    r"[^.\n;]{0,12}$")
PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
