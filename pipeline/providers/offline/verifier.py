"""The offline verifier: two structural checks, and nothing a language model would do.

It reads nothing but the brief, the step index and the draft (docs/verifier-contract.md), and it
checks exactly `CHECKS`: that the draft is not empty, and that it mentions its step's topic (a
word of the step's title). It does not read the draft against the content spec or the judgments:
a draft that contradicts the brief, or leaves out what its step requires, passes here. Framework
citations are checked apart, by the mechanical citation gate that runs on every draft whatever the
verifier. Because this is not a model, a step it lets through is badged `checked`, never `passed`
(the offline provider declares `language_model = False`), and the badge's explanation carries what
these checks catch on the calibration corpus (pipeline/calibration/offline.py).
"""
from __future__ import annotations

import json

from pipeline.schemas import Brief

from pipeline.words import stems

#: What this verifier checks, as the record says it: the whole of it.
CHECKS = ("the draft is not empty", "the draft mentions its step's topic (a word of the step's title)")


def verdict(brief: Brief, step_index: int, draft: str) -> dict:
    """The verdict object for one draft: an issue per structural check it fails, none otherwise."""
    step = brief.step(step_index)
    issues = []
    if not draft.strip():
        issues.append({"type": "step_contract", "quote": "",
                       "detail": f"Structural check (offline engine, no language model): the draft for step "
                                 f"{step_index} is empty."})
    else:
        topic = stems(step.title)
        if topic and not topic & stems(draft):
            issues.append({"type": "step_contract", "quote": "",
                           "detail": f"Structural check (offline engine, no language model): the draft never "
                                     f"mentions its step's topic ({step.title})."})
    return {"pass": not issues, "issues": issues}


def verdict_text(brief: Brief, step_index: int, draft: str) -> str:
    """The verdict as the JSON text a model would reply with."""
    return json.dumps(verdict(brief, step_index, draft), ensure_ascii=False)
