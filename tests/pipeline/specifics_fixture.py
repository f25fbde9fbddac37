"""The planted workspace of tests/fixtures/specifics/workspace.json as pipeline objects."""
from __future__ import annotations

import json
from pathlib import Path

from pipeline.context import Context, Document

FIXTURE = Path(__file__).parent.parent / "fixtures" / "specifics" / "workspace.json"


def planted() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def planted_context(data: dict) -> Context:
    return Context(task=data["task"], memories=tuple(data["memories"]),
                   files=tuple(Document(f["name"], f["text"]) for f in data["files"]))


def planted_brief(data: dict) -> dict:
    return {"task": data["task"], "judgments": data["judgments"], "citations": [],
            "steps": [{"index": int(k), "title": f"Part {k}", "content_spec": f"Deliver part {k}."}
                      for k in sorted(data["drafts"])]}
