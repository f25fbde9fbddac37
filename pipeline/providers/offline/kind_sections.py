"""The parts of a document of a kind no template covers (generic.py): what the workspace records
about its subject, who does what, the organisation's profile, a checklist, and a register with the
columns the task asks for."""
from __future__ import annotations

import re
from dataclasses import replace

from pipeline.requirements import read_asks
from pipeline.requirements.asks import COLUMN
from pipeline.requirements.words import content_words, phrase_in
from pipeline.words import stem

from .templates import TBC
from .facts import ROLES
from .fields import Fill, values
from .generic import UNKNOWN
from .knowledge import memory_statements
from .reading import Reading, Statement
from .record_sections import REVIEW_YEARS
from .registers import KINDS, Register, for_customers
from .sections import table
from .topics import TOPIC_WORDS

#: Statements shown about a subject at most.
_MOST_FACTS = 8
#: Words that tie nothing to a subject: they are in most of a workspace's sentences, or in any task.
_COMMON = frozenset(stem(w) for w in """
data information security staff use using used policy process system service services company organisation business
team new all draft write prepare create make build give turn document procedure standard plan register report list
memo checklist guide guideline review reviews reviewed our the for with and from into have has must should can will
""".split())


def table_statements(reading: Reading) -> list[Statement]:
    """Each row of the workspace's tables as a statement ("Classification: Restricted; Meaning: care
    records ..."), so that a subject's facts held in a table are found like a sentence's."""
    out = []
    for t in reading.tables:
        for row in t.rows:
            cells = [f"{h}: {v}" for h, v in zip(t.header, row) if h.strip() and v.strip() and v.strip() != "—"]
            if cells:
                out.append(Statement("; ".join(cells), t.source))
    return out


def topic_stems(reading: Reading) -> set[str]:
    """The words of the task that say what the document is about, with the words of the topics
    they belong to in the curated map ("onboarding" brings joiners, accounts, devices)."""
    own = {stem(w) for w in content_words(reading.task.text) if not w.isdigit()} - _COMMON
    lowered = reading.task.text.lower()
    for topic, words in TOPIC_WORDS.items():
        if sum(bool(re.search(rf"\b{re.escape(w)}", lowered)) for w in words) >= 2:
            own |= {stem(w) for phrase in words for w in content_words(phrase)} - _COMMON
    for cue, words in _ALSO_ABOUT.items():
        if re.search(cue, lowered):
            own |= {stem(w) for w in words.split()}
    return own


#: What a subject takes in besides its own words: what a new starter is given is a device, an
#: account and training; remote work is done on a laptop over a network.
_ALSO_ABOUT = {
    r"\bonboard|\bstarters?\b|\bjoiners?\b|\bnew hires?\b": "laptop phone device account access multi-factor training",
    r"\boffboard|\bleavers?\b|\bdepartures?\b": "laptop phone device account access return",
    r"\bremote|\bhome working|\bwork(?:ing)? from home": "vpn laptop wifi home device",
    r"\bbyod\b|bring[- ]your[- ]own|personal (?:device|phone)s?": "personal device phone laptop",
    r"\bdevices?\b|\bendpoints?\b": "laptop phone intune encrypt",
}


def facts_about(reading: Reading, limit: int = _MOST_FACTS) -> list[Statement]:
    """The workspace's statements that share the most topic words with the task, memories first;
    a table's rows rank first when the table is keyed by the topic ("Classification: Restricted").
    A document on personal data also states whose data it is (the organisation's role)."""
    wanted = topic_stems(reading)
    if not wanted:
        return []
    rows = [s for s in table_statements(reading) if _keyed_by(s, wanted)]  # a record's row, not a rule
    pool = memory_statements(reading) + list(reading.statements) + rows
    scored = [(-_score(s, wanted), n, s) for n, s in enumerate(pool) if s.words & wanted]
    seen: set[str] = set()
    out = [s for s in role_statements(reading) if _PERSONAL_DATA.search(reading.task.text)]
    for _, _, statement in sorted(scored, key=lambda s: s[:2]):
        if statement.text not in seen and statement not in out:
            seen.add(statement.text)
            out.append(statement)
    return out[:limit]


def _keyed_by(statement: Statement, wanted: set[str]) -> bool:
    """A table row whose first column names the topic ("Classification: Restricted; ...")."""
    keyed = statement.text.split(":", 1)[0]
    return bool({stem(w) for w in content_words(keyed)} & wanted)


def _score(statement: Statement, wanted: set[str]) -> int:
    return len(statement.words & wanted) + (2 if ";" in statement.text and _keyed_by(statement, wanted) else 0)


#: What a task says when its document is about personal data, whose controller decides the duties.
_PERSONAL_DATA = re.compile(r"\b(?:personal data|data subject|subject access|dsar|gdpr|privacy|breach|erasure|"
                            r"rectification|portability|consent|controller|processor|dpia|data protection)\b", re.I)


def role_statements(reading: Reading) -> list[Statement]:
    """The workspace's statements of whose data the organisation processes and as what."""
    return [s for s in memory_statements(reading) if re.search(r"\b(?:processor|controller)\b", s.text, re.I)][:2]


def related_blocks(reading: Reading) -> list[str]:
    found = facts_about(reading)
    lines = [f"- {s.text.rstrip('.')}. ({s.source})" for s in found] or [f"- {UNKNOWN}"]
    return ["\n".join(lines)]


def checklist_blocks(reading: Reading) -> list[str]:
    found = facts_about(reading)
    lines = [f"- [ ] {s.text.rstrip('.')}. ({s.source})" for s in found]
    lines.append(f"- [ ] Any check the workspace does not record yet: {TBC}.")
    return ["\n".join(lines)]


def people_blocks(reading: Reading) -> list[str]:
    people = reading.facts.people
    rows = [("Role", "Person", "Responsibility")]
    for key, person in people.items():
        title = ROLES[key][0] if key in ROLES else person.title[:1].upper() + person.title[1:]
        rows.append((title, person.name, person.duty or "as set out in this document"))
    if len(rows) == 1:
        rows.append(("Owner of this document", TBC, "keeps it current and answers questions on it"))
    return [table(rows)]


def profile_blocks(reading: Reading) -> list[str]:
    found = values(reading)
    lines = [f"- {label}: {found[key]}." for key, label in (
        ("profile", "Organisation"), ("locations", "Locations"), ("hosting", "Hosting"), ("systems", "Systems"),
        ("certification", "Certification"), ("security_lead", "Security lead"), ("dpo", "Data Protection Officer"))
        if key in found]
    return ["\n".join(lines) if lines else f"- {UNKNOWN}"]


def register_kind(reading: Reading) -> str | None:
    """Which of the workspace's registers the task's words name first ("supplier risk register":
    suppliers; "subprocessors": suppliers)."""
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", reading.task.text)]
    for word in words:
        for key, kind in KINDS.items():
            if any(name in word for name in kind.names) and reading.register(key):
                return key
    return None


def kind_register_blocks(reading: Reading, fields: Fill) -> list[str]:
    """The register the task asks for: rows from the workspace's matching table, under its columns
    and each column the task names (a source column that means it is shown under the task's name)."""
    asked = [a.text for a in read_asks(reading.task.text) if a.kind == COLUMN]
    key = register_kind(reading)
    register = reading.register(key) if key else None
    if register is None:
        header = tuple(["Entry", *[a[:1].upper() + a[1:] for a in asked]] or ["Entry", "Details", "Owner"])
        return [f"No file in the workspace holds these entries: the rows are {TBC}.", table([header, (TBC,) * len(header)])]
    left = 0
    if key == "suppliers" and _SUBPROCESSORS.search(reading.task.text):
        kept, left = for_customers(register)
        register = replace(register, rows=tuple(kept))
    header, rows = _with_asked_columns(register, asked)
    intro = f"From {', '.join(register.sources)} ({register.total} entries" + (
        f", {len(rows)} shown)." if len(rows) < register.total else ").")
    if left:
        intro += (f" {left} supplier(s) that process only our own staff's data are processors for us as "
                  "controller, not subprocessors, and are left out.")
    return [intro, table([header, *rows])]


_SUBPROCESSORS = re.compile(r"\bsub-?\s?processors?\b", re.I)


def _with_asked_columns(register: Register, asked: list[str]) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    header = list(register.columns)
    rows = [list(row) for row in register.rows]
    for wanted in asked:
        at = _meaning(register, wanted)
        title = wanted[:1].upper() + wanted[1:]
        if at is not None:
            header[at] = title
            continue
        header.append(title)
        for row in rows:
            row.append(_derived(register, row, wanted))
    return tuple(header), [tuple(r) for r in rows]


def _meaning(register: Register, wanted: str) -> int | None:
    """The register column that means `wanted` ("DPA status": the agreement column)."""
    upcoming = bool(re.search(r"\b(?:next|due|upcoming|planned)\b", wanted, re.I))
    for n, column in enumerate(register.columns):
        if phrase_in(column, wanted) and not upcoming:
            return n
        synonyms = register.kind.columns.get(column, ())
        if not upcoming and any(phrase_in(s, wanted) for s in synonyms):
            return n
    return None


def _derived(register: Register, row: list[str], wanted: str) -> str:
    """A column the source does not have: the next review from the last one and the criticality
    (as a supplier review plan sets it), else to be confirmed."""
    cols = register.columns
    if re.search(r"\bnext\b.*\breview|\breview\b.*\bdue\b", wanted, re.I) and "Last review" in cols:
        last = re.search(r"\b(20\d\d)\b", row[cols.index("Last review")])
        level = row[cols.index("Criticality")].lower() if "Criticality" in cols else ""
        every = REVIEW_YEARS.get(level)
        if last and every:
            date = row[cols.index("Last review")]
            return date.replace(last.group(1), str(int(last.group(1)) + every), 1)
    return TBC


def named_party_blocks(reading: Reading, fields: Fill) -> list[str]:
    """Each row of the workspace's supplier list whose supplier the task names, and where the
    organisation's data is hosted."""
    register = reading.register("suppliers")
    task = reading.task.text.lower()
    rows = []
    if register is not None:
        for row in register.rows:
            name = row[0].split()[0].lower() if row[0] else ""
            if len(name) > 2 and re.search(rf"\b{re.escape(name)}\b", task):
                rows.append("; ".join(f"{c}: {v}" for c, v in zip(register.columns, row) if v not in ("", "—")))
    lines = [f"- {r} ({', '.join(register.sources)})" for r in rows] if register is not None else []
    hosting = values(reading).get("hosting")
    if hosting:
        lines.append(f"- Hosting of the organisation's data: {hosting}.")
    return ["\n".join(lines) if lines else f"- Recipients and transfers: {TBC}."]
