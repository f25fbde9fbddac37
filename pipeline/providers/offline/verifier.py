"""The offline verifier: a pass unless the draft fails a cheap structural check.

It reads nothing but the brief, the step index and the draft (docs/verifier-contract.md). Citations are not checked
here: the orchestrator runs the mechanical citation gate on every draft separately.
"""
from __future__ import annotations

import json

from pipeline.schemas import Brief

from pipeline.words import stems


def verdict(brief: Brief, step_index: int, draft: str) -> dict:
    """The verdict object for one draft."""
    step = brief.step(step_index)
    issues = []
    if not draft.strip():
        issues.append({"type": "step_contract", "detail": f"The draft for step {step_index} is empty.", "quote": ""})
    else:
        topic = stems(step.title)
        if topic and not topic & stems(draft):
            issues.append({"type": "step_contract",
                           "detail": f"The draft does not mention the step's topic ({step.title}) at all.",
                           "quote": ""})
    return {"pass": not issues, "issues": issues}


def verdict_text(brief: Brief, step_index: int, draft: str) -> str:
    """The verdict as the JSON text a model would reply with."""
    return json.dumps(verdict(brief, step_index, draft), ensure_ascii=False)
