"""How often a real model hands back its instructions' examples instead of words of its own.

    make model-server &
    .venv/bin/python bench/parrot.py planner [--base-url URL] [--runs 12]
    .venv/bin/python bench/parrot.py verifier bench/results/calibration-gemma-3-270m.json

`planner`: planner-only runs (the other roles offline, as `bench/realmodel.py --planner-only`)
on tasks of several document kinds, none of them the prompt's example; every planner reply,
accepted or not, is read for values copied from the example objects of `pipeline/prompts/planner.md`
as it is now (the prompt the runs used). `verifier`: every call of a calibration report's JSON (the
page's JSON download, which has every call), read for issues that copy what
`pipeline/prompts/verifier.md` says an issue's detail and quote hold (an example value or a
description), as the prompt was when the report was taken (`--prompt-rev`, default the current
file).

A value is copied when it is one of the example's values, word for word, or its first four words
or more, or nearly so (the rule `pipeline/parsing.py` refuses a slot by). The example's
values of fewer than four words (a heading such as "Rules") are counted apart, as copied headings:
a short heading can be the model's own.
"""
from __future__ import annotations

import argparse
import io
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.parsing import _begins_a_slot, _words  # noqa: E402  (after the path is set)
from pipeline.requests import issue_field_examples  # noqa: E402

#: Held-out tasks: document kinds the prompt's example is not.
TASKS = [
    "Draft an acceptable use policy for company laptops at a 30-person design studio.",
    "Write a supplier security review procedure for a small logistics firm.",
    "Draft a backup and restore policy for a dental practice.",
    "Write a short information security awareness training plan for new hires.",
    "Draft a vulnerability management procedure for a SaaS startup.",
    "Write a data retention schedule overview for a recruitment agency.",
    "Draft an email to all staff announcing the new multi-factor authentication rule.",
    "Write a business continuity overview for a three-site retail chain.",
    "Draft a change management procedure for an IT team of five.",
    "Write a mobile device policy for field engineers.",
    "Draft a physical security policy for a small office with a server room.",
    "Write an access review procedure for a payroll system.",
]


def example_values(prompt: str) -> list[str]:
    """Every string value of the JSON example objects in a prompt (one object per line)."""
    values = []
    for line in prompt.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            values += list(_strings(json.loads(line)))
        except json.JSONDecodeError:
            values += re.findall(r'"(?:[a-z_]+)":\s*"([^"]+)"', line)
    return values


#: Values a brief rightly shares with any example: a citation's id, framework name and reference
#: come from the framework reference, not from the example's words.
NOT_COPIES = ("id", "framework", "ref", "index")


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in NOT_COPIES:
                yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _reply_strings(raw: str) -> list[str]:
    try:
        return list(_strings(json.loads(raw)))
    except (json.JSONDecodeError, TypeError):  # a reply cut short: its complete string values
        return [value for key, value in re.findall(r'"([a-z_]+)":\s*"([^"]*)"', raw or "") if key not in NOT_COPIES]


class Copies:
    """Which of a reply's values copy the example's: long values by the slot rule, headings exactly."""

    def __init__(self, examples: list[str], ignore: set[str] = frozenset()):
        words = {_words(v) for v in examples} - {""}
        # Keys of the JSON shape ("steps", "narrow") are not the example's words.
        words -= {_words(v) for v in ignore}
        self.long = {w for w in words if w.count(" ") >= 3}
        self.short = words - self.long

    def text(self, values: list[str]) -> list[str]:
        return [v for v in values if _begins_a_slot(_words(v), self.long)]

    def headings(self, values: list[str]) -> list[str]:
        return [v for v in values if _words(v) in self.short]


def rate(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.0%})" if whole else "0/0"


def planner(args) -> int:
    if args.replies_from:
        replies = json.loads(Path(args.replies_from).read_text(encoding="utf-8"))
        return _planner_figures(replies, args.runs)
    sys.path.insert(0, str(ROOT / "bench"))
    from realmodel import setup_django

    with tempfile.TemporaryDirectory() as tmp:
        setup_django(Path(tmp))
        from django.core.management import call_command

        from beyond_site.runs.models import Run
        from beyond_site.workspaces.models import Workspace
        from tests.realmodel import rules

        topology = {"planner": {**rules.role(args.base_url, "planner"), "max_tokens": rules.MAX_TOKENS["planner"]}}
        topology.update({name: {"provider": "offline"} for name in ("executor", "verifier", "summarizer")})
        Workspace.objects.create(slug="bench", name="Bench")
        for n in range(args.runs):
            call_command("beyond_run", "--workspace", "bench", "--task", TASKS[n % len(TASKS)],
                         "--topology", json.dumps(topology), "--json", stdout=io.StringIO())
            print(f"run {n + 1}/{args.runs} done", file=sys.stderr, flush=True)
        replies = []
        for run in Run.objects.order_by("pk"):
            for event in run.events.filter(type__in=("brief_ready", "planner_rejected")).order_by("pk"):
                values = (list(_strings(event.data["brief"])) if event.type == "brief_ready"
                          else _reply_strings(event.data.get("raw") or ""))
                replies.append((run.task, event.type, values))
        if args.save:
            Path(args.save).write_text(json.dumps(replies, indent=1, ensure_ascii=False), encoding="utf-8")
        return _planner_figures(replies, args.runs)


def _planner_figures(replies: list, runs: int) -> int:
    copies = Copies(example_values((ROOT / "pipeline/prompts/planner.md").read_text(encoding="utf-8")))
    text = [(task, copies.text(values)) for task, _, values in replies]
    headings = [(task, copies.headings(values)) for task, _, values in replies]
    print(f"planner replies: {len(replies)} over {runs} runs "
          f"({sum(kind == 'planner_rejected' for _, kind, _ in replies)} refused)")
    print(f"replies copying the example's text: {rate(sum(bool(c) for _, c in text), len(replies))}")
    print(f"replies copying the example's headings: {rate(sum(bool(c) for _, c in headings), len(replies))}")
    for task, copied in text:
        if copied:
            print(f"  {task[:60]!r}: {[c[:60] for c in copied]}")
    return 0


def verifier(args) -> int:
    prompt = (subprocess.run(["git", "show", f"{args.prompt_rev}:pipeline/prompts/verifier.md"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout if args.prompt_rev
              else (ROOT / "pipeline/prompts/verifier.md").read_text(encoding="utf-8"))
    # Only the issue's prose fields are the model's to write; its type is one of four words. The
    # instructions give them as example values ("detail": "...") or describe them ("detail" (...)).
    examples = list(issue_field_examples(prompt))
    copies = Copies(examples)
    report = json.loads(Path(args.report).read_text(encoding="utf-8"))
    calls = report.get("calls") or report.get("results") or []
    by_contract: dict[str, list[int]] = {}
    for call in calls:
        raw = call.get("raw") or ""
        copied = copies.text(re.findall(r'"(?:detail|quote)":\s*"([^"]*)"', raw))
        counts = by_contract.setdefault(call.get("contract", "?"), [0, 0])
        counts[0] += bool(copied)
        counts[1] += 1
    for contract, (copied, total) in sorted(by_contract.items()):
        print(f"{contract}: verdicts copying the example issue: {rate(copied, total)}")
    copied, total = (sum(c[i] for c in by_contract.values()) for i in (0, 1))
    print(f"all: {rate(copied, total)} (example values: {examples})")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="role", required=True)
    one = sub.add_parser("planner")
    one.add_argument("--base-url", default="http://127.0.0.1:8088/v1")
    one.add_argument("--runs", type=int, default=len(TASKS))
    one.add_argument("--save", metavar="FILE", help="keep every reply's values as JSON")
    one.add_argument("--replies-from", metavar="FILE", help="count the replies a --save kept instead of asking")
    two = sub.add_parser("verifier")
    two.add_argument("report", help="a calibration report's JSON")
    two.add_argument("--prompt-rev", default="", help="the commit whose verifier prompt the report was taken with")
    args = parser.parse_args()
    return planner(args) if args.role == "planner" else verifier(args)


if __name__ == "__main__":
    sys.exit(main())
