"""The parts of a draft built from the workspace: registers from its files, requirement tables
with the practices its documents record, the facts an email needs, an incident's own account.

Every function returns Markdown blocks. Nothing here writes a framework reference of its own:
requirement rows are the brief's approved citations, written by `format_citation`.
"""
from __future__ import annotations

import re

from pipeline.schemas import Citation
from pipeline.words import stems

from .citing import format_citation
from .crosswalk import counterparts, direction
from .templates import TBC
from .facts import ROLES
from .fields import Fill, listed
from .knowledge import TOPIC_CONCEPTS, about, memory_statements, supplier_practice
from .outcomes import CSF_OUTCOMES
from .reading import Reading, Statement
from .assets import key_assets, threat_for
from .legends import legend_for
from .registers import KINDS
from .text import clip
from .topics import TOPIC_WORDS, TOPICS

_NOT_READY = re.compile(r"\b(?:gap|partly|partial|missing|not|open|no)\b", re.IGNORECASE)
_IMPACT = ("customer data", "accessed", "blocked", "reset", "revoked", "impact", "affected", "no data", "contained")


def table(rows: list[tuple[str, ...]]) -> str:
    def line(cells): return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"
    return "\n".join([line(rows[0]), line(tuple("---" for _ in rows[0])), *map(line, rows[1:])])


def register_blocks(reading: Reading, kind: str, template_rows: tuple[tuple[str, ...], ...], fields: Fill) -> list[str]:
    """The register of `kind` from the workspace's files, or the template's example rows when none holds it."""
    register = reading.register(kind)
    if register is None and kind in _FROM_ASSETS:
        derived = _FROM_ASSETS[kind](reading, fields)
        if derived:
            return derived
    if register is None:
        rows = [tuple(c.format_map(fields) for c in row) for row in template_rows]
        note = (f"No file in the workspace holds this {KINDS[kind].key} table: the rows below are examples to "
                "replace with real entries." if len(rows) > 1 else "")
        return [b for b in (note, table(rows) if rows else "") if b]
    shown = len(register.rows)
    intro = f"The rows below come from {listed(list(register.sources))}" + (
        f" ({shown} of {register.total} rows shown; the rest are in the file)." if shown < register.total else
        f" ({register.total} rows).")
    blocks = [intro, table([register.columns, *register.rows])]
    if register.missing:
        blocks.append(f"Not recorded in the source, to complete with each owner: {', '.join(register.missing).lower()}.")
    if register.unused:
        blocks.append(f"Columns of the source not carried over: {', '.join(register.unused)}.")
    return blocks


def treatment_blocks(reading: Reading, template_rows, fields: Fill) -> list[str]:
    """Each risk of the register with its treatment and owner; the template's examples when there is none."""
    register = reading.register("risks")
    if register is None and key_assets(reading):  # the risks drawn from the assets: each treatment to decide
        rows = [(f"R-{n:02d}", TBC, TBC, a.owner or TBC, TBC) for n, a in enumerate(key_assets(reading), 1)]
        return [table([template_rows[0], *rows])]
    if register is None or "Treatment" not in register.columns:
        return register_blocks(reading, "risks", template_rows, fields) if register is None else []
    pick = [register.columns.index(c) for c in ("ID", "Risk", "Treatment", "Owner") if c in register.columns]
    rows = [tuple(register.columns[i] for i in pick)] + [tuple(row[i] for i in pick) for row in register.rows]
    return [table(rows)]


def _fact_statements(reading: Reading) -> list[Statement]:
    """The workspace's facts as sentences in the engine's words, to match against requirements."""
    facts, out = reading.facts, []
    for service in facts.services:
        out.append(Statement(f"{service.name} is used for {service.purpose}.", "workspace records"))
    for timed in facts.cadences:
        out.append(Statement(f"{timed.what[0].upper()}{timed.what[1:]}: reviewed {timed.when}"
                             + (f" by {timed.who}." if timed.who else "."), "workspace records"))
    for key, person in facts.people.items():
        known = f" ({ROLES[key][0].lower()})" if key in ROLES else ""
        out.append(Statement(f"{person.name} is the {person.title}{known}.", "workspace records"))
    return out


def _words_for(citation: Citation) -> tuple[set[str], set[str]]:
    """(practice words curated for the requirement or its topic, words of its title)."""
    phrases = list(CSF_OUTCOMES.get(citation.ref, ("", ()))[1])
    for topic, refs in TOPICS.items():
        if any(citation.ref in r for r in refs.values()):
            phrases += TOPIC_WORDS.get(topic, ())
    curated = stems(" ".join(phrases))
    return curated, set(stems(citation.title))


def best_practices(reading: Reading, citation: Citation, limit: int = 2) -> list[Statement]:
    """The workspace statements that best show the requirement is met. A curated practice word
    counts twice a word of the title: "device posture" says more about authentication than "service"."""
    curated, title = _words_for(citation)
    pool = reading.statements + _fact_statements(reading) + memory_statements(reading) + supplier_practice(reading)
    scored = []
    for n, statement in enumerate(pool):
        words = statement.words
        scored.append((-(2 * len(words & curated) + len(words & title - curated)), n, statement))
    found = [s for score, _, s in sorted(scored, key=lambda s: s[:2]) if -score >= 4]
    if not found:  # no shared words: a statement about the requirement's concept ("backups go to ...")
        topics = [t for t, refs in TOPICS.items() if any(citation.ref in r for r in refs.values())]
        found = about(pool, *(c for t in topics for c in TOPIC_CONCEPTS.get(t, ())), limit=limit)
    chosen: list[Statement] = []
    for statement in found:  # one that adds no word to those chosen says the same again
        if len(chosen) < limit and not statement.words <= {w for c in chosen for w in c.words}:
            chosen.append(statement)
    return chosen


def requirement_rows(reading: Reading, cited: list[Citation]) -> list[tuple[Citation, list[Statement]]]:
    """The step's requirements, a category left out when its own entries are listed, with practices."""
    refs = {c.ref for c in cited}
    rows = [c for c in cited if not any(r != c.ref and r.startswith(c.ref + "-") for r in refs)]
    return [(c, best_practices(reading, c)) for c in rows]


def _practice(found: list[Statement], limit: int) -> str:
    return " ".join(clip(s.text, limit) for s in found)


def _sources(found: list[Statement]) -> str:
    return ", ".join(dict.fromkeys(s.source for s in found)) or "—"


def requirement_blocks(reading: Reading, cited: list[Citation], template_rows, fields: Fill) -> list[str]:
    doc = reading.task.doc.key
    rows = requirement_rows(reading, cited)
    if not rows:
        return [table([tuple(c.format_map(fields) for c in r) for r in template_rows])] if template_rows else []
    if doc == "soa":
        body = [(format_citation(c), "Yes", f"{_practice(p, 160)} ({_sources(p)})" if p else f"Justification {TBC}",
                 "Implemented" if p else TBC) for c, p in rows]
        return [table([("Control", "Applicable", "Justification", "Implementation status"), *body])]
    if doc == "audit_plan":
        schedule = [tuple(c.format_map(fields) for c in r) for r in template_rows]
        schedule += [(format_citation(c), fields["security_lead"], TBC, _practice(p[:1], 120) if p else "records to be "
                      "sampled") for c, p in rows]
        return ["The schedule covers every requirement the task names.", table(schedule)]
    pair = direction(reading.task.text, reading.task.frameworks) if doc == "mapping" else None
    if pair and {pair[0].name, pair[1].name} <= {c.framework for c, _ in rows}:
        return _crosswalk(rows, cited, *pair)
    body = [(format_citation(c), _practice(p, 200) if p else f"No practice recorded: {TBC}", _sources(p),
             "In place" if p else "Gap") for c, p in rows]
    return [table([("Requirement", "Practice in place", "Source", "Status"), *body])]


def _crosswalk(rows, cited: list[Citation], source, target) -> list[str]:
    """One row per requirement of the framework mapped from, with its counterparts in the other."""
    body = []
    for c, p in rows:
        if c.framework != source.name:
            continue
        matched = counterparts(c, source, target, cited)
        body.append((format_citation(c), "; ".join(format_citation(m) for m in matched) or
                     f"No corresponding {target.name} requirement in the cited set", _practice(p, 200) if p else
                     f"No practice recorded: {TBC}", _sources(p), "In place" if p else "Gap"))
    return [f"Each {source.name} requirement below is mapped to the {target.name} requirements filed under the same "
            "topic, with the practice the workspace records for it.",
            table([(source.name, target.name, "Practice in place", "Source", "Status"), *body])]


def gap_blocks(reading: Reading, cited: list[Citation], fields: Fill) -> list[str]:
    """The requirements without a recorded practice, or the readiness areas not yet ready."""
    readiness = reading.register("readiness")
    if reading.task.doc.key == "gap_assessment" and readiness:
        cols = readiness.columns
        open_rows = [row for row in readiness.rows if _NOT_READY.search(row[cols.index("Status")])
                     if "Status" in cols]
        lines = [f"- {row[0]}: {row[cols.index('Gap')] if 'Gap' in cols else row[cols.index('Status')]}"
                 + (f" (owner: {row[cols.index('Owner')]})" if "Owner" in cols else "") for row in open_rows]
        return ["Areas to close first:", "\n".join(lines)] if lines else ["No open gap is recorded."]
    gaps = [c for c, p in requirement_rows(reading, cited) if not p]
    if not gaps:
        return ["Every requirement above has a practice recorded in the workspace's documents. Collect the "
                f"evidence for each before the audit; owner: {fields['security_lead']}."]
    return ["Requirements with no practice recorded yet, to assign and close:",
            "\n".join(f"- {format_citation(c)}: owner {fields['security_lead']}, due date {TBC}." for c in gaps)]


def readiness_blocks(reading: Reading, cited: list[Citation], fields: Fill) -> list[str]:
    """The assessed areas from the workspace's readiness table, each with the requirements it relates to."""
    register = reading.register("readiness")
    if register is None:
        return requirement_blocks(reading, cited, (), fields)
    related = []
    for row in register.rows:
        topics = {t for t, words in TOPIC_WORDS.items() if any(w in row[0].lower() for w in words)}
        refs = [c for c in cited if any(c.ref in refs for t in topics for refs in TOPICS.get(t, {}).values())]
        related.append("; ".join(format_citation(c) for c in refs) or "—")
    rows = [(*register.columns, "Related requirements")] + [(*row, rel) for row, rel in zip(register.rows, related)]
    return [f"From {listed(list(register.sources))}:", table(rows)]


def fact_lines(reading: Reading, fields: Fill) -> list[str]:
    """The facts an email or letter about the task's subject needs, in the engine's words."""
    task, facts = reading.task, reading.facts
    subject = f"{task.subject} {task.text}".lower()
    if task.subject_doc is not None:  # an email about a policy: that policy's topics are the subject too
        topics = {t for step in task.subject_doc.steps for t in step.topics}
        subject += " " + " ".join(w for t in topics for w in TOPIC_WORDS.get(t, ()))
    subject_stems = stems(subject)
    lines = []
    for key, (title, pattern) in ROLES.items():
        if key in facts.people and re.search(rf"\b(?:{pattern})\b", subject, re.IGNORECASE):
            lines.append(f"Our {title} is {facts.people[key].name}.")
    for service in facts.services:
        if stems(f"{service.purpose} {service.name}") & subject_stems:
            role = " acting as our processor" if service.processor else ""
            lines.append(f"{service.purpose[0].upper()}{service.purpose[1:]}: {service.name}{role}.")
    named = {p.name for p in task.frameworks}
    for milestone in facts.milestones:
        if any(milestone.what.startswith(n) for n in named) or stems(milestone.what) & subject_stems:
            lines.append(f"{milestone.what}: " + (f"held since {milestone.when}." if milestone.cue == "since" else f"expected {milestone.when}."))
    for timed in facts.retention:
        if stems(timed.what) & subject_stems:
            lines.append(f"{timed.what} are kept for {timed.when}.")
    readiness = reading.register("readiness")
    if readiness and subject_stems & stems(" ".join(readiness.sources) + " readiness gaps status"):
        cols = readiness.columns
        for row in readiness.rows:
            status = row[cols.index("Status")] if "Status" in cols else ""
            gap = row[cols.index("Gap")] if "Gap" in cols and _NOT_READY.search(status) else ""
            owner = f" (owner: {row[cols.index('Owner')]})" if "Owner" in cols and gap else ""
            lines.append(f"{row[0]}: {status.lower()}" + (f"; open gap: {gap[0].lower()}{gap[1:]}{owner}" if gap else "") + ".")
    lines += [f"{s.text} ({s.source})" for s in relevant_statements(reading, subject, 3)]
    if task.subject_doc is not None:
        lines.append(f"The full {task.subject_doc.name.lower()} applies from its publication; security contact: "
                     f"{fields['contact']}.")
    return lines or [f"The workspace records no facts on this subject yet: details {TBC}."]


def relevant_statements(reading: Reading, query: str, limit: int, minimum: int = 2) -> list[Statement]:
    """Document sentences sharing the most topic words with `query`, best first."""
    wanted = stems(query)
    scored = sorted(((-len(s.words & wanted), n, s) for n, s in enumerate(reading.statements)),
                    key=lambda s: s[:2])
    return [s for score, _, s in scored if -score >= minimum][:limit]


def _incident_source(reading: Reading) -> str | None:
    sources = list(dict.fromkeys(s.source for s in reading.statements))
    scored = [(len(stems(f"{name} " + " ".join(s.text for s in reading.statements if s.source == name))
                   & stems(reading.task.text)), -n, name) for n, name in enumerate(sources)]
    best = max(scored, default=None)
    return best[2] if best and best[0] >= 2 else None


def incident_blocks(reading: Reading, fields: Fill, impact: bool) -> list[str]:
    """An incident's own account from the workspace's record of it: its summary, or its impact and response."""
    source = _incident_source(reading)
    if source is None:
        return [f"No record of this incident is in the workspace: date, facts and handling {TBC}."]
    told = [s for s in reading.statements if s.source == source]
    chosen = [s for s in told if any(w in s.text.lower() for w in _IMPACT)] if impact else told[:3]
    lead = (f"Reported by {fields['security_lead']}." if not impact else
            f"Response led by {fields['security_lead']}.")
    when = f"Date: {reading.task.date}. " if reading.task.date and not impact else ""
    return [f"{when}From {source}:", "\n".join(f"- {s.text}" for s in chosen) or f"- {TBC}", lead]


def practice_blocks(reading: Reading, query: str) -> list[str]:
    found = relevant_statements(reading, query, 3)
    return ["In practice today:\n" + "\n".join(f"- {s.text} ({s.source})" for s in found)] if found else []


def legend_blocks(reading: Reading, kind: str, column: str, replace: bool, template_rows, fields: Fill) -> list[str]:
    """The file's own scheme for a register's column, replacing the template's generic table (or,
    when the template's table says something else, such as the treatment each level needs, before it)."""
    generic = [table([tuple(c.format_map(fields) for c in row) for row in template_rows])] if template_rows else []
    legend = legend_for(reading, kind, column)
    if legend is None:
        return generic
    where = f"{legend.source}" + (f", {legend.title}" if legend.title and legend.title not in legend.source else "")
    blocks = [f"The {column.lower()} scheme is the one {where} defines:", table([legend.header, *legend.rows])]
    return blocks if replace else blocks + generic


def _risks_from_assets(reading: Reading, fields: Fill) -> list[str]:
    found = key_assets(reading)
    if not found:
        return []
    rows = [(f"R-{n:02d}", threat_for(a), a.name + (f" ({a.classification})" if a.classification else ""), TBC, TBC,
             TBC, a.owner or TBC) for n, a in enumerate(found, 1)]
    return [f"No risk list is in the workspace: the risks below start from the {len(rows)} most sensitive assets of "
            "the asset register, one scenario each, for their owners to assess (likelihood and impact on the scale "
            "above).", table([("ID", "Risk", "Asset", "Likelihood", "Impact", "Level", "Owner"), *rows])]


def _services_from_assets(reading: Reading, fields: Fill) -> list[str]:
    found = key_assets(reading, systems_only=True)
    if not found:
        return []
    rows = [(a.name, TBC, TBC, a.owner or TBC) for a in found]
    return ["No business impact analysis is in the workspace: the services below are the most sensitive systems of "
            "the asset register; their recovery objectives are to be set with their owners.",
            table([("Service", "Recovery time objective", "Recovery point objective", "Owner"), *rows])]


def _systems_from_assets(reading: Reading, fields: Fill) -> list[str]:
    found = key_assets(reading, limit=12, systems_only=True)
    if not found:
        return []
    rows = [(a.name, a.owner or TBC, a.classification or "—") for a in found]
    return ["The systems in scope are those of the asset register, most sensitive first:",
            table([("System", "Owner", "Classification"), *rows])]


#: Registers a document can start from the asset register when the workspace keeps none of their own.
_FROM_ASSETS = {"risks": _risks_from_assets, "continuity": _services_from_assets, "systems": _systems_from_assets}
