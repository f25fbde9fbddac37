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

from .kinds import SHAPES, shape_steps
from .templates import TBC, DocType

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
    shape = SHAPES[family]
    return DocType(f"kind_{family}", name, {}, shape["audience"], shape_steps(family, kind.head), has_subject=True,
                   subject_topics=tuple(shape.get("subject_topics", ())), subject_from_task=True,
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


#: What every generic document says it does not know yet.
UNKNOWN = f"The workspace's memories and files say nothing more on this: {TBC}."
