"""Documents of a kind no template covers, drafted as the kind the task asks for.

A task that names a kind of document (an "acceptable use policy", a "supplier risk register", a
"board report") gets that kind, never another: when no template of the engine is that kind, the
engine drafts it from the shape its head noun calls for (a policy states rules, a procedure steps,
a register rows, a report findings) and the workspace's facts about its subject, and says what it
does not know. A kind whose head calls for no shape the engine has (a contract, a press release) is
declined by the planner.
"""
from __future__ import annotations

import re

from pipeline.requirements.kinds import KindPhrase
from pipeline.requirements.words import content_words, phrase_in

from .doctypes import OPEN_POINTS, TBC
from .templates import DocType, StepTemplate as S

#: The shape each head noun calls for.
FAMILIES = {
    **dict.fromkeys("policy standard guideline guide guidance handbook manual charter code rules scheme "
                    "framework".split(), "policy"),
    **dict.fromkeys("procedure process playbook runbook workflow instructions".split(), "procedure"),
    **dict.fromkeys("plan programme program roadmap strategy".split(), "plan"),
    **dict.fromkeys("register inventory log logbook list tracker matrix catalogue catalog table record "
                    "schedule".split(), "register"),
    **dict.fromkeys("report assessment analysis review memo memorandum briefing summary overview note "
                    "evaluation study scorecard".split(), "report"),
    "checklist": "checklist",
}
#: Heads that name a document about what the words before them name.
_ABOUT_HEADS = frozenset({"overview", "summary", "outline", "description", "introduction"})
_POSSESSIVE = re.compile(r"\b[\w-]+['’]s\b\s*|\b(?:our|the|a|an|this|that)\b\s*", re.I)


def asked_words(kind: KindPhrase) -> str:
    """The kind's own words, without whose it is ("this customer's security questionnaire" ->
    "security questionnaire")."""
    return " ".join(_POSSESSIVE.sub(" ", kind.text).split())


def same_kind(doc: DocType, kind: KindPhrase) -> bool:
    """True when a template's document is the kind asked: every word of the kind is among the words
    of its name and of the phrases that name it ("supplier risk register" is not a "risk register").
    A document whose kind is told by its head noun alone (a "council questionnaire") needs only that."""
    words = asked_words(kind)
    named = " ".join((doc.name, *doc.keywords))
    if kind.head in _ABOUT_HEADS and " " in words:  # an "asset-register overview" is the register's document
        words = words.rsplit(" ", 1)[0]
    if doc.open_modifiers or doc.has_subject:
        return phrase_in(kind.text.split()[-1], named)
    return not content_words(words) or phrase_in(words, named)


def kind_doctype(kind: KindPhrase, task: str) -> DocType | None:
    """A document of the asked kind in the shape its head calls for; None when none fits."""
    family = FAMILIES.get(kind.head)
    if family is None:
        return None
    name = asked_words(kind)
    name = name[:1].upper() + name[1:]
    steps = _STEPS[family](kind.head)
    return DocType(f"kind_{family}", name, {}, _AUDIENCES[family], steps, has_subject=True,
                   subject_topics=("policy",) if family == "policy" else (), subject_from_task=True,
                   subject=subject_of_kind(kind, task))


_AUDIENCE_WORDS = re.compile(r"^(?:board|staff|employee|customer|client|auditor|management|leadership|executive)s?\s+",
                             re.I)
_TAIL = re.compile(r"\s+((?:for|on|about|of|covering|regarding)\s+[^.;:!?\n,]{2,80})", re.I)


def subject_of_kind(kind: KindPhrase, task: str) -> str:
    """What the document is about: the words before its head ("acceptable use") and the scope
    the task gives right after its name ("for laptops and mobile phones"), without whose it is."""
    words = asked_words(kind).rsplit(" ", 1)
    own = _AUDIENCE_WORDS.sub("", words[0] + " ") if len(words) > 1 else ""
    tail = _TAIL.match(task, kind.span[1])
    scope = re.split(r"\s(?:with|so|that|which|who|because)\s", tail.group(1))[0] if tail else ""
    if own.strip() and scope:
        return f"{own.strip()} {scope}"
    subject = own.strip() or _POSSESSIVE.sub(" ", scope.split(None, 1)[1] if " " in scope else "").strip()
    return " ".join(subject.split()) or "the requested topic"


def _policy(head: str) -> tuple[S, ...]:
    return (
        S("Purpose and scope", f"State what this {head} is for, whom it applies to and what it covers. Scope: {{scope}}.",
          ("@subject",), intro=f"This {head} sets out how {{org}} handles {{subject_lower}}. It applies to {{scope}}.",
          bullets=("Owner: {security_lead}", "Audience: {audience}")),
        S("Rules", "State the rules that apply, from what the workspace records.", (),
          intro="What the workspace's memories and documents already establish:", section="related"),
        S("Roles and responsibilities", "Say who owns, applies and enforces the rules.", ("roles",), section="people"),
        S("Exceptions and review", f"Say how exceptions are approved and when the {head} is reviewed.", (),
          bullets=("Exceptions are approved in writing by {security_lead} and recorded.",
                   f"Breaches of this {head} are handled under the disciplinary process.",
                   f"This {head} is reviewed at least annually and after any significant change.")),
        OPEN_POINTS,
    )


def _procedure(head: str) -> tuple[S, ...]:
    return (
        S("Purpose and scope", f"State what this {head} is for and when it applies. Scope: {{scope}}.", ("@subject",),
          intro=f"This {head} sets out how {{org}} carries out {{subject_lower}}. It applies to {{scope}}."),
        S("Roles", "Say who does what in the procedure.", ("roles",), section="people"),
        S("Steps", "Set out the steps, from what the workspace records.", (),
          intro="The steps below follow what the workspace's memories and documents record:", section="related"),
        S("Records and review", "Say what is recorded and when the procedure is reviewed.", ("documented_information",),
          bullets=("Each time the procedure is used, the date, the people involved and the outcome are recorded.",
                   f"This {head} is reviewed at least annually and after each significant use.")),
        OPEN_POINTS,
    )


def _plan(head: str) -> tuple[S, ...]:
    return (
        S("Objectives and scope", f"State what the {head} sets out to achieve. Scope: {{scope}}.", ("@subject",),
          intro=f"This {head} sets out what {{org}} will do on {{subject_lower}}, for {{period}}. It covers {{scope}}."),
        S("Actions", "Set out the actions, from what the workspace records.", (),
          intro="Starting from what the workspace's memories and documents record:", section="related"),
        S("Owners", "Name who owns each action.", ("roles",), section="people"),
        S("Monitoring and review", "Say how progress is followed.", (),
          bullets=("Progress is reported to {security_lead} at each security forum.",
                   f"The {head} is reviewed at the end of the period and when priorities change.")),
        OPEN_POINTS,
    )


def _register(head: str) -> tuple[S, ...]:
    return (
        S("Purpose and scope", f"State what this {head} records and who keeps it.", ("@subject",),
          intro=f"This {head} records {{subject_lower}} for {{org}}. It is kept by {{security_lead}}."),
        S(head[:1].upper() + head[1:], f"Provide the {head} as a table, one row per entry, with the columns the "
                                       "task asks for.", (), section="kind_register"),
        S("Maintenance", f"Say how the {head} is kept current.", (),
          bullets=(f"Entries are added or updated when something changes, and the whole {head} is checked at "
                   "least annually.", "Each entry's owner confirms it at the check.")),
        OPEN_POINTS,
    )


def _report(head: str) -> tuple[S, ...]:
    return (
        S("Purpose", f"State what this {head} is about and for whom.", ("@subject",),
          intro=f"This {head} for {{audience}} covers {{subject_lower}} at {{org}}."),
        S("Current position", "State what the workspace records on the subject.", (),
          section="profile"),
        S("Findings", "Set out what the workspace's records show on the subject.", (), section="related"),
        OPEN_POINTS,
    )


def _checklist(head: str) -> tuple[S, ...]:
    return (
        S("Purpose", "State what the checklist is for and who uses it.", ("@subject",),
          intro="This checklist is used for {subject_lower} at {org}. Each item is ticked and dated by the person "
                "responsible."),
        S("Checklist", "List the checks, from what the workspace records.", (), section="checklist"),
        S("Sign-off", "Say who signs the completed checklist.", ("roles",),
          bullets=("Completed by: the person responsible, with the date.", "Checked by: {security_lead}.")),
        OPEN_POINTS,
    )


#: Who reads each shape of document when the task names no reader.
_AUDIENCES = {"policy": "all staff and contractors", "procedure": "the people who carry it out",
              "plan": "management and the owners it names", "register": "the register's owners and the auditors",
              "report": "management", "checklist": "the people who use it"}
_STEPS = {"policy": _policy, "procedure": _procedure, "plan": _plan, "register": _register, "report": _report,
          "checklist": _checklist}
#: What every generic document says it does not know yet.
UNKNOWN = f"The workspace's memories and files say nothing more on this: {TBC}."
