"""What the workspace says on a question: its statements matched by concept, not by wording alone.

A question ("In which regions is our data stored?") rarely shares words with the sentence that
answers it ("Our card platform runs on Microsoft Azure in UK South"). Each concept below pairs
the words a question uses with the words an answer uses; a question about a concept is answered
only by a statement about that concept, and by the best of them, or not at all. Nothing is
inferred: a statement is quoted with its source, and a question with no statement is said to
have none.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.words import stems

from .people import ROLES
from .reading import Reading, Statement
from .registers import for_customers
from .text import looks_like_citation, sentences

#: concept -> (what a question about it says, what a statement answering it says)
CONCEPTS: dict[str, tuple[str, str]] = {
    "hosting": (r"host|stored|store|data (?:cent|resid|locat)|region|where .*(?:data|process)|cloud provider|located",
                r"host|runs on|data cent|region|azure|aws|google cloud|gcp|scaleway|ovh|eu-west|uk south|stored in"),
    "dpo": (r"data protection officer|\bdpo\b", r"data protection officer|\bdpo\b"),
    "security_owner": (r"(?:accountable|responsible) for (?:information )?security|security officer|\bciso\b|who (?:leads|owns)"
                       r" (?:information )?security|head of security",
                       r"chief information security officer|\bciso\b|information security manager|security manager"),
    "certification": (r"certif|iso\s*/?\s*(?:iec\s*)?27001|accredit", r"certif|27001"),
    "soc2": (r"soc\s*2|soc2|ssae|isae", r"soc\s*2|soc2"),
    "mfa": (r"multi-?factor|\bmfa\b|2fa|two-?factor|strong authentication", r"multi-?factor|\bmfa\b|2fa|two-?factor|authenticator"),
    "encryption": (r"encrypt|cryptograph", r"encrypt|aes|tls|bitlocker|filevault"),
    "breach": (r"breach|notify|notification", r"breach|notif|inform .* within|within \d+ hours"),
    "access_review": (r"access (?:rights|reviews?|recertif)|review(?:ed)? .*access|user access|privileg",
                      r"access .*review|review.* access|recertif|privileg"),
    "retention": (r"retain|retention|keep|kept|how long|delet", r"kept for|retain|retention|deleted after|stored for"),
    "backup": (r"backup|back up|restore", r"backup|restore"),
    "continuity": (r"continuity|disaster recovery|\bbcp\b|\bdr\b|failover|resilien",
                   r"continuity|disaster recovery|exercise|failover|tabletop|recovery time"),
    "screening": (r"background check|screening|vetting|pre-?employment", r"background check|screening|vetting"),
    "pentest": (r"penetration|pen ?test|ethical hack", r"penetration|pen ?test"),
    "training": (r"training|awareness|phishing simul", r"training|awareness|phishing simul"),
    "incident": (r"incident", r"incident"),
    "bug_bounty": (r"bug bounty|vulnerability disclosure|responsible disclosure", r"bug bounty|vulnerability disclosure"),
    "suppliers": (r"supplier|vendor|sub-?processor|third part", r"supplier|vendor|sub-?processor|data processing agreement"),
    "passwords": (r"password|passphrase|credential", r"password|passphrase|credential|sign-in attempts"),
    "logging": (r"log(?:s|ging)\b|monitor", r"log(?:s|ging)\b|monitor|siem"),
    "insurance": (r"insurance|insured", r"insurance|insured"),
    "policy": (r"polic(?:y|ies)", r"polic(?:y|ies)"),
    "password_manager": (r"password manager|password vault", r"password manager|password vault|bitwarden|1password|keepass"
                         r"|lastpass|dashlane|keeper"),
    "help": (r"help ?desk|service desk|support|who (?:do|should) (?:i|we) (?:contact|call)|report",
             r"help ?desk|service desk|extension \d+|hotline|reported to"),
    "crisis": (r"crisis|emergency", r"crisis|emergency team"),
    "audit": (r"audit|nonconformit|finding", r"audit|nonconformit|opportunit(?:y|ies) for improvement"),
}
# Each role is a concept too: "Who is your IT manager?" is answered by the statement naming them.
for _key, (_title, _pattern) in ROLES.items():
    CONCEPTS.setdefault(f"role_{_key}", (rf"\b(?:{_pattern})\b", rf"\b(?:{_pattern})\b"))
#: The concepts that show a topic of the curated map (topics.py) is practised.
TOPIC_CONCEPTS: dict[str, tuple[str, ...]] = {
    "backup": ("backup",), "authentication": ("mfa", "passwords"), "access_rights": ("access_review",),
    "privileged_access": ("access_review",), "incident_handling": ("incident",), "incident_planning": ("incident",),
    "incident_learning": ("incident",), "breach_notification": ("breach",), "awareness": ("training",),
    "supplier_relationships": ("suppliers",), "supplier_agreements": ("suppliers",), "supplier_monitoring": ("suppliers",),
    "continuity": ("continuity",), "cloud_services": ("hosting",), "security_of_processing": ("encryption",),
    "monitoring_controls": ("logging",), "internal_audit": ("audit",), "nonconformity": ("audit",),
}
_COMPILED = {key: (re.compile(q, re.I), re.compile(a, re.I)) for key, (q, a) in CONCEPTS.items()}
#: Words of a question that say nothing about its subject.
_QUESTION_WORDS = stems("yes no please describe provide explain confirm current currently organisation organization "
                        "company ensure place list state whether there")
# A sentence that gives orders to whoever reads it is never an answer (memories may hold one).
_ORDERS = re.compile(r"\b(?:ignore|disregard|instruction|prompt|verifier|you must|mark (?:everything|all)|as pass)\b", re.I)


@dataclass(frozen=True)
class Answer:
    question: str
    found: tuple[Statement, ...]  # best first; empty when the workspace says nothing on it


def concepts_of(text: str, *, answer: bool = False) -> set[str]:
    """The concepts a question (or, with `answer`, a statement) is about."""
    return {key for key, pair in _COMPILED.items() if pair[1 if answer else 0].search(text)}


def memory_statements(reading: Reading) -> list[Statement]:
    """The workspace memories' sentences as statements, leaving out any that give orders."""
    return [Statement(s, "workspace memory") for memory in reading.memories for s in sentences(memory)
            if 15 <= len(s) <= 400 and not _ORDERS.search(s) and not looks_like_citation(s)]


def _people_statements(reading: Reading) -> list[Statement]:
    out = []
    for person in reading.facts.people.values():
        # Worded with the workspace's own words only, so that a memory saying the same adds nothing new.
        out.append(Statement(f"{person.title}: {person.name}" + (f" ({person.qualifier})." if person.qualifier else "."),
                             "workspace records"))
    return out


def candidates(reading: Reading, *, people: bool = True) -> list[Statement]:
    """Every statement a question may be answered by: memories first (the workspace's own word),
    then (for a question, not a section) the people the workspace names and the supplier list, then
    the sentences of its documents."""
    records = (_people_statements(reading) + supplier_statements(reading)) if people else []
    return memory_statements(reading) + records + list(reading.statements)


def supplier_practice(reading: Reading) -> list[Statement]:
    """What keeping the supplier list shows of the supplier controls: who the suppliers are, what
    they process, whether each has signed a data processing agreement and when each was reviewed."""
    register = reading.register("suppliers")
    if register is None:
        return []
    cols, rows = register.columns, register.rows
    parts = [f"The supplier register ({', '.join(register.sources)}) records {register.total} suppliers"]
    kept = [name for name, column in (("the service each provides", "Service"), ("the personal data each processes",
            "Personal data"), ("their country", "Location")) if column in cols]
    if kept:
        parts.append("with " + ", ".join(kept))
    if "Agreement" in cols:
        signed = sum(1 for r in rows if r[cols.index("Agreement")].strip().lower() in ("yes", "signed", "y", "true"))
        parts.append(f"whether a data processing agreement is signed ({signed} of {len(rows)} signed)")
    if "Last review" in cols:
        parts.append("and the date of each supplier's last security review")
    return [Statement("; ".join(parts) + ".", ", ".join(register.sources))]


def supplier_statements(reading: Reading) -> list[Statement]:
    """The supplier list as the answer to a question on suppliers or subprocessors: those that may
    process the customers' data, with what they do, the data and where."""
    register = reading.register("suppliers")
    if register is None:
        return []
    rows, left = for_customers(register)
    cols = register.columns
    shown = [c for c in ("Personal data", "Location") if c in cols]  # not the service: "Azure hosting" answers no hosting question
    named = [f"{row[0]} ({'; '.join(row[cols.index(c)] for c in shown if row[cols.index(c)] not in ('', '—'))})"
             for row in rows[:12]]
    if not named:
        return []
    text = "Suppliers and subprocessors that may process customer data: " + ", ".join(named) + "."
    if left:
        text += f" {left} more process only our own staff's data."
    return [Statement(text, ", ".join(register.sources))]


def _score(question: str, wanted: set[str], concepts: set[str], statement: Statement) -> int:
    shared = len(wanted & statement.words)
    if not concepts:
        return shared if shared >= 2 else 0
    matched = concepts & concepts_of(statement.text, answer=True)
    return 3 * len(matched) + shared if matched else 0


def answer(question: str, pool: list[Statement], limit: int = 2) -> Answer:
    """The statements that best answer `question`, or none."""
    concepts = concepts_of(question)
    wanted = stems(question) - _QUESTION_WORDS
    scored = [(-_score(question, wanted, concepts, s), n, s) for n, s in enumerate(pool)]
    best = [s for score, _, s in sorted(scored, key=lambda t: t[:2]) if score < 0]
    if concepts and best:  # keep only statements nearly as good as the best on the concept
        top = _score(question, wanted, concepts, best[0])
        best = [s for s in best if _score(question, wanted, concepts, s) >= max(3, top - 2)]
    chosen: list[Statement] = []
    for s in best:  # a statement that adds no word to those chosen says nothing new
        if len(chosen) < limit and not s.words <= {w for c in chosen for w in c.words}:
            chosen.append(s)
    return Answer(question, tuple(chosen))


def about(pool: list[Statement], *concepts: str, limit: int = 4) -> list[Statement]:
    """Statements about any of `concepts`, in pool order, without repeats."""
    out: list[Statement] = []
    for s in pool:
        if concepts_of(s.text, answer=True) & set(concepts) and not any(s.text == o.text for o in out):
            out.append(s)
    return out[:limit]
