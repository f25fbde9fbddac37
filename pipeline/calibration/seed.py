"""The shipped seed corpus: realistic briefs and faithful step drafts across the five frameworks.

Each JSON file in `data/` is one case: a brief, one faithful draft per step, and the facts the
violation makers need that cannot be derived from the text: a sentence contradicting each
judgment, and for each draft the line where each item its content spec requires starts (a
heading, a table row, a list item or a paragraph), so that exactly that item can be removed.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pipeline.schemas import Brief

DATA_DIR = Path(__file__).resolve().parent / "data"


@dataclass(frozen=True)
class SeedDraft:
    step: int
    text: str
    #: content-spec item -> the start of the line that delivers it
    items: dict[str, str]


@dataclass(frozen=True)
class SeedCase:
    id: str
    framework: str
    doc_type: str
    brief: Brief
    #: one sentence contradicting each judgment, in judgment order
    contradictions: tuple[str, ...]
    drafts: tuple[SeedDraft, ...]


def _case(data: dict) -> SeedCase:
    return SeedCase(id=data["id"], framework=data["framework"], doc_type=data["doc_type"],
                    brief=Brief.model_validate(data["brief"]), contradictions=tuple(data.get("contradictions", ())),
                    drafts=tuple(SeedDraft(d["step"], d["text"], dict(d.get("items", {}))) for d in data["drafts"]))


@lru_cache(maxsize=1)
def seed_cases() -> tuple[SeedCase, ...]:
    """Every shipped case, in file-name order."""
    return tuple(_case(json.loads(path.read_text(encoding="utf-8"))) for path in sorted(DATA_DIR.glob("*.json")))
