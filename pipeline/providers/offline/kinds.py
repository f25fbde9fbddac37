"""The document kinds the offline engine writes, read from the JSON files in `data/`.

`data/kinds/` holds one file per kind of document (its name, the task phrases that signal it, its
reader, the facts it needs, its behaviour flags and its steps); `data/shapes/` holds the shape a
document of no known kind takes from its head noun (a policy, a register...), with `{head}` and
`{Head}` standing for that noun; `data/steps.json` holds steps several kinds share, which a kind
names as "@name". A kind may reuse another kind's step as "<kind>:<step title>". See
docs/offline-engine.md.
"""
from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

from .templates import DocType, StepTemplate

DATA_DIR = Path(__file__).parent / "data"
#: The fields JSON gives as lists, which the frozen shapes hold as tuples.
_TUPLES = {shape: {f.name for f in fields(shape) if f.type.startswith("tuple")} for shape in (DocType, StepTemplate)}


def _tuples(shape: type, raw: dict) -> dict:
    return {name: tuple(map(tuple, value) if name == "table" else value)
            for name, value in raw.items() if name in _TUPLES[shape]}


def _step(raw: dict) -> StepTemplate:
    return StepTemplate(**{**raw, **_tuples(StepTemplate, raw)})


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


SHARED_STEPS = {name: _step(raw) for name, raw in _read(DATA_DIR / "steps.json").items()}
OPEN_POINTS = SHARED_STEPS["open_points"]


def _steps(raw: list, kinds: dict[str, dict]) -> tuple[StepTemplate, ...]:
    """A kind's steps, with shared steps and other kinds' steps looked up by name."""
    steps = []
    for entry in raw:
        if isinstance(entry, dict):
            steps.append(_step(entry))
        elif entry.startswith("@"):
            steps.append(SHARED_STEPS[entry[1:]])
        else:
            kind, title = entry.split(":", 1)
            steps.append(next(s for s in _steps(kinds[kind]["steps"], kinds) if s.title == title))
    return tuple(steps)


def _kind(raw: dict, kinds: dict[str, dict]) -> DocType:
    return DocType(**{**raw, **_tuples(DocType, raw), "steps": _steps(raw["steps"], kinds)})


# Every kind of document by its key, as its file gives it (steps may name another kind's), then built.
_RAW_KINDS = {path.stem: _read(path) for path in sorted((DATA_DIR / "kinds").glob("*.json"))}
KINDS = {key: _kind(kind, _RAW_KINDS) for key, kind in _RAW_KINDS.items()}
#: The shape a document of no known kind takes, by the family its head noun belongs to.
SHAPES = {path.stem: _read(path) for path in sorted((DATA_DIR / "shapes").glob("*.json"))}


def shape_steps(family: str, head: str) -> tuple[StepTemplate, ...]:
    """The steps of a document whose head noun is `head`, in its family's shape."""
    def named(value):
        if isinstance(value, str):
            return value.replace("{head}", head).replace("{Head}", head[:1].upper() + head[1:])
        if isinstance(value, dict):
            return {key: named(v) for key, v in value.items()}
        return [named(v) for v in value] if isinstance(value, list) else value
    return _steps(named(SHAPES[family]["steps"]), _RAW_KINDS)
