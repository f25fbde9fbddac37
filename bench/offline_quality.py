"""Score the offline engine's documents against per-task expectations, and time a large run.

    .venv/bin/python bench/offline_quality.py [--task ID] [--show ID] [--speed]

Tasks come from tests/fixtures/offline/tasks*.json (tasks-new-kinds.json: kinds of document the
engine had no template for, their expectations written before the engine was changed for them).
Workspaces are built as pipeline Contexts from tests/fixtures/offline/ (memories written as
sentences; CSV files as their raw text, XLSX files as one Markdown table per sheet, DOCX files as
paragraph lines and Markdown tables, as the extraction layer hands them over). Each task runs
through the real Orchestrator with the offline provider in all four roles, and its released
document is checked mechanically; every expectation met is one point. `--speed` times a 6-step
run in a workspace of 50 files.
"""
from __future__ import annotations

import argparse
import ast
import asyncio
import hashlib
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline import events as ev  # noqa: E402
from pipeline.context import Context, Document  # noqa: E402
from pipeline.frameworks import load_packs  # noqa: E402
from pipeline.orchestrator import Orchestrator  # noqa: E402
from pipeline.providers.offline import OfflineProvider  # noqa: E402
from pipeline.providers.offline.reading import read  # noqa: E402
from pipeline.topology import ROLES, parse_shorthand  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "offline"
TBC = "to be confirmed"
#: Events whose `warnings` are run warnings (the brief check, and the task check once it is wired in).
WARNING_EVENTS = {ev.BRIEF_CHECKED, ev.TASK_CHECKED}


def _assigned(path: Path, name: str):
    """The literal value of a module-level assignment, read without importing the module."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise KeyError(f"{name} not found in {path}")


def _file_path(spec: str, folder: Path) -> Path:
    return ROOT / spec[len("repo:"):] if spec.startswith("repo:") else folder / spec


def load_workspace(key: str) -> dict:
    """A fixture workspace: name, enabled framework keys, memories and documents."""
    folder = FIXTURES / key
    data = json.loads((folder / "workspace.json").read_text(encoding="utf-8"))
    if "memories_from" in data:
        data["memories"] = _assigned(ROOT / data["memories_from"], "MEMORIES")
    if "frameworks_from" in data:
        data["frameworks"] = _assigned(ROOT / data["frameworks_from"], "FRAMEWORKS")
    docs = []
    for item in data.get("files", []):
        text = _file_path(item["path"], folder).read_text(encoding="utf-8")
        docs.append(Document(item["name"], text, hashlib.sha256(text.encode()).hexdigest(), item.get("kind", "file")))
    data["documents"] = docs
    return data


def context_for(workspace: dict, task: str) -> Context:
    packs = load_packs()
    docs = sorted(workspace["documents"], key=lambda d: (d.name, d.sha256))
    return Context(task=task, memories=tuple(workspace["memories"]),
                   files=tuple(d for d in docs if d.kind == "file"),
                   uploads=tuple(d for d in docs if d.kind == "upload"),
                   enabled_frameworks=tuple(packs[k].name for k in workspace["frameworks"]),
                   workspace_name=workspace["name"])


async def run(ctx: Context) -> dict:
    """One run through the orchestrator with the offline engine in every role."""
    provider = OfflineProvider()
    orchestrator = Orchestrator(ctx, parse_shorthand("offline"), {role: provider for role in ROLES})
    events = [event async for event in orchestrator.events()]
    released = [e.data for e in events if e.type == ev.STEP_RELEASED]
    warnings = [w for e in events if e.type in WARNING_EVENTS for w in e.data.get("warnings", [])]
    findings = [f for e in events if e.type == ev.SUMMARY_READY for f in e.data.get("findings", [])]
    traced = next((e.data["requirements"] for e in events if e.type == ev.REQUIREMENTS_TRACED), [])
    return {"brief": orchestrator.brief, "document": "\n\n".join(r["content"] for r in released),
            "requirements": traced,
            "steps": len(released), "final": events[-1].type, "warnings": warnings,
            "decline": next((e.data["reason"] for e in events if e.type == ev.RUN_DECLINED), None),
            "recap_findings": findings}


def _lines_with(document: str, text: str) -> list[str]:
    return [line for line in document.splitlines() if text.lower() in line.lower()]


def _cited(result: dict, ref: str) -> bool:
    """The ref is written in the document and the brief approves it or an entry it belongs to."""
    brief = result["brief"]
    written = re.search(r"(?<![\w.])" + re.escape(ref) + r"(?![\w]|\.\d)", result["document"])
    approved = brief is not None and any(ref == c.ref or ref.startswith(c.ref + "-") or ref.startswith(c.ref + "(")
                                         or ref.startswith(c.ref + ".") for c in brief.citations)
    return bool(written and approved)


def _declined(result: dict) -> str | None:
    """The reason a declined run gives (its run_declined event's, else its brief's), None when it was not declined."""
    brief = result["brief"]
    if result["decline"] is not None:
        return result["decline"]
    return brief.decline_reason if brief is not None and brief.declined and not result["steps"] else None


def _row_with(table_rows: list[str], cells: list[str]) -> bool:
    """One table row holds every one of `cells`, each as a whole cell's text or part of one."""
    return any(all(c.lower() in row.lower() for c in cells) for row in table_rows)


def checks(expect: dict, result: dict) -> list[tuple[str, bool]]:
    """(description, met) for every expectation of one task. A task that must be declined is met
    when the run releases nothing and its reason says each of the words expected."""
    if "declined" in expect:
        reason = _declined(result)
        return [("run declined", reason is not None)] + [
            (f"reason says {s!r}", reason is not None and s.lower() in reason.lower()) for s in expect["declined"]]
    doc, brief = result["document"], result["brief"]
    brief_text = brief.model_dump_json() if brief else ""
    judgments = "\n".join(brief.judgments) if brief else ""
    frameworks = {c.framework for c in brief.citations} if brief else set()
    rows = [line for line in doc.splitlines() if line.lstrip().startswith("|")]
    table_rows = "\n".join(rows)
    out = [("run completed", result["final"] == ev.RUN_COMPLETED)]
    out += [(f"contains {s!r}", s.lower() in doc.lower()) for s in expect.get("contains", [])]
    out += [(f"absent {s!r}", s.lower() not in doc.lower()) for s in expect.get("absent", [])]
    out += [(f"table row has {s!r}", s.lower() in table_rows.lower()) for s in expect.get("rows", [])]
    out += [(f"one table row has {' + '.join(map(repr, cells))}", _row_with(rows, cells))
            for cells in expect.get("row_with", [])]
    out += [(f"cites {r}", _cited(result, r)) for r in expect.get("cited", [])]
    out += [(f"cites {f}", f in frameworks) for f in expect.get("frameworks", [])]
    out += [(f"does not cite {f}", f not in frameworks) for f in expect.get("not_frameworks", [])]
    out += [(f"no placeholder beside {s!r}", bool(_lines_with(doc, s)) and
             not any(TBC in line.lower() for line in _lines_with(doc, s))) for s in expect.get("no_placeholder", [])]
    out += [(f"judgments mention {s!r}", s.lower() in judgments.lower()) for s in expect.get("judgments", [])]
    out += [(f"brief lacks {s!r}", s.lower() not in brief_text.lower()) for s in expect.get("brief_absent", [])]
    out += [(f"run warning names {s!r}", any(s in w for w in result["warnings"])) for s in expect.get("warnings", [])]
    title = (brief.title or "") if brief else ""
    out += [(f"title has {s!r}", s.lower() in title.lower()) for s in expect.get("title", [])]
    for words, allowed in expect.get("requirements", {}).items():
        statuses = [r["status"] for r in result["requirements"] if words.lower() in r["text"].lower()]
        out.append((f"requirement {words!r} is {' or '.join(allowed)}", bool(statuses) and all(s in allowed for s in statuses)))
    if expect.get("recap_clean"):
        out.append(("recap has no finding", not result["recap_findings"]))
    return out


def score(tasks: list[dict], show: str | None = None) -> tuple[int, int]:
    workspaces: dict[str, dict] = {}
    met_total = all_total = 0
    for expect in tasks:
        workspace = workspaces.setdefault(expect["workspace"], load_workspace(expect["workspace"]))
        result = asyncio.run(run(context_for(workspace, expect["task"])))
        results = checks(expect, result)
        met = sum(ok for _, ok in results)
        met_total += met
        all_total += len(results)
        print(f"{met:3d}/{len(results):<3d} {expect['id']}: {expect['task']}")
        for what, ok in results:
            if not ok:
                print(f"          missed: {what}")
        if show == expect["id"]:
            print("\n--- judgments ---\n" + "\n".join(result["brief"].judgments if result["brief"] else []))
            print("\n--- document ---\n" + result["document"] + "\n--- warnings ---\n" + "\n".join(result["warnings"]))
    print(f"\nTotal: {met_total}/{all_total} expectations met "
          f"({100 * met_total / max(1, all_total):.1f}%) over {len(tasks)} tasks "
          f"in {len({t['workspace'] for t in tasks})} workspaces")
    return met_total, all_total


def speed_workspace(files: int = 50) -> dict:
    """The kestrel workspace padded to `files` documents with notes and inventory exports."""
    workspace = load_workspace("kestrel")
    docs = list(workspace["documents"])
    paragraph = ("Team notes on operating the analytics platform: deployments happen twice a week after review, "
                 "on-call engineers rotate weekly, and every change is tracked in the ticketing system. ")
    for n in range(files - len(docs)):
        if n % 3 == 0:
            rows = "\n".join(f"HW-{n:02d}{r:03d},Laptop {r},Hardware,Team {r % 7},Stockholm,Internal,2025-10-01"
                             for r in range(120))
            text = "Asset ID,Asset name,Type,Owner,Location,Classification,Last review\n" + rows
            name = f"inventory-export-{n:02d}.csv"
        else:
            text = f"# Operations note {n}\n\n" + "\n\n".join(paragraph * 3 for _ in range(12))
            name = f"ops-note-{n:02d}.docx"
        docs.append(Document(name, text, hashlib.sha256(text.encode()).hexdigest(), "file"))
    workspace["documents"] = docs
    return workspace


def speed(task: str, repeats: int = 3) -> None:
    workspace = speed_workspace()
    timings, steps = [], 0
    for _ in range(repeats):
        read.cache_clear()  # a cold run: the engine reads the workspace afresh, as for a new task
        ctx = context_for(workspace, task)
        started = time.perf_counter()
        result = asyncio.run(run(ctx))
        timings.append(time.perf_counter() - started)
        steps = result["steps"]
    print(f"Speed: {len(workspace['documents'])} files, {steps} steps, task {task!r}: "
          f"best {min(timings):.3f} s, worst {max(timings):.3f} s over {repeats} runs")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", help="run only the task with this id")
    parser.add_argument("--show", help="print the judgments and document of the task with this id")
    parser.add_argument("--speed", action="store_true", help="also time a 6-step run in a 50-file workspace")
    parser.add_argument("--speed-task", default="Build our asset register from the inventory exports")
    args = parser.parse_args()
    tasks = [t for path in sorted(FIXTURES.glob("tasks*.json")) for t in json.loads(path.read_text(encoding="utf-8"))]
    if args.task:
        tasks = [t for t in tasks if t["id"] == args.task]
    score(tasks, args.show or args.task)
    if args.speed:
        speed(args.speed_task)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
