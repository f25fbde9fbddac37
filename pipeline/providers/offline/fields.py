"""The values the templates' placeholders stand for, from the reading of the context.

Each is a fact from the task or the workspace in the engine's own words, or a phrase saying it is
to be confirmed when no source gives it. `missing` lists which of a document's needs no source gives.
"""
from __future__ import annotations

import re

from pipeline.context import Context

from .templates import TBC
from .facts import ROLES, Person
from .reading import Reading
from .text import clip, looks_like_citation

_ROLE_FIELDS = {"dpo": ("dpo",), "security_lead": ("ciso", "ism", "it_head"), "it_lead": ("it_head", "cto",
                "engineering_head", "ism"), "ism": ("ism", "ciso")}


class Fill(dict):
    """str.format_map that leaves unknown placeholders alone instead of failing."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def listed(items: list[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1] if items else ""


def person_phrase(person: Person | None, role: str) -> str:
    return person.described if person else f"the {role} (name {TBC})"


def cadence_for(reading: Reading, *words: str) -> str:
    """The review cadence the workspace gives for something mentioning any of `words`."""
    for timed in reading.facts.cadences:
        if any(w in f"{timed.what} {timed.who}".lower() for w in words):
            if timed.who.startswith("chaired by"):
                return f"{timed.when}, {timed.who}"
            return timed.when + (f" by {timed.who[0].lower()}{timed.who[1:]}" if timed.who else "")
    return ""


def values(reading: Reading) -> dict[str, str]:
    """Placeholder -> value for every fact the context gives (absent when it gives none)."""
    facts, out = reading.facts, {}
    for key, roles in _ROLE_FIELDS.items():
        person = facts.person(*roles)
        if person:
            out[key] = person_phrase(person, "")
            out[key + "_name"] = person.name
    if reading.headcount or reading.description:
        size = f"{reading.headcount}-person " if reading.headcount else ""
        out["profile"] = f"{reading.org}, a {size}{reading.description or reading.sector or 'organisation'}"
    if reading.facts.locations:
        out["locations"] = listed(reading.facts.locations)
    systems = [f"{s.name} ({s.purpose})" for s in facts.services if s.purpose != "hosting"]
    if systems:
        out["systems"] = listed(systems[:8])
    processors = [f"{s.name} ({s.purpose})" for s in facts.services if s.processor]
    if processors:
        out["processors"] = listed(processors[:8])
    payroll = facts.services_for("payroll")
    if payroll:
        out["payroll"] = payroll[0].name
    hosting = [s for s in facts.services if s.purpose == "hosting" or s.provider]
    if hosting:
        out["hosting"] = listed([s.provider or s.name + (f" ({s.where})" if s.where else "") for s in hosting])
    if facts.milestones:
        out["certification"] = listed([m.dated for m in facts.milestones])
    if facts.data_categories:
        out["data_categories"] = listed(facts.data_categories)
    if facts.retention:
        out["retention"] = listed([f"{t.what.lower()}: {t.when}" for t in facts.retention])
    for key, words in (("access_review", ("access",)), ("risk_review", ("risk",)),
                       ("committee_cadence", ("committee", "steering", "group", "board", "management review"))):
        cadence = cadence_for(reading, *words)
        if cadence:
            out[key] = cadence
    committee = next((t.who or t.what for t in facts.cadences
                      if any(w in f"{t.what} {t.who}".lower() for w in ("committee", "steering", "group"))), "")
    if committee:
        out["committee"] = committee[0].lower() + committee[1:] if committee.lower().startswith("the ") else committee
    if facts.processor_for:
        out["processor_for"] = facts.processor_for
    return out


_FALLBACKS = {
    "dpo": f"the Data Protection Officer (name {TBC})", "security_lead": f"the security lead (name {TBC})",
    "it_lead": f"the IT lead (name {TBC})", "ism": f"the ISMS manager (name {TBC})", "locations": TBC,
    "systems": TBC, "processors": TBC, "payroll": TBC, "hosting": TBC, "certification": TBC,
    "data_categories": TBC, "retention": TBC, "access_review": f"periodically (frequency {TBC})",
    "risk_review": f"periodically (frequency {TBC})", "committee_cadence": f"at planned intervals ({TBC})",
    "committee": "top management", "processor_for": TBC,
}
#: What each need means, for the open points.
NEEDS = {"dpo": "who the Data Protection Officer is", "security_lead": "who leads information security",
         "it_lead": "who leads IT", "locations": "the locations in scope", "systems": "the systems in scope",
         "processors": "the processors used", "payroll": "the payroll provider", "retention": "the retention periods",
         "access_review": "how often access is reviewed", "risk_review": "how often risks are reviewed",
         "certification": "the certification target", "data_categories": "the categories of personal data",
         "hosting": "where the services are hosted", "committee_cadence": "how often management reviews the ISMS"}


def fill(reading: Reading, scope: str) -> Fill:
    """Every placeholder a template may use."""
    task = reading.task
    subject = task.subject
    lowered = subject if subject[:2].isupper() else subject[0].lower() + subject[1:]
    found = values(reading)
    out = Fill({**_FALLBACKS, **found})
    out.update(org=reading.org, scope=scope, audience=task.audience, subject=subject, subject_lower=lowered,
               greeting=task.greeting, profile=found.get("profile", reading.org),
               sign_off="Yours sincerely," if task.is_letter else "Thank you,",
               contact=found.get("security_lead", f"the information security team ({TBC})"))
    lead = reading.facts.person("ciso", "ism", "it_head")
    supplier_owner = reading.facts.person_for("supplier", "vendor", "procurement", "third part")
    out.update(period=task.year or "the next twelve months", deadline=task.date or "four weeks from the date of this memo",
               supplier_owner=supplier_owner.described if supplier_owner else out["security_lead"],
               signatory=f"{lead.name}\n{lead.title}" if lead else "The information security team",
               questionnaire_owner=lead.described if lead else "the person who owns the customer relationship",
               security_lead_name=lead.name if lead else "The information security team")
    for key, (title, _) in ROLES.items():
        out.setdefault(key, title)
    out["subject_line"] = clip(subject, 90)
    return out


def missing(reading: Reading, needs: tuple[str, ...]) -> list[str]:
    """The needs (by description) that no source gives."""
    found = values(reading)
    return [NEEDS.get(need, need) for need in needs if need not in found]


_TASK_SCOPE = re.compile(r"\b(?:for|covering|across|within)\s+(our|the)\s+([^.,;:!?]{3,80})", re.IGNORECASE)


def scope_of(ctx: Context, reading: Reading) -> tuple[str, str | None]:
    """(scope phrase for the document, where it came from) or a to-be-confirmed phrase and None."""
    match = _TASK_SCOPE.search(ctx.task)
    if match and not looks_like_citation(match.group(2)) and not reading.task.headcount:
        return "the " + match.group(2).strip(), "the task"
    found = values(reading)
    if "locations" in found and "systems" in found:
        return f"the information systems of {reading.org} ({found['systems']}) at {found['locations']}", "the workspace"
    return f"all information, systems and locations of {reading.org} (exact boundaries {TBC})", None
