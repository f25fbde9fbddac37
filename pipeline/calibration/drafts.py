"""What a calibration draft is: a step draft, the brief it was written from, and its ground truth
(clean, or the one violation planted in it). `corpus.py` gathers the clean ones and has
`mutations.py` plant the violations; both build on these.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from pipeline.schemas import Brief

CLEAN = "clean"


@dataclass(frozen=True)
class Truth:
    """What a draft is: clean, or which violation was planted and where.

    `changed` is the text the violation put into the draft (for a removed item, the text taken
    out); `context` is the line of the draft around it; `reported_as` lists the verdict issue
    types that report this violation.
    """

    kind: str = CLEAN
    detail: str = ""
    changed: str = ""
    context: str = ""
    reported_as: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        return self.kind == CLEAN

    def as_json(self) -> dict:
        return {"kind": self.kind, "detail": self.detail, "changed": self.changed, "context": self.context,
                "reported_as": list(self.reported_as)}


@dataclass(frozen=True)
class CorpusDraft:
    """One step draft to verify, with the brief it was written from and its ground truth."""

    draft_id: str
    source: str          # "seed" or "workspace"
    case: str            # the seed case id, or "run"
    framework: str
    doc_type: str
    brief: Brief
    step: int
    text: str
    truth: Truth = field(default_factory=Truth)
    #: for seed drafts: content-spec item -> the line that delivers it
    items: tuple[tuple[str, str], ...] = ()
    #: for seed drafts: one sentence contradicting each judgment
    contradictions: tuple[str, ...] = ()

    def as_json(self) -> dict:
        return {"draft_id": self.draft_id, "source": self.source, "case": self.case, "framework": self.framework,
                "doc_type": self.doc_type, "brief": self.brief.model_dump(mode="json", exclude_none=True),
                "step": self.step, "text": self.text, "truth": self.truth.as_json()}


def draft_id(brief: Brief, step: int, text: str) -> str:
    """A stable id: the same brief, step and text always give the same id."""
    body = json.dumps([brief.model_dump(mode="json", exclude_none=True), step, text], sort_keys=True, ensure_ascii=False)
    return "d" + hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]
