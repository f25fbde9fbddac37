"""Processing activities read from the workspace when it keeps no record of processing: the
suppliers that receive personal data, each one activity, as controller or as processor.

A company that says it acts as a processor for its customers ("for the hospitals that use the
platform we act as a processor") keeps two records (GDPR Art. 30(1) and 30(2)): the data of its
own people (staff, candidates, prospects, customer contacts) is processed as controller, the rest
(its customers' end users: patients, cardholders...) on its customers' behalf.
"""
from __future__ import annotations

import re

from pipeline.words import stems

from .kinds import KINDS
from .templates import TBC
from .fields import Fill
from .knowledge import about, candidates
from .reading import Reading
from .sections import register_blocks, table
from .text import lower_first

#: The activities step of the controller's record: its columns and example rows.
ROPA_ACTIVITIES = KINDS["ropa"].steps[1]

CONTROLLER, PROCESSOR = "controller", "processor"
#: The data of a company's own people: processed as controller.
_OWN_PEOPLE = (("employee", "employees"), ("staff", "employees"), ("payroll", "employees"), ("candidate", "applicants"),
               ("applicant", "applicants"), ("prospect", "prospects"), ("customer contact", "customer contacts"),
               ("supplier contact", "supplier contacts"), ("visitor", "visitors"))
_SUBJECTS = (("patient", "patients"), ("cardholder", "cardholders"), ("merchant", "merchants"), ("driver", "drivers"),
             ("student", "students"), ("member", "members"), ("user", "users"), ("customer", "customers"))
_NO_DATA = re.compile(r"^\s*(?:none|no|n/?a|—|-|no personal data)?\s*$", re.I)
#: Countries of the European Economic Area (and adequacy is not assumed for any other).
_EEA = ("austria belgium bulgaria croatia cyprus czech denmark estonia finland france germany greece hungary "
        "ireland italy latvia lithuania luxembourg malta netherlands poland portugal romania slovakia slovenia "
        "spain sweden iceland liechtenstein norway eu eea europe").split()


def subjects_of(data: str) -> tuple[str, str]:
    """(data subjects, role) a personal-data cell speaks of: "Employee bank details" -> ("employees", controller)."""
    lowered = data.lower()
    own = next((who for word, who in _OWN_PEOPLE if word in lowered), None)
    if own:
        return own, CONTROLLER
    other = next((who for word, who in _SUBJECTS if word in lowered), None)
    return (other or TBC), PROCESSOR


def transfer_of(country: str) -> str:
    """Whether a supplier's location takes data outside the EEA, in the record's words."""
    if not country or country == "—":
        return TBC
    words = re.findall(r"[a-z]+", country.lower())
    outside = [w for w in ("united states", "usa", "us", "india", "china", "canada", "australia", "japan", "brazil",
                           "singapore", "united kingdom", "uk", "switzerland", "israel")
               if re.search(rf"\b{w}\b", country.lower())]
    if outside:
        return f"Yes: {country} (safeguards {TBC})"
    return f"No ({country})" if any(w in _EEA for w in words) else f"{country} ({TBC})"


def activities(reading: Reading, role: str) -> list[dict[str, str]]:
    """The activities of `role` the supplier list shows; with no processor role stated, all are the
    controller's."""
    register = reading.register("suppliers")
    if register is None or "Personal data" not in register.columns:
        return []
    cols = register.columns
    out = []
    for row in register.rows:
        data = row[cols.index("Personal data")]
        if _NO_DATA.match(data):
            continue
        subjects, own_role = subjects_of(data)
        if (own_role if reading.facts.processor_for else CONTROLLER) != role:
            continue
        service = row[cols.index("Service")] if "Service" in cols else TBC
        country = row[cols.index("Location")] if "Location" in cols else ""
        out.append({"activity": service[:1].upper() + service[1:], "subjects": subjects, "data": data,
                    "recipient": row[cols.index("Supplier")], "transfer": transfer_of(country),
                    "source": ", ".join(register.sources)})
    return out


def _retention_for(reading: Reading, *texts: str) -> str:
    wanted = stems(" ".join(texts))
    found = next((t for t in reading.facts.retention if stems(t.what) & wanted), None)
    return found.when if found else TBC


def activity_blocks(reading: Reading, role: str, fields: Fill) -> list[str]:
    """The activities of a record of processing: the workspace's own record when it keeps one (as
    controller), else those its supplier list shows for `role`, else examples to replace."""
    if role == CONTROLLER and reading.register("processing") is not None:
        return register_blocks(reading, "processing", ROPA_ACTIVITIES.table, fields)
    found = activities(reading, role)
    if role == CONTROLLER:
        if not found:
            return register_blocks(reading, "processing", ROPA_ACTIVITIES.table, fields)
        rows = [(a["activity"], lower_first(a["activity"]), a["subjects"], a["data"], a["recipient"], a["transfer"],
                 _retention_for(reading, a["activity"], a["data"]), "see the security measures below") for a in found]
        header = ROPA_ACTIVITIES.table[0]
    else:
        if not found:
            return [f"No supplier list with personal data is in the workspace: the processing carried out for the "
                    f"controllers is {TBC}."]
        rows = [(a["activity"], a["subjects"], a["data"], a["recipient"], a["transfer"]) for a in found]
        header = ("Processing carried out for the controllers", "Data subjects", "Personal data", "Sub-processor",
                  "Transfer outside the EEA")
    source = found[0]["source"]
    note = (f"Each row is a service of {source} that receives personal data "
            + ("of the organisation's own people, processed as controller:" if role == CONTROLLER and
               reading.facts.processor_for else "on the controllers' behalf:" if role == PROCESSOR else "of people:"))
    return [note, table([header, *rows])]


_DEADLINE = re.compile(r"\bwithin\s+(?P<when>\d+\s+(?:hours?|days?))\b", re.I)


def notice_blocks(reading: Reading, fields: Fill) -> list[str]:
    """A processor's notice of a breach to the controller: without undue delay, and within the
    company's own deadline when its records give one."""
    said = next((m["when"] for s in about(candidates(reading, people=False), "breach", limit=12) for m in [_DEADLINE.search(s.text)]
                 if m and "72" not in m["when"]), None)
    when = ("Without undue delay after becoming aware of the breach"
            + (f", and within {said} under the company's own policy" if said else ""))
    rows = [("When", "Who is notified", "By whom"),
            (when, "the controller: each customer whose data is affected", fields["dpo"]),
            ("As further facts become known, in phases", "the same controller", fields["dpo"])]
    return [table(rows),
            f"{fields['org']} does not notify the supervisory authority or the individuals about data it processes for "
            "a customer: the controller decides on those notifications, within its own deadline, and "
            f"{fields['org']} gives it the information it needs. The notice to the controller states:",
            "\n".join(f"- {item}" for item in (
                "the nature of the breach, the categories and approximate numbers of people and records concerned;",
                "its likely consequences;", "the measures taken or proposed to address it and limit its effects;",
                f"the contact point for more information: {fields['dpo']}."))]
