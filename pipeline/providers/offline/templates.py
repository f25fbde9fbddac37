"""The shapes the offline engine's data is written in: document types and their step templates."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class StepTemplate:
    """One step of a document type's plan and the skeleton of its draft.

    `topics` name entries of topics.TOPICS whose approved refs this step must cite; "@subject"
    means the topics of the document's subject (e.g. the policy an announcement email is about).
    Text fields may use {org}, {scope}, {audience} and {subject}.
    """

    title: str
    spec: str
    topics: tuple[str, ...] = ()
    intro: str = ""
    bullets: tuple[str, ...] = ()
    table: tuple[tuple[str, ...], ...] = ()  # header row first, then template rows
    closing: str = ""


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
    #: (what the document needs to know, words that show the context says it); unmet -> "to be confirmed".
    needs: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: True when the document is about another subject (an email about a policy): the planner
    #: then also classifies the subject and cites its topics.
    has_subject: bool = False
    subject_topics: tuple[str, ...] = field(default=())
