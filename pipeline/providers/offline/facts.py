"""The facts compliance documents need, read from memories written as sentences and from documents.

Each fact is a short value of a known shape (a name, a number, a period), never a sentence copied
from the workspace: the brief and the drafts state facts in the engine's own words, so text that
merely looks like an instruction has nowhere to go.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from pipeline.frameworks import named_frameworks
from pipeline.months import MONTH_PATTERN
from pipeline.screening import fits_fact

from .people import ROLES, Person, is_name, person_for, read_people
from .text import looks_like_citation, sentences

__all__ = ["ROLES", "Facts", "Person", "Service", "Timed", "extract_facts", "headcount_in", "sector_of"]

# A proper name: capitalised words (with "&" or "of" inside), e.g. "Ashford & Lee LLP", "MediFlow SA".
_PROPER = r"[A-Z][\w'’\-]*(?:\s+(?:&\s+|of\s+|de\s+)?[A-Z0-9][\w'’\-.]*)*"

_ORG_NOUNS = (r"company|group|business|firm|organi[sz]ation|provider|manufacturer|retailer|agency|charity|clinics?"
              r"|hospital|school|university|bank|insurer|start-?up|consultancy|practice|operator|distributor"
              r"|haulier|cooperative|association|foundation|non-?profit|studio|platform|marketplace|network|SaaS")
_ORG_IS = re.compile(rf"^(?:Our company,\s*)?(?P<org>{_PROPER})\s+is\s+(?:a|an|the)\s+(?P<desc>[^.;]*?\b(?:{_ORG_NOUNS})\b[^.;,]*)",
                     re.IGNORECASE)
_ORG_NAMED = re.compile(rf"^(?:our\s+)?(?:company|organi[sz]ation|business|employer)(?:'s)?\s+(?:name\s+)?(?:is|:)\s+"
                        rf"(?:called\s+|named\s+)?(?P<org>{_PROPER})", re.IGNORECASE)
_NOT_A_NAME = {"We", "Our", "The", "This", "It", "They", "All", "Staff", "Customers", "Most", "Some", "There", "Its"}

_HEADCOUNT = re.compile(r"\b(?P<n>\d{1,3}(?:,\d{3})*|\d+)\s*-?\s*(?:person|people|staff|employees|FTEs?|strong"
                        r"|members of staff|headcount)\b|\b(?:employs|headcount of|workforce of)\s+(?:about\s+)?"
                        r"(?P<m>\d{1,3}(?:,\d{3})*|\d+)", re.IGNORECASE)
SECTORS = (("software (SaaS)", r"saas|software|analytics platform|cloud platform"),
           ("healthcare", r"clinic|hospital|health|medical|patient"),
           ("logistics", r"logistic|haulage|freight|warehous|transport|shipping"),
           ("financial services", r"bank|fintech|insur|payment|lending"),
           ("manufacturing", r"manufactur|factory|plant"),
           ("retail", r"retail|shop|e-?commerce"),
           ("education", r"school|universit|education"))
#: In the phrase that says what the organisation is ("a health-data SaaS company"), what its
#: software is for says its sector: a health-data SaaS company works in healthcare.
_SECTORS_BY_QUALIFIER = SECTORS[1:] + SECTORS[:1]
_PLACE = r"[A-Z][a-zà-ÿ\-]+(?:[ -][A-Z][a-zà-ÿ\-]+)?"
_PLACES = rf"{_PLACE}(?:\s*(?:,|and|&)\s*{_PLACE})*"
_LOCATION_CUES = (
    re.compile(rf"\b(?:based|located|headquartered|offices?|sites?|depots?|clinics?|warehouses?|head office|plants?"
               rf"|stores?|branch(?:es)?)\b[^.;()]{{0,40}}?\bin\s+(?P<places>{_PLACES})"),
    re.compile(rf"\b(?:offices|sites|clinics|depots|warehouses|stores|branches|plants)\s*\((?P<places>{_PLACES})\)",
               re.IGNORECASE),
    re.compile(rf"\b(?:[Tt]he|[Oo]ur)\s+(?P<places>{_PLACE})\s+(?:office|depot|site|clinic|warehouse|plant)\b"),
)
_NOT_PLACES = {"The", "Our", "Okta", "Microsoft", "Azure", "Google", "Amazon", "Type", "Europe", "EU"}

# "MediFlow (electronic patient record, hosted by MediFlow SA in France)"
_SERVICE_PAREN = re.compile(rf"(?P<name>{_PROPER})\s*\((?P<desc>[^()]{{2,100}})\)")
_SERVICE_IS = re.compile(rf"(?P<name>{_PROPER})\s+(?:is|are|acts as)\s+(?:our|the)\s+(?P<purpose>[a-zA-Z0-9][\w\s\-]{{1,40}}?"
                         rf"(?:provider|processor|system|platform|tool|supplier|vendor|host|auditor|partner|bureau))\b")
_PURPOSE_IS_SERVICE = re.compile(rf"\b(?:[Oo]ur|[Tt]he)\s+(?P<purpose>[a-zA-Z0-9][\w\s\-]{{1,40}}?(?:provider|processor|system"
                                 rf"|platform|tool|supplier|vendor|host|auditor|partner|bureau))\s+is\s+(?P<name>{_PROPER})")
_OUTSOURCED = re.compile(rf"\b(?P<purpose>[A-Za-z][\w\s\-]{{1,40}}?)\s+(?:is|are)\s+(?:outsourced|subcontracted|handled)\s+(?:to|by)"
                         rf"\s+(?P<name>{_PROPER})")
_ENGAGED = re.compile(rf"\b(?:engaged|appointed|use|uses|contracted)\s+(?P<name>{_PROPER})\s+(?:as|for)\s+(?:our\s+|the\s+)?"
                      rf"(?P<purpose>[\w\s\-]{{2,40}}?)(?=[;,.]|$| and | to )")
_RUNS_ON = re.compile(rf"\b(?:runs|is hosted|are hosted|hosted)\s+(?:on|by|with|at|in)\s+(?P<name>{_PROPER})"
                      rf"(?:\s+in\s+(?P<where>[A-Za-z][\w\-]*(?:\s+[A-Z][\w\-]*){{0,2}}(?:\s*\([^)]{{2,30}}\))?))?")
_NOT_SERVICES = {"We", "Our", "The", "This", "It", "All", "Staff", "Type", "Data", "Roles", "Key", "Decision"}
_PROCESSOR_WORDS = re.compile(r"outsourc|processor|hosted by|on our behalf", re.IGNORECASE)

_PERIOD = r"\d+\s+(?:days?|weeks?|months?|years?)"
_RETENTION = re.compile(rf"(?P<what>[A-Za-z][\w\s\-]{{2,60}}?)\s+(?:is|are)\s+(?:[a-z]+\s+(?:[\w-]+\s+){{0,3}}?and\s+)?"
                        rf"(?:kept|retained|stored|held|archived)\s+"
                        rf"(?:for\s+)?(?P<period>{_PERIOD}(?:\s+(?:after|from)\s+[\w\s]{{2,60}}?)?)(?=[;,.]|$| and )")
_CADENCE_WORDS = r"every\s+(?:\w+\s+)?(?:days?|weeks?|months?|quarters?|years?|month|quarter|year)|monthly|quarterly|weekly|annually|yearly|twice a year|once a year"
_REVIEWED = re.compile(rf"(?P<what>[A-Za-z][\w\s\-]{{2,60}}?)\s+(?:is|are)\s+(?:reviewed|audited|tested|checked|updated|assessed"
                       rf"|held|exercised|run|carried out|conducted)\s+"
                       rf"(?P<cadence>{_CADENCE_WORDS})(?:\s+by\s+(?P<who>(?:the\s+)?[\w\s\-]{{2,40}}?))?(?=[;,.]|$| and )",
                       re.IGNORECASE)
_REVIEWS = re.compile(rf"(?P<who>(?:[Tt]he\s+)?[A-Z]?[\w\s\-]{{2,40}}?)\s+(?:reviews|audits|tests|checks)\s+(?P<what>(?:the\s+)?[\w\s\-'’]{{2,50}}?)\s+"
                      rf"(?P<cadence>{_CADENCE_WORDS})")
_MEETS = re.compile(rf"(?P<who>(?:[Tt]he\s+)?[\w\s\-]{{2,50}}?(?:committee|group|board|forum|council|team))\s+meets\s+"
                    rf"(?P<cadence>{_CADENCE_WORDS})", re.IGNORECASE)
_WHEN = (rf"(?:Q[1-4]|H[12])\s+20\d\d|(?:\d{{1,2}}\s+)?(?:{MONTH_PATTERN})\s+20\d\d|(?:the\s+)?end of 20\d\d"
         r"|20\d\d")
_MILESTONE_DATE = re.compile(rf"\b(?P<cue>by|in|before|due|expected in|target:?|since|scheduled for|planned for|on)\s+"
                             rf"(?P<when>{_WHEN})\b", re.IGNORECASE)
_MILESTONE_EVENT = re.compile(r"\b(?:Type\s+(?:II|I|1|2)\s+(?:report|audit|examination)|certification|certificate|"
                              r"surveillance audit|audit|report)\b", re.IGNORECASE)
DATA_CATEGORIES = (("health data", r"health data|patient record|medical record|patient data"),
                   ("bank details", r"bank details|bank account|iban"), ("salary data", r"salar(?:y|ies)|payroll data"),
                   ("payment card data", r"card data|payment card|credit card"),
                   ("customer contact data", r"customer contact|contact data|contact details|customer data"),
                   ("CCTV images", r"cctv"), ("location data", r"location data|vehicle location|telematics"),
                   ("national insurance numbers", r"\bNI number|national insurance"),
                   ("employee records", r"employee record|hr record|personnel file|hr and payroll"))


@dataclass(frozen=True)
class Service:
    name: str
    purpose: str
    source: str
    provider: str = ""
    where: str = ""
    processor: bool = False


@dataclass(frozen=True)
class Timed:
    """Something with a period or a cadence: a retention period, a review cadence, a milestone."""

    what: str
    when: str
    source: str
    who: str = ""
    #: For a milestone, how the date relates to it: "since" (achieved) or "by" (a target).
    cue: str = "by"

    @property
    def dated(self) -> str:
        """"ISO/IEC 27001:2022 certification by June 2027", "... certification since May 2025"."""
        return f"{self.what} {self.cue} {self.when}"


@dataclass
class Facts:
    org: str = ""
    org_source: str = ""
    headcount: str = ""
    description: str = ""
    sector: str = ""
    locations: list[str] = field(default_factory=list)
    people: dict[str, Person] = field(default_factory=dict)
    services: list[Service] = field(default_factory=list)
    data_categories: list[str] = field(default_factory=list)
    retention: list[Timed] = field(default_factory=list)
    cadences: list[Timed] = field(default_factory=list)
    milestones: list[Timed] = field(default_factory=list)  # what = framework and event, when = date
    #: Whom the organisation processes personal data for as a processor ("the hospitals that use the platform").
    processor_for: str = ""

    def person(self, *keys: str) -> Person | None:
        """The first of the roles `keys` the workspace names a person for."""
        return next((self.people[k] for k in keys if k in self.people), None)

    def person_for(self, *words: str) -> Person | None:
        """The person whose duty or title mentions any of `words` ("supplier", "inventory")."""
        return person_for(self.people, *words)

    def services_for(self, *words: str) -> list[Service]:
        """Services whose purpose or name mentions any of `words`."""
        return [s for s in self.services if any(w in f"{s.purpose} {s.name}".lower() for w in words)]


def _clean(value: str, limit: int = 80) -> str:
    value = " ".join(value.strip(" ,;:.-").split())
    return value if 0 < len(value) <= limit and not looks_like_citation(value) and fits_fact(value) else ""


def sector_of(text: str, *, qualified: bool = False) -> str:
    """The sector a text names; `qualified` for the phrase saying what an organisation is, where a
    qualifier ("health-data") outranks the kind of product ("SaaS")."""
    lowered = text.lower()
    return next((name for name, pattern in (_SECTORS_BY_QUALIFIER if qualified else SECTORS)
                 if re.search(pattern, lowered)), "")


def headcount_in(text: str) -> str:
    match = _HEADCOUNT.search(text)
    return (match["n"] or match["m"]).replace(",", "") if match else ""


def _read_org(sentence: str, source: str, facts: Facts) -> None:
    for pattern in (_ORG_NAMED, _ORG_IS):
        match = pattern.match(sentence.strip())
        if match and not facts.org:
            name = _clean(match["org"], 60)
            if name and name.split()[0] not in _NOT_A_NAME:
                facts.org, facts.org_source = name, source
                if "desc" in match.groupdict():
                    desc = match["desc"].split("(")[0]
                    desc = re.sub(r"^\d[\d,]*\s*-?\s*(?:person|people|staff|employee)\s+", "", desc.strip())
                    facts.description = _clean(re.split(r"\s+(?:with|that|which|who|owned|based)\s+", desc)[0], 70)
    if not facts.headcount and headcount_in(sentence):
        facts.headcount = headcount_in(sentence)
    if not facts.sector and facts.org and facts.org_source == source:
        facts.sector = sector_of(facts.description, qualified=True) or sector_of(sentence)


def _read_locations(sentence: str, facts: Facts) -> None:
    for pattern in _LOCATION_CUES:
        for match in pattern.finditer(sentence):
            for place in re.split(r"\s*(?:,|\band\b|&)\s*", match["places"]):
                place = place.strip()
                if place and place not in _NOT_PLACES and place not in facts.locations and not looks_like_citation(place) \
                        and fits_fact(place):
                    facts.locations.append(place)


def _add_service(facts: Facts, service: Service) -> None:
    if not service.name or service.name.split()[0] in _NOT_SERVICES or not is_name(service.name):
        return
    known = next((s for s in facts.services if s.name == service.name), None)
    if known is None:
        facts.services.append(service)


def _read_services(clause: str, source: str, facts: Facts) -> None:
    for match in _SERVICE_PAREN.finditer(clause):
        name, parts = _clean(match["name"], 50), [p.strip() for p in match["desc"].split(",")]
        if not name or not parts[0] or parts[0][:1].isupper() and len(parts) == 1:
            continue  # "(Lyon, Grenoble)" style lists are places, not a service's purpose
        provider = next((p.split("hosted by", 1)[1] for p in parts if "hosted by" in p), "")
        where = re.search(r"\bin\s+([A-Z][\w\s]+)$", provider)
        _add_service(facts, Service(name, _clean(parts[0], 50), source, _clean(re.sub(r"\s+in\s+[A-Z][\w\s]+$", "", provider), 50),
                                    where.group(1) if where else "", bool(_PROCESSOR_WORDS.search(match["desc"]))))
    for pattern in (_SERVICE_IS, _PURPOSE_IS_SERVICE, _OUTSOURCED, _ENGAGED):
        for match in pattern.finditer(clause):
            name, purpose = _clean(match["name"], 50), _clean(match["purpose"], 50)
            purpose = re.sub(r"^(?:our|the)\s+", "", purpose, flags=re.IGNORECASE)
            purpose = purpose[0].lower() + purpose[1:] if purpose[:2].istitle() else purpose
            if name and purpose:
                _add_service(facts, Service(name, purpose, source,
                                            processor=bool(_PROCESSOR_WORDS.search(clause)) or pattern is _OUTSOURCED))
    for match in _RUNS_ON.finditer(clause):
        name = _clean(match["name"], 40)
        if name and not any(s.provider == name for s in facts.services):
            _add_service(facts, Service(name, "hosting", source, where=_clean(match["where"] or "", 40), processor=True))


# Cheap tests first: the patterns below backtrack, and most sentences of a large workspace have no period.
_MAY_RETAIN = re.compile(r"\b(?:kept|retained|stored|held|archived)\b", re.IGNORECASE)
_MAY_RECUR = re.compile(rf"\b(?:{_CADENCE_WORDS})\b", re.IGNORECASE)


def _read_timed(clause: str, source: str, facts: Facts) -> None:
    if _MAY_RETAIN.search(clause):
        _read_retention(clause, source, facts)
    if _MAY_RECUR.search(clause):
        _read_cadences(clause, source, facts)


def _read_retention(clause: str, source: str, facts: Facts) -> None:
    for match in _RETENTION.finditer(clause):
        what = _clean(re.sub(r"^(?:the|our|all)\s+", "", match["what"].strip(), flags=re.IGNORECASE), 60)
        if what:
            facts.retention.append(Timed(what[0].upper() + what[1:], match["period"], source))


_CHAIRED = re.compile(r"^\s*,?\s*chaired by (?P<who>[^.;]{3,80})")
_CADENCE_PATTERNS = ((re.compile(r"\b(?:reviewed|audited|tested|checked|updated|assessed|held|exercised|run|carried out"
                                 r"|conducted)\b", re.IGNORECASE), _REVIEWED),
                     (re.compile(r"\b(?:reviews|audits|tests|checks)\b"), _REVIEWS), (re.compile(r"\bmeets\b"), _MEETS))


def _read_cadences(clause: str, source: str, facts: Facts) -> None:
    for verb, pattern in _CADENCE_PATTERNS:
        if not verb.search(clause):
            continue
        for match in pattern.finditer(clause):
            what = _clean(match.groupdict().get("what") or match["who"], 60)
            who = _clean(match.groupdict().get("who") or "", 50) if pattern is not _MEETS else ""
            chair = _CHAIRED.search(clause[match.end():])
            who = f"chaired by {_clean(chair['who'], 60)}" if chair and not who else who
            timed = Timed(what, match["cadence"].lower(), source, who)
            if what and not any((t.what, t.when, t.who) == (what, timed.when, who) for t in facts.cadences):
                facts.cadences.append(timed)


def _read_milestone(sentence: str, source: str, facts: Facts) -> None:
    """A certification or audit date: the framework may be named in another clause of the sentence."""
    date = _MILESTONE_DATE.search(sentence)
    packs = named_frameworks(sentence) if date else []
    if packs:
        event = _MILESTONE_EVENT.search(sentence)
        event_words = " ".join(event.group(0).split()) if event else "certification"
        event_words = event_words if event_words.startswith("Type") else event_words.lower()
        cue = {"since": "since", "on": "on", "scheduled for": "on", "planned for": "on"}.get(date["cue"].lower(), "by")
        facts.milestones.append(Timed(f"{packs[0].name} {event_words}", date["when"], source, cue=cue))


def _read_data(text: str, facts: Facts) -> None:
    lowered = text.lower()
    for name, pattern in DATA_CATEGORIES:
        if name not in facts.data_categories and re.search(pattern, lowered, re.IGNORECASE):
            facts.data_categories.append(name)


_PROCESSOR_FOR = (
    re.compile(r"\bfor (?:the |our |all )?(?P<who>[^,;.]{3,80}?),? we (?:act|are|operate) (?:as )?(?:a |their )?(?:data )?"
               r"processor", re.I),
    re.compile(r"\bwe (?:act|are|operate) (?:as )?(?:a |their )?(?:data )?processor (?:for|on behalf of) (?:the |our )?"
               r"(?P<who>[^,;.]{3,80})", re.I),
    re.compile(r"\bas (?:a |their )?(?:data )?processor on behalf of (?:the |our )?(?P<who>[^,;.]{3,80})", re.I),
    re.compile(r"\bwe (?:process|handle|host|store)\b[^.;]{0,60}?\bon behalf of (?:the |our )?(?P<who>[^,;.]{3,80})", re.I),
)


def _read_processor_role(sentence: str, facts: Facts) -> None:
    for pattern in _PROCESSOR_FOR:
        found = pattern.search(sentence)
        if found and not facts.processor_for:
            facts.processor_for = _clean(found["who"], 80)


def _prose(text: str) -> list[str]:
    """The text's sentences, without table rows and headings."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith(("|", "#"))]
    return sentences("\n".join(lines))


def extract_facts(memories: tuple[str, ...], documents: list[tuple[str, str]]) -> Facts:
    """Facts from memories (first: the workspace's own statements) and then documents (name, text)."""
    facts = Facts()
    sources = [(f"memory {n}", memory) for n, memory in enumerate(memories, 1)] + list(documents)
    for source, text in sources:
        if source.lower().endswith((".csv", ".tsv")):
            continue  # rows of data, not statements: the registers read them
        prose = sentences(text) if source.startswith("memory ") else _prose(text)
        for sentence in prose:
            # A sentence that names a framework topic word-for-word stays a fact source; only its
            # values are kept, never the sentence.
            if source.startswith("memory "):
                _read_org(sentence, source, facts)
            _read_locations(sentence, facts)
            _read_milestone(sentence, source, facts)
            _read_processor_role(sentence, facts)
            read_people(sentence, source, facts.people)  # whole: "Head of IT: Dmitri Volkov" is one statement
            for clause in re.split(r";\s+|:\s+(?=[A-Z])", sentence):
                _read_services(clause, source, facts)
                _read_timed(clause, source, facts)
        _read_data(text, facts)
    # A person is never a system: "Our DPO is Claire Martin (external, Cabinet Dubois)" names a DPO.
    named = {p.name for p in facts.people.values()}
    facts.services = [s for s in facts.services if s.name not in named]
    return facts
