"""The requirement trace's recall and false "not met" rate on tasks with explicit asks.

    .venv/bin/python bench/requirement_trace.py [--show ID]

Each case of tests/fixtures/requirement-trace/cases.json (written by make_cases.py beside it) is a
task, the document a run released for it and, for each explicit ask of the task, whether that
document meets it, labelled by hand. The case runs through the real orchestrator with the scripted
provider: the planner's brief lists one requirement per labelled ask (or none, for the cases of a
brief that traced nothing, which the trace must then record as dropped or find in the document),
the executors release the case's steps and the verifier passes them. The figures:

- recall: of the asks the document does not meet, the share the run's `requirements_traced`
  reports as not met (unmet, declined or dropped);
- false "not met": of the asks the document meets, the share reported as not met.

An ask is looked up in the trace by its words: the requirements whose text holds them.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline import events as ev  # noqa: E402
from pipeline.citations import extract_citations  # noqa: E402
from pipeline.frameworks import load_packs  # noqa: E402
from pipeline.context import Context  # noqa: E402
from pipeline.orchestrator import Orchestrator  # noqa: E402
from pipeline.providers.scripted import ScriptedProvider  # noqa: E402
from pipeline.topology import ROLES, parse_shorthand  # noqa: E402

CASES = ROOT / "tests" / "fixtures" / "requirement-trace" / "cases.json"
PASS = json.dumps({"pass": True, "issues": []})


def approved(case: dict) -> list[dict]:
    """The citations the case's document writes, as the brief approves them (titles from the packs)."""
    packs, found = load_packs(), {}
    for step in case["steps"]:
        for f in extract_citations(step["content"]):
            entry = packs[f.pack_key].lookup(f.ref) if f.pack_key in packs else None
            if entry is not None:
                found.setdefault((f.pack_key, f.ref), {"framework": packs[f.pack_key].name, "ref": f.ref,
                                                       "title": entry.title})
    return [{"id": f"C{n}", **c} for n, c in enumerate(found.values(), 1)]


def brief_for(case: dict) -> dict:
    steps = [{"index": n, "title": s["title"], "content_spec": f"Write the {s['title'].lower()} part."}
             for n, s in enumerate(case["steps"], 1)]
    brief = {"task": case["task"], "title": case["title"], "judgments": [], "citations": approved(case),
             "steps": steps}
    if case["traced"]:
        every = list(range(1, len(steps) + 1))
        brief["requirements"] = [{"id": f"R{n}", "text": ask, "steps": every} for n, ask in enumerate(case["asks"], 1)]
    return brief


def script_for(case: dict) -> dict:
    return {"planner": [json.dumps(brief_for(case))],
            "steps": {str(n): {"executor": [s["content"]], "verifier": [PASS]} for n, s in enumerate(case["steps"], 1)},
            "summarizer": ["A recap."]}


async def traced(case: dict) -> list[dict]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "script.json"
        path.write_text(json.dumps(script_for(case)))
        provider = ScriptedProvider(path)
        topology = parse_shorthand(f"scripted:{path}")
        orchestrator = Orchestrator(Context(task=case["task"]), topology, {role: provider for role in ROLES})
        events = [e async for e in orchestrator.events()]
    return next((e.data["requirements"] for e in events if e.type == ev.REQUIREMENTS_TRACED), [])


def reported_not_met(requirements: list[dict], ask: str) -> bool | None:
    """Whether the trace reports `ask` as not met; None when no requirement holds its words."""
    found = [r for r in requirements if ask.lower() in r["text"].lower()]
    if not found:
        return None
    return any(r["status"] != "met" for r in found)


def score(cases: list[dict], show: str | None) -> dict:
    counts = {"unmet": 0, "caught": 0, "met": 0, "false": 0, "lost": 0}
    for case in cases:
        requirements = asyncio.run(traced(case))
        misses = []
        for ask, met in case["asks"].items():
            said = reported_not_met(requirements, ask)
            if said is None:
                counts["lost"] += 1
            if met:
                counts["met"] += 1
                counts["false"] += bool(said)
                if said:
                    misses.append(f"met but reported not met: {ask!r}")
            else:
                counts["unmet"] += 1
                counts["caught"] += bool(said)
                if not said:
                    misses.append(f"not met but not reported: {ask!r}")
        print(f"{'ok ' if not misses else 'MISS'} {case['id']}")
        for miss in misses:
            print(f"       {miss}")
        if show == case["id"] or (show == "all" and misses):
            for r in requirements:
                print(f"       {r['id']} {r['status']:8} {r['text']!r} {r['detail']}")
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", help="print the trace of the case with this id ('all': of every case with a miss)")
    args = parser.parse_args()
    cases = json.loads(CASES.read_text(encoding="utf-8"))
    c = score(cases, args.show)
    recall = c["caught"] / max(1, c["unmet"])
    false = c["false"] / max(1, c["met"])
    print(f"\n{len(cases)} tasks, {c['unmet'] + c['met']} labelled asks ({c['unmet']} not met by their document, "
          f"{c['met']} met)")
    print(f"Recall of asks not met: {c['caught']}/{c['unmet']} = {100 * recall:.1f}%")
    print(f"False 'not met': {c['false']}/{c['met']} = {100 * false:.1f}%")
    print(f"Asks no requirement names: {c['lost']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
