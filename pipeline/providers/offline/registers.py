"""Registers built from the workspace's tables: which table holds assets, suppliers, processing
activities or risks, and its rows under the document's own columns."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from pipeline.citations import extract_citations
from pipeline.words import stems

from .tables import Table, header_stems, map_columns

#: Rows a document shows from one register; the rest stay in the source file, and the text says so.
MAX_SHOWN = 150


@dataclass(frozen=True)
class Kind:
    """A register's document columns (each with the header words that mean it in a source file),
    the column a row cannot do without, and words that name such a table or file."""

    key: str
    columns: dict[str, tuple[str, ...]]
    required: str
    names: tuple[str, ...]


KINDS = {k.key: k for k in (
    Kind("assets", {
        "ID": ("asset id", "asset no", "asset number", "asset tag", "tag", "ref", "reference", "id"),
        "Asset": ("asset", "asset name", "name", "item", "description", "hostname"),
        "Category": ("type", "category", "asset type", "class", "asset class"),
        "Owner": ("owner", "asset owner", "responsible", "custodian", "owned by"),
        "Location": ("location", "site", "hosted", "hosting", "region", "where"),
        "Classification": ("classification", "sensitivity", "confidentiality", "data classification", "label"),
        "Status": ("status", "state", "lifecycle"),
        "Last review": ("last review", "last reviewed", "review date", "reviewed", "last audit"),
    }, "Asset", ("asset", "inventory", "cmdb", "hardware", "equipment")),
    Kind("suppliers", {
        "Supplier": ("supplier", "vendor", "provider", "third party", "company", "supplier name"),
        "Service": ("service", "service provided", "services", "product", "purpose", "what they do"),
        "Personal data": ("personal data", "data shared", "personal data shared", "data processed", "data access",
                          "data categories", "categories of data", "personal data categories", "data types"),
        "Criticality": ("criticality", "tier", "risk", "risk rating", "importance", "critical"),
        "Agreement": ("dpa", "dpa signed", "contract", "agreement", "data processing agreement"),
        "Location": ("country", "location", "region", "jurisdiction"),
        "Owner": ("owner", "contract owner", "relationship owner", "business owner"),
        "Last review": ("last review", "last reviewed", "review date", "reviewed", "last assessment", "last assessed",
                        "assessment date"),
    }, "Supplier", ("supplier", "vendor", "third", "processor")),
    Kind("processing", {
        "Processing activity": ("processing activity", "activity", "process", "processing", "name"),
        "Purpose": ("purpose", "purposes", "why"),
        "Data subjects": ("data subjects", "subjects", "categories of data subjects", "individuals"),
        "Personal data": ("personal data", "categories of personal data", "data categories", "data"),
        "Recipients": ("recipients", "shared with", "disclosed to", "processors"),
        "Transfers outside the EEA": ("transfers", "international transfers", "third country", "transfer"),
        "Retention": ("retention", "retention period", "kept for", "storage period"),
        "Lawful basis": ("lawful basis", "legal basis", "basis"),
        "Security measures": ("security measures", "security", "safeguards", "toms"),
    }, "Processing activity", ("processing", "ropa", "article")),
    Kind("risks", {
        "ID": ("risk id", "risk ref", "risk no", "ref", "reference", "id"),
        "Risk": ("risk", "threat", "scenario", "risk description", "description", "title"),
        "Asset": ("asset", "affected asset", "assets", "system"),
        "Likelihood": ("likelihood", "probability"),
        "Impact": ("impact", "consequence", "severity"),
        "Level": ("level", "score", "rating", "risk level", "inherent risk"),
        "Owner": ("owner", "risk owner", "responsible"),
        "Treatment": ("treatment", "mitigation", "controls", "action", "response"),
    }, "Risk", ("risk",)),
    Kind("readiness", {
        "Area": ("area", "control area", "domain", "topic", "criterion", "criteria"),
        "Status": ("status", "readiness", "state", "rating"),
        "Gap": ("gap", "open gap", "gaps", "finding", "issue", "observation"),
        "Owner": ("owner", "responsible", "lead"),
        "Action": ("action", "remediation", "next step", "plan"),
    }, "Area", ("readiness", "gap", "assessment")),
    Kind("systems", {
        "System": ("system", "application", "system name", "platform"),
        "Owner": ("owner", "system owner", "business owner", "application owner"),
        "Users": ("users", "user count", "number of users", "accounts"),
        "Privileged accounts": ("privileged accounts", "admin accounts", "administrators", "privileged"),
        "Last review": ("last access review", "last review", "last reviewed", "review date"),
    }, "System", ("system", "application", "owners")),
    Kind("continuity", {
        "Service": ("service", "process", "business process", "activity", "critical activity"),
        "Recovery time objective": ("recovery time objective", "rto", "maximum downtime", "maximum tolerable downtime"),
        "Recovery point objective": ("recovery point objective", "rpo", "maximum data loss"),
        "Owner": ("owner", "service owner", "process owner"),
        "System": ("system", "systems", "application"),
    }, "Recovery time objective", ("continuity", "impact", "bia", "recovery")),
    Kind("findings", {
        "Ref": ("ref", "reference", "finding id", "id", "no"),
        "Type": ("type", "grade", "category", "severity"),
        "Finding": ("finding", "nonconformity", "observation", "description"),
        "Owner": ("owner", "responsible", "action owner"),
        "Due": ("due", "due date", "deadline", "target date"),
        "Status": ("status", "state"),
    }, "Finding", ("audit", "finding", "nonconformit")),
    Kind("timeline", {
        "Time": ("time", "date", "when", "timestamp"),
        "Event": ("action", "event", "what happened", "description", "activity"),
        "By": ("by", "who", "owner", "actor"),
    }, "Time", ("incident", "timeline")),
)}


@dataclass(frozen=True)
class Register:
    """Rows of one kind from the workspace's tables, under the document's columns."""

    kind: Kind
    columns: tuple[str, ...]  # the document columns a source fills, in the kind's order
    rows: tuple[tuple[str, ...], ...]
    sources: tuple[str, ...]
    missing: tuple[str, ...]  # document columns no source fills
    unused: tuple[str, ...]  # source columns the document does not show
    total: int  # rows in the sources, shown or not


def fits(table: Table, kind: Kind) -> bool:
    """Whether the table holds rows of `kind` (a register's data, not its legend)."""
    return _fit(table, kind)[0] > 0


def _fit(table: Table, kind: Kind) -> tuple[int, dict[str, int]]:
    """How well a table fits a kind (0: not at all) and its column mapping."""
    return _fit_header(table.header, table.title, table.source, kind.key)


@lru_cache(maxsize=4096)
def _fit_header(header: tuple[str, ...], title: str, source: str, kind_key: str) -> tuple[int, dict[str, int]]:
    # Keyed on the header, not the rows: many exports of one inventory share a header.
    kind = KINDS[kind_key]
    mapping = map_columns(header, kind.columns)
    if kind.required not in mapping:
        return 0, mapping
    named = bool(stems(f"{title} {source}") & {s for n in kind.names for s in header_stems(n)})
    needed = 2 if named else 3
    return (len(mapping) + 2 * named if len(mapping) >= needed else 0), mapping


def _cell(value: str, source: str) -> str:
    value = " ".join(value.split())
    # A cell that reads like a framework reference is not repeated: the draft cites only the brief.
    return f"(see {source})" if value and extract_citations(value) else value or "—"


def find_register(tables: list[Table], kind_key: str) -> Register | None:
    """The rows of every table that fits `kind_key`, best fit first; None when no table fits."""
    kind = KINDS[kind_key]
    fitting = []
    for n, table in enumerate(tables):
        score, mapping = _fit(table, kind)
        # A table fits the kind it fits best: a risk list names assets, but it is not an inventory.
        if score and score >= max(_fit(table, other)[0] for other in KINDS.values()):
            fitting.append((score, n, table, mapping))
    if not fitting:
        return None
    best = max(score for score, *_ in fitting)
    chosen = sorted((f for f in fitting if f[0] >= best - 2), key=lambda f: (-f[0], f[1]))
    columns = tuple(c for c in kind.columns if any(c in m for *_, m in chosen))
    found: list[tuple[tuple[str, ...], Table, dict[str, int]]] = []
    unused: list[str] = []
    for _, _, table, mapping in chosen:
        found += [(row, table, mapping) for row in table.rows if row[mapping[kind.required]].strip()]
        unused += [h for i, h in enumerate(table.header) if i not in mapping.values() and h not in unused]
    rows = tuple(tuple(_cell(row[mapping[c]], table.source) if c in mapping else "—" for c in columns)
                 for row, table, mapping in found[:MAX_SHOWN])
    return Register(kind, columns, rows, tuple(dict.fromkeys(t.source for _, _, t, _ in chosen)),
                    tuple(c for c in kind.columns if c not in columns), tuple(unused), len(found))


#: What a supplier row says when it processes only the organisation's own staff's data (payroll,
#: HR): a processor for the organisation as controller, not a subprocessor of its customers' data.
_STAFF_ONLY = re.compile(r"\b(?:employees?|staff|payroll|hr|human resources|recruit\w*|candidates?|pension)\b", re.I)
_CUSTOMER_DATA = re.compile(r"\b(?:customers?|clients?|patients?|users?|care|council|members?|visitors?)\b", re.I)


def for_customers(register: Register) -> tuple[list[tuple[str, ...]], int]:
    """The suppliers that may process the customers' data (the subprocessors), and how many were
    left out because they process only the organisation's own staff's data."""
    cols = register.columns
    data = [cols.index(c) for c in ("Personal data", "Service") if c in cols]
    kept, left = [], 0
    for row in register.rows:
        said = " ".join(row[i] for i in data)
        if said and _STAFF_ONLY.search(said) and not _CUSTOMER_DATA.search(said):
            left += 1
        else:
            kept.append(row)
    return kept, left
