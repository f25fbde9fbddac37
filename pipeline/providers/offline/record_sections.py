"""Parts of the record-based documents (data/kinds/): what the workspace says on a subject,
a retention schedule, a supplier review schedule, a continuity test schedule, audit findings.

Every value is the workspace's: a statement quoted with its source, a row of one of its files, a
period it gives. What the engine adds is arithmetic on those values (when a review falls due) and
rules the document itself sets (the test kinds), said as such.
"""
from __future__ import annotations

import re

from pipeline.words import stems

from .templates import TBC
from .assets import key_assets
from .fields import Fill, listed
from .knowledge import about, candidates
from .processing import CONTROLLER, PROCESSOR, activities
from .reading import Reading
from .sections import table

#: How often a supplier of each criticality is reviewed, in years (the plan's own rule).
REVIEW_YEARS = {"critical": 1, "high": 1, "medium": 2, "low": 3}
_DATE = re.compile(r"\b(?P<year>20\d\d)(?:-(?P<month>\d\d))?")
_QUARTERS = ("Q1", "Q2", "Q3", "Q4")
_HARDWARE = re.compile(r"hardware|device|equipment|laptop|facilit", re.I)


def statement_blocks(reading: Reading, concepts: list[str], *, sources: bool = True) -> list[str]:
    """The workspace's statements on `concepts`, as a list; or a line saying it records none."""
    found = about(candidates(reading, people=False), *concepts, limit=6)
    if not found:
        return [f"The workspace records nothing on this yet: {TBC}."]
    return ["\n".join(f"- {s.text}" + (f" ({s.source})" if sources else "") for s in found)]


def prose_blocks(reading: Reading, concepts: list[str]) -> list[str]:
    """The same statements as a paragraph, for a letter."""
    found = about(candidates(reading, people=False), *concepts, limit=6)
    return [" ".join(s.text for s in found)] if found else [f"Details on this are {TBC}."]


def _trigger(period: str) -> tuple[str, str]:
    """"5 years after the end of the customer relationship" -> ("5 years", "the end of the customer relationship")."""
    found = re.match(r"(?P<period>.+?)\s+(?:after|from)\s+(?P<start>.+)$", period)
    return (found["period"], found["start"]) if found else (period, "creation of the record")


def retention_blocks(reading: Reading) -> list[str]:
    """One row per kind of record the workspace gives a period for: memories and documents first,
    then the retention column of its record of processing."""
    rows, seen = [], set()
    for timed in reading.facts.retention:
        period, start = _trigger(timed.when)
        rows.append((timed.what, period, start, "workspace memory" if timed.source.startswith("memory") else timed.source,
                     "delete or anonymise"))
        seen.add(timed.what.lower())
    processing = reading.register("processing")
    if processing and "Retention" in processing.columns:
        at = processing.columns.index("Retention")
        for row in processing.rows:
            if row[at] not in ("", "—") and row[0].lower() not in seen:
                rows.append((row[0], row[at], TBC, listed(list(processing.sources)), "delete or anonymise"))
    if not rows:  # the records the workspace holds, for their owners to give a period
        held = [(a.name, a.owner) for a in key_assets(reading, limit=12) if not _HARDWARE.search(a.category)]
        held += [(a["activity"], a["recipient"]) for role in (CONTROLLER, PROCESSOR) for a in activities(reading, role)]
        if not held:
            return [f"The workspace gives no retention period yet: each record owner states one ({TBC}).",
                    table([("Record", "Retention period", "Period starts", "Source", "At the end"), (TBC,) * 5])]
        return ["The workspace gives no retention period yet. The records below are those its asset register and "
                "supplier list show; each owner states the period and its legal basis:",
                table([("Record", "Held by", "Retention period", "Period starts", "At the end"),
                       *[(name, who or TBC, TBC, TBC, "delete or anonymise") for name, who in held]])]
    return [f"{len(rows)} kinds of record have a retention period in the workspace's records:",
            table([("Record", "Retention period", "Period starts", "Source", "At the end"), *rows])]


def _year_of(cell: str) -> int | None:
    found = _DATE.search(cell)
    return int(found["year"]) if found else None


def review_schedule_blocks(reading: Reading, fields: Fill) -> list[str]:
    """Each supplier of the workspace's list with the review its criticality calls for in the period."""
    register = reading.register("suppliers")
    year = int(reading.task.year) if reading.task.year else None
    if register is None:
        return [f"No supplier list is in the workspace: the suppliers to review are {TBC}.",
                table([("Supplier", "Criticality", "Last review", "Next review", "Lead"), (TBC,) * 5])]
    cols = register.columns
    get = {c: cols.index(c) for c in cols}
    rows, quarter = [], 0
    order = sorted(register.rows, key=lambda r: list(REVIEW_YEARS).index(r[get["Criticality"]].lower())
                   if "Criticality" in get and r[get["Criticality"]].lower() in REVIEW_YEARS else len(REVIEW_YEARS))
    for row in order:
        level = row[get["Criticality"]].lower() if "Criticality" in get else ""
        last = row[get["Last review"]] if "Last review" in get else "—"
        every = REVIEW_YEARS.get(level)
        last_year = _year_of(last)
        if every is None:
            due = f"{TBC} (criticality not recorded)"
        elif last_year is None:
            due = (f"{_QUARTERS[quarter % 4]} {year} (no earlier review recorded)" if year
                   else "as soon as possible (no earlier review recorded)")
            quarter += 1 if year else 0
        elif year and last_year + every < year:
            due = f"overdue since {last_year + every}: {_QUARTERS[quarter % 4]} {year}"
            quarter += 1
        elif year and last_year + every == year:
            due = f"{_QUARTERS[quarter % 4]} {year}"
            quarter += 1
        else:
            due = f"{last_year + every}" + (" (not due in the period)" if year else "")
        lead = row[get["Owner"]] if "Owner" in get and row[get["Owner"]] not in ("", "—") else fields["supplier_owner"]
        service = row[get["Service"]] if "Service" in get else "—"
        rows.append((row[get["Supplier"]], service, row[get["Criticality"]] if "Criticality" in get else "—", last, due, lead))
    intro = f"From {listed(list(register.sources))} ({register.total} suppliers), most critical first:"
    return [intro, table([("Supplier", "Service", "Criticality", "Last review", "Next review", "Lead"), *rows])]


def test_schedule_blocks(reading: Reading, fields: Fill) -> list[str]:
    """A test for each service of the business impact analysis: the most demanding recovery objective
    first, with the most complete kind of test; the quarters spread over the period."""
    register = reading.register("continuity")
    year = f" {reading.task.year}" if reading.task.year else ""
    if register is not None:
        cols = register.columns
        services = [(row[cols.index("Service")] if "Service" in cols else row[0], row[cols.index("Recovery time objective")],
                     row[cols.index("Owner")] if "Owner" in cols and row[cols.index("Owner")] != "—" else "")
                    for row in register.rows]
    else:  # the most sensitive systems of the asset register, their objectives still to be set
        services = [(a.name, f"its recovery time objective ({TBC})", a.owner) for a in key_assets(reading, systems_only=True)]
    if not services:
        return [f"No business impact analysis is in the workspace: the services to test are {TBC}.",
                table([("Service", "Test", "When", "Success criterion", "Lead"), (TBC,) * 5])]
    rows = []
    for n, (service, rto, owner) in enumerate(services):
        kind = ("Full recovery or failover test" if n == 0 else "Restore test" if n == 1 else "Tabletop exercise")
        rows.append((service, kind, f"{_QUARTERS[n % 4]}{year}", f"service recovered within {rto}",
                     owner or fields["it_lead"]))
    return ["One test per service of the business impact analysis, the service with the most demanding "
            "recovery objective first (the kinds of test are this plan's proposal):",
            table([("Service", "Test", "When", "Success criterion", "Lead"), *rows])]


def findings_blocks(reading: Reading, words: str) -> list[str]:
    """Earlier audit findings on the subject (their words meet `words`), from the workspace's files."""
    register = reading.register("findings")
    wanted = stems(words)
    if register is None:
        return ["No earlier audit finding on this subject is recorded in the workspace."]
    related = [row for row in register.rows if stems(" ".join(row)) & wanted]
    if not related:
        return [f"None of the {register.total} findings in {listed(list(register.sources))} concerns this subject."]
    return [f"From {listed(list(register.sources))}:", table([register.columns, *related])]


def audit_input_blocks(reading: Reading) -> list[str]:
    """Audit results for a management review: the findings table and what the audit report says."""
    blocks = [s for s in statement_blocks(reading, ["audit"]) if TBC not in s]
    register = reading.register("findings")
    if register is not None:
        blocks += [f"Findings from {listed(list(register.sources))}:", table([register.columns, *register.rows])]
    return blocks or [f"Audit results: {TBC}."]
