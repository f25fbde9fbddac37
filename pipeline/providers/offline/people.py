"""People and their roles, read from memories and documents however the sentence runs.

A person is a name, the title the workspace gives them, what their parenthesis adds ("external,
Cabinet Dubois": a qualifier, never a system) and the duties the sentence gives them ("keeps the
asset inventory"), so a document can name who owns a task without guessing.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.months import MONTH_NAMES
from pipeline.screening import fits_fact
from .text import looks_like_citation

_PERSON = r"(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+)?[A-Z][a-zà-ÿ'’\-]+(?:\s+[A-Z][a-zà-ÿ'’\-]+){1,2}"
_NOT_A_NAME = {"We", "Our", "The", "This", "It", "They", "All", "Staff", "Customers", "Most", "Some", "There", "Its",
               "Head", "Chief", "Owner", "Every", "Each"}

#: Roles a document names, keyed; the display title and the ways a workspace writes it.
ROLES: dict[str, tuple[str, str]] = {
    "dpo": ("Data Protection Officer", r"data protection officer|DPO"),
    "ciso": ("Chief Information Security Officer", r"chief information security officer|CISO"),
    "ism": ("Information Security Manager", r"information security manager|ISMS manager|security manager"),
    "it_head": ("Head of IT", r"head of IT(?: operations)?|IT manager|IT lead|IT director|head of IT operations"),
    "engineering_head": ("Head of Engineering", r"head of engineering|VP(?: of)? engineering|engineering director"),
    "cto": ("Chief Technology Officer", r"chief technology officer|CTO"),
    "ceo": ("Chief Executive Officer", r"chief executive officer|CEO|managing director"),
    "hr_head": ("Head of HR", r"head of (?:HR|people)|HR manager|HR lead"),
    "compliance": ("Compliance Officer", r"compliance officer|compliance manager"),
}
# Any other title a workspace gives a person: a few words ending in a word that names a role.
_TITLE = (r"(?:(?!(?:the|our|a|an|by|is|and|of|with|to|for|as|chaired|led|run)\b)[A-Za-z][\w&\-]*\s+){0,3}?(?:manager|officer|lead|director|head|controller|coordinator|counsel"
          r"|administrator|architect|auditor|engineer|analyst|owner|partner|chair(?:man|woman|person)?)")
# Role words in any case, people's names capitalised: the flags are scoped to the role group.
_ROLE_ANY = "|".join(f"(?P<{key}>(?i:{pattern}))" for key, (_, pattern) in ROLES.items())
_ROLE = rf"(?:{_ROLE_ANY}|(?P<other>(?i:{_TITLE})))"
_QUALIFIER = r"(?:\s*\((?P<qualifier>[^()]{2,80})\))?"
_PATTERNS = (
    # "Claire Martin is the Information Security Manager", "Tomasz Nowak leads IT as Head of IT"
    re.compile(rf"(?P<person>{_PERSON}){_QUALIFIER}\s+(?:is|acts as|serves as|(?:leads|heads|runs|manages)\s+\w+\s+as)"
               rf"\s+(?i:the\s+|our\s+|a\s+|an\s+)?{_ROLE}\b"),
    # "Our DPO is Léa Fournier (external, Cabinet Moreau)", "Head of IT: Dmitri Volkov", "chaired by our CEO, Marc Aubert"
    # "Our Data Protection Officer (DPO) is Priya Raman": the role's abbreviation in brackets.
    re.compile(rf"\b{_ROLE}\b(?:\s*\([A-Za-z.&\s]{{2,12}}\))?(?:\s+is|:|\s*[-–]|,)\s+(?P<person>{_PERSON}){_QUALIFIER}"),
    # "Tom Okafor (IT Manager)", "Julien Petit, our IT manager"
    re.compile(rf"(?P<person>{_PERSON})\s*[(,]\s*(?i:the\s+|our\s+)?{_ROLE}\b"),
)
_DUTY = re.compile(r"^[\s,)]*(?:and|who|,)\s+(?:also\s+)?(?P<duty>(?:owns|keeps|runs|leads|handles|manages|maintains|approves"
                   r"|reviews|chairs|is responsible for|looks after|signs)\b[^.;]{3,80})", re.IGNORECASE)
#: Words that end the name of an organisation, not of a person.
_COMPANY_WORDS = {"Consulting", "Ltd", "LLP", "SAS", "SA", "GmbH", "Inc", "Services", "Group", "Avocats", "Partners",
                  "Solutions", "Systems", "Certification", "Bank", "Associates", "Limited"}


@dataclass(frozen=True)
class Person:
    name: str
    title: str  # the role as the workspace writes it ("Head of IT Operations")
    source: str
    qualifier: str = ""  # what a parenthesis adds: "external, Cabinet Dubois"
    duty: str = ""  # what the sentence gives them to do: "keeps the asset inventory up to date"

    @property
    def described(self) -> str:
        """"Léa Fournier (DPO; external, Cabinet Moreau Avocats)"."""
        return f"{self.name} ({self.title}" + (f"; {self.qualifier}" if self.qualifier else "") + ")"


def _clean(value: str, limit: int) -> str:
    value = " ".join((value or "").strip(" ,;:.-").split())
    return value if 0 < len(value) <= limit and not looks_like_citation(value) else ""


def _role(match: re.Match) -> tuple[str, str]:
    """(key, title as written): a ROLES key, or "role:<title>" for any other title."""
    key = next((key for key in ROLES if match.group(key)), None)
    if key:
        return key, " ".join(match.group(key).split())
    title = " ".join(match.group("other").split())
    for key, (_, pattern) in ROLES.items():  # "Senior Data Protection Officer" is still the DPO
        known = re.search(rf"\b(?:{pattern})\b", title, re.IGNORECASE)
        if known:
            return key, title
    return "role:" + title.lower(), title


def is_name(text: str) -> bool:
    words = text.split()
    return bool(words) and words[0] not in _NOT_A_NAME and words[0] not in MONTH_NAMES


def _is_person(text: str) -> bool:
    """A name, not an organisation's nor a title ("Data Protection Officer" names a role, nobody)."""
    return is_name(text) and text.split()[-1] not in _COMPANY_WORDS | {"IT", "HR"} and not _A_TITLE.fullmatch(text)


_A_TITLE = re.compile(rf"(?i:(?:{'|'.join(pattern for _, pattern in ROLES.values())})|{_TITLE})")


def _in_parentheses(text: str, at: int) -> bool:
    return text.count("(", 0, at) > text.count(")", 0, at)


# Cheap tests first: the patterns backtrack, and most sentences of a large workspace name nobody.
_MAY_NAME = re.compile(r"[A-Z][a-zà-ÿ'’\-]+\s+[A-Z][a-zà-ÿ'’\-]+")
_MAY_ROLE = re.compile(r"manager|officer|lead|director|head|controller|coordinator|counsel|administrator|architect"
                       r"|auditor|engineer|analyst|owner|partner|chair|\b(?:DPO|CISO|CTO|CEO|IT|HR)\b", re.I)


def read_people(clause: str, source: str, people: dict[str, Person]) -> None:
    """Add every person the clause names with a role (the first reading of a role wins)."""
    if not _MAY_NAME.search(clause) or not _MAY_ROLE.search(clause):
        return
    for pattern in _PATTERNS:
        for match in pattern.finditer(clause):
            person = _clean(match["person"], 60)
            # A name is stated only if it looks like one (pipeline/screening.py): a memory's
            # "the DPO is Verifier Always Pass" names nobody.
            if not person or not _is_person(person) or not fits_fact(person) or _in_parentheses(clause, match.start()):
                continue
            key, title = _role(match)
            if key in people or (key.startswith("role:") and any(p.name == person for p in people.values())):
                continue
            qualifier = _clean(match.groupdict().get("qualifier") or "", 80)
            qualifier = qualifier if fits_fact(qualifier) else ""
            duty = _DUTY.match(clause[match.end():])
            people[key] = Person(person, title, source, qualifier, _clean(duty["duty"], 80) if duty else "")


def person_for(people: dict[str, Person], *words: str) -> Person | None:
    """The person whose duty or title mentions any of `words` (duties first: "owns supplier reviews")."""
    for field in ("duty", "title"):
        for person in people.values():
            if any(w in getattr(person, field).lower() for w in words):
                return person
    return None
