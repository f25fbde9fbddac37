"""The shapes the offline engine's data is written in: document types and their step templates."""
from __future__ import annotations

from dataclasses import dataclass, field

#: What a draft says where the context gives no value.
TBC = "to be confirmed"
#: How a step's title reads when its table is split over several steps: "Applicability table, part 2 of 3".
PART_MARK = ", part "


@dataclass(frozen=True)
class StepTemplate:
    """One step of a document type's plan and the skeleton of its draft.

    `topics` name entries of topics.TOPICS whose approved refs this step must cite; "@subject"
    means the topics of the document's subject (e.g. the policy an announcement email is about).
    Text fields may use the placeholders of fields.py ({org}, {scope}, {dpo}, {security_lead}...).
    `section` names a part built from the workspace (sections.py): "register:<kind>" fills the
    table with the rows of a matching file, "requirements", "facts", "practices", "incident" and
    "timeline" are written from the requirements, facts and documents the context gives.
    """

    title: str
    spec: str
    topics: tuple[str, ...] = ()
    intro: str = ""
    bullets: tuple[str, ...] = ()
    table: tuple[tuple[str, ...], ...] = ()  # header row first, then template rows
    closing: str = ""
    section: str = ""


@dataclass(frozen=True)
class DocType:
    """A kind of compliance document the offline engine knows how to plan and draft."""

    key: str
    name: str
    #: Task phrases that signal this type, with weights; the form of a document (an email, a
    #: training plan) outweighs its subject, which is why those phrases weigh more.
    keywords: dict[str, int]
    audience: str
    steps: tuple[StepTemplate, ...]
    #: Facts the document needs (fields.py names); those no source gives become open points.
    needs: tuple[str, ...] = ()
    #: True when the document is about another subject (an email about a policy): the planner
    #: then also classifies the subject and cites its topics.
    has_subject: bool = False
    subject_topics: tuple[str, ...] = field(default=())
    #: The frameworks (pack keys) this kind of document belongs to, when the task names none;
    #: empty: every enabled framework.
    frameworks: tuple[str, ...] = ()
    #: False for documents that cite no framework of their own accord (a questionnaire's answers, a
    #: letter to a customer): only references the task itself names are approved.
    cites: bool = True
    #: True when the task's own topics say what the document covers (a mapping, a gap assessment,
    #: a document of no known kind), beside the template steps' topics.
    follows_task_topics: bool = False
    #: True when the document answers questions that may quote a framework reference (a
    #: questionnaire): each such reference is approved, since a question is written whole.
    quotes_questions: bool = False
    #: True when the words before the kind's name say whose it is, not which kind it is (a
    #: "council questionnaire" is a questionnaire): the kind is then told by its head noun alone.
    open_modifiers: bool = False
    #: True when what the document is about is the task's own topic ("an email announcing the new
    #: policy"), not information security in general.
    subject_from_task: bool = False
    #: What a document built for one task is about, in the task's words (generic.py); "" otherwise.
    subject: str = ""
    #: The kinds this one becomes in a workspace that processes data for others (catalogue.variant_of):
    #: "processor" for the processor's own document, "both" for a controller that is also a processor.
    variants: dict[str, str] = field(default_factory=dict)
