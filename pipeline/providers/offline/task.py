"""Reading the task: the document it asks for, its form and audience, and every explicit requirement.

Requirements are what the task states itself: the framework references it names (read by the
citation gate's own parser, so ranges and lists read the same way), the frameworks it names, the
organisation's size and kind ("our 40-person SaaS company") and a date. The plan covers each one
or says openly that it cannot.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.citations import Found, extract_citations
from pipeline.frameworks import Pack, named_frameworks
from pipeline.months import MONTH_PATTERN
from pipeline.requirements import DOCUMENT, read_asks
from pipeline.requirements.kinds import KindPhrase

from .catalogue import DOC_TYPES, GENERIC
from .generic import kind_doctype, same_kind
from .kinds import KINDS
from .facts import headcount_in, sector_of
from .templates import DocType
from .text import clip, looks_like_citation

_AUDIENCES = (("board", "the board"), ("leadership", "the leadership team"), ("all staff", "all staff"),
              ("employees", "all staff"), ("staff", "all staff"), ("customers", "customers"),
              ("auditor", "the auditors"), ("management", "management"), ("suppliers", "suppliers"),
              ("vendors", "suppliers"), ("developers", "developers"), ("it team", "the IT team"),
              ("new joiners", "new joiners"), ("system owners", "system owners"), ("asset owners", "asset owners"),
              ("managers", "managers"))
_GREETINGS = {"the board": "Dear members of the board,", "customers": "Dear customer,", "suppliers": "Dear partners,",
              "the auditors": "Dear auditors,", "the leadership team": "Dear colleagues,"}
# "Letter to Harbour Bank": a named recipient (capitalised words), not "to all staff" or "to our board".
_RECIPIENT = re.compile(r"\b(?:to|for)\s+(?P<name>(?!The\b|Our\b|All\b)[A-Z][\w&'’-]*(?:\s+(?:&\s+)?[A-Z][\w&'’-]*){0,4})")
_YEAR = re.compile(r"\b(?:for|in|during|of)\s+(?P<year>20\d\d)\b")
_LEADING_VERBS = re.compile(r"^(?:please\s+)?(?:draft|write|prepare|create|produce|make|build|give me|we need)\s+"
                            r"(?:me\s+)?(?:an?\s+|the\s+|our\s+)?", re.IGNORECASE)
_SUBJECT_CUE = re.compile(r"\b(?:explaining|about|regarding|on|announcing|to announce|introducing|informing\s+\w+\s+of"
                          r"|to explain|describing|summari[sz]ing|presenting)\s+(?:the\s+|our\s+)?(?P<subject>.+)$",
                          re.IGNORECASE)
_ORG_KIND = re.compile(r"\b(?:our|a|an)\s+(?:\d[\d,]*\s*-?\s*(?:person|people|staff|employee)s?\s+)?"
                       r"(?P<kind>(?:[\w-]+\s+){0,3}?(?:company|business|start-?up|firm|organi[sz]ation|clinic|hospital"
                       r"|practice|agency|charity|school|bank|retailer|manufacturer|platform))\b", re.IGNORECASE)
_DATE = re.compile(rf"\b\d{{1,2}}\s+(?:{MONTH_PATTERN})\s+20\d\d\b|\b20\d\d-\d\d-\d\d\b")


@dataclass(frozen=True)
class TaskReading:
    """What a task asks for."""

    text: str
    doc: DocType
    subject_doc: DocType | None
    subject: str  # what an email, a letter or a generic document is about, in the task's words
    audience: str
    greeting: str
    refs: tuple[Found, ...]  # framework references the task names, as the citation gate reads them
    frameworks: tuple[Pack, ...]  # frameworks the task names
    recipient: str = ""  # "Harbour Bank" in "letter to Harbour Bank"
    year: str = ""  # "2026" in "supplier review plan for 2026"
    headcount: str = ""  # "40" in "our 40-person SaaS company"
    org_kind: str = ""  # "SaaS company"
    sector: str = ""
    date: str = ""

    @property
    def is_letter(self) -> bool:
        return bool(re.search(r"\bletter\b", self.text, re.IGNORECASE))


def _phrase(phrase: str) -> re.Pattern:
    """`phrase` as a whole word or words of a lower-cased text."""
    return re.compile(r"(?<![a-z0-9])" + re.escape(phrase) + r"(?:s|es)?(?![a-z0-9])")


def _normal(text: str) -> str:
    return re.sub(r"(?<=[a-z])-(?=[a-z])", " ", text.lower())


# Compiled once: the executor reads the task again for each step.
_KEYWORDS = {doc.key: tuple((_phrase(_normal(phrase)), weight) for phrase, weight in doc.keywords.items())
             for doc in DOC_TYPES}
_AUDIENCE_PATTERNS = tuple((_phrase(word), audience) for word, audience in _AUDIENCES)


def _score(doc: DocType, task: str) -> int:
    return sum(weight for pattern, weight in _KEYWORDS[doc.key] if pattern.search(task))


def classify(task: str) -> tuple[DocType, DocType | None]:
    """The document type a task asks for and, for emails, training and generic documents, its subject.

    A task of several lines names its document in the first ("Answer this questionnaire:") and
    gives its content after (questions on breaches are not a breach procedure)."""
    first = task.strip().splitlines()[0] if task.strip() else ""
    if first.strip() != task.strip() and any(_score(d, _normal(first)) for d in DOC_TYPES):
        task = first
    text = _normal(task)
    scored = [(_score(d, text), -i, d) for i, d in enumerate(DOC_TYPES)]
    best = max(scored, key=lambda s: (s[0], s[1]))
    doc = best[2] if best[0] > 0 else KINDS["questionnaire"] if "?" in task else GENERIC  # questions asked are a questionnaire
    kind = asked_kind(task)
    if kind is not None and not same_kind(doc, kind):
        # Never a document of another kind than the one asked: that kind in its generic shape, or
        # nothing the engine can write (the planner then declines).
        return kind_doctype(kind, task) or GENERIC, None
    if not doc.has_subject:
        return doc, None
    others = [s for s in scored if s[0] > 0 and not s[2].has_subject and s[2] is not doc]
    subject = max(others, key=lambda s: (s[0], s[1]))[2] if others else None
    return doc, subject


def asked_kind(task: str) -> KindPhrase | None:
    """The kind of document the task names, if it names one."""
    ask = next((a for a in read_asks(task) if a.kind == DOCUMENT), None)
    return KindPhrase(ask.text, ask.span, ask.keys[0]) if ask else None


def audience_of(task: str, doc: DocType) -> str:
    """Who the document is for: named in the task, else the document type's usual readers."""
    text = task.lower()
    return next((audience for pattern, audience in _AUDIENCE_PATTERNS if pattern.search(text)), doc.audience)


def subject_of(task: str, doc: DocType, subject: DocType | None) -> str:
    """What an email, training plan or generic document is about, in a few words."""
    if subject is not None:
        return subject.name
    if doc.subject:
        return doc.subject
    cue = _SUBJECT_CUE.search(task.strip().rstrip(".!? "))
    topic = cue["subject"] if cue and doc.has_subject else _LEADING_VERBS.sub("", task.strip()).rstrip(".!? ")
    if not doc.subject_from_task:
        return "information security"
    if not topic or looks_like_citation(topic):
        return "the requested topic"
    return clip(topic[0].upper() + topic[1:], 80)


def read_task(task: str) -> TaskReading:
    """Everything the offline planner reads from the task."""
    doc, subject_doc = classify(task)
    audience = audience_of(task, doc)
    kind = _ORG_KIND.search(task)
    org_kind = " ".join(kind["kind"].split()) if kind and (headcount_in(task) or sector_of(kind["kind"])) else ""
    date = _DATE.search(task)
    recipient = _RECIPIENT.search(task)
    recipient_name = recipient["name"] if recipient and not named_frameworks(recipient["name"]) else ""
    year = _YEAR.search(task)
    greeting = (f"Dear colleagues at {recipient_name}," if recipient_name and doc.key == "assurance_letter"
                else _GREETINGS.get(audience, "Dear colleagues,"))
    return TaskReading(text=task, doc=doc, subject_doc=subject_doc, subject=subject_of(task, doc, subject_doc),
                       audience=audience, greeting=greeting, recipient=recipient_name, year=year["year"] if year else "",
                       refs=tuple(extract_citations(task)), frameworks=tuple(named_frameworks(task)),
                       headcount=headcount_in(task), org_kind=org_kind, sector=sector_of(org_kind),
                       date=date.group(0) if date else "")
