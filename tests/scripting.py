"""Helpers to write scripted-provider files for tests."""
from __future__ import annotations

import json
from pathlib import Path

from pipeline.requirements import read_asks

PASS = json.dumps({"pass": True, "issues": []})


def fail(detail: str = "The draft misses what the content spec requires.", kind: str = "step_contract") -> str:
    return json.dumps({"pass": False, "issues": [{"type": kind, "detail": detail, "quote": ""}]})


def traced(task: str, n_steps: int) -> list[dict]:
    """A requirement per explicit ask of `task`, carried by every step: the brief of a planner that
    traces the task whole, so that a run of it is never sent back (docs/verifier-contract.md)."""
    steps = list(range(1, n_steps + 1))
    return [{"id": f"R{n}", "text": ask.text, "steps": steps} for n, ask in enumerate(read_asks(task), 1)]


def brief(n_steps: int = 2, citations: list[dict] | None = None, task: str | None = None) -> dict:
    """A two-step brief; with `task`, its requirements trace that task's asks (otherwise the
    access-control note's, and a run of another task sends it back once)."""
    kind = next((a.text for a in read_asks(task) if a.kind == "document"), None) if task else None
    return {
        "task": "Draft an access-control note",
        "title": kind[:1].upper() + kind[1:] if kind else "Access-control note",
        "requirements": traced(task, n_steps) if task else [
            {"id": "R1", "text": "an access-control note", "steps": list(range(1, n_steps + 1))}],
        "judgments": ["Audience: all staff.", "Scope: the Paris office only."],
        "citations": citations if citations is not None else [
            {"id": "C1", "framework": "ISO/IEC 27001:2022", "ref": "A.5.15", "title": "Access control"}],
        "steps": [{"index": i, "title": f"Part {i}", "content_spec": f"Deliver part {i} of the note."}
                  for i in range(1, n_steps + 1)],
    }


def declined_brief(reason: str = "This task asks for a translation, which this planner cannot do faithfully; "
                                  "connect a model that can.") -> dict:
    """A brief that declines the task: a reason, and no step."""
    return {"task": "Translate the policy into French", "decline_reason": reason, "steps": []}


def script(steps: dict[int, dict], *, planner: list | None = None, summarizer: list | None = None,
           n_steps: int | None = None, task: str | None = None) -> dict:
    n = n_steps if n_steps is not None else len(steps)
    return {
        "planner": planner if planner is not None else [json.dumps(brief(n, task=task))],
        "steps": {str(k): v for k, v in steps.items()},
        "summarizer": summarizer if summarizer is not None else ["A short recap."],
    }


def write(tmp_path: Path, data: dict, name: str = "script.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path
