"""Compare topologies on a task set: aggregate run traces per topology.

The caller runs each task N times per topology through the normal run path and passes the run
trace dicts (the `beyond_run --json` shape); this module only reads them. Per topology: how runs
ended, the share of model verdicts that parsed, halts, warnings, re-renders, wall time, tokens and
cost, overall and per task.
"""
from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping
from datetime import datetime

from .report import proportion

_TOKEN_BUCKETS = ("input", "cache_read", "cache_write", "output", "reasoning")


def read_tasks(text: str) -> list[str]:
    """Tasks from a file's text: a JSON list of strings (or of {"task": ...}), {"tasks": [...]},
    or plain text with one task per line (blank lines and lines starting with # skipped)."""
    stripped = text.strip()
    if stripped.startswith(("[", "{")):
        data = json.loads(stripped)
        items = data.get("tasks", []) if isinstance(data, dict) else data
        tasks = [item.get("task", "") if isinstance(item, dict) else str(item) for item in items]
    else:
        tasks = [line for line in stripped.splitlines() if not line.lstrip().startswith("#")]
    tasks = [task.strip() for task in tasks if task and task.strip()]
    if not tasks:
        raise ValueError("the task file holds no task")
    return tasks


def _at(value: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if value else None
    except ValueError:
        return None


def wall_time_s(trace: dict) -> float | None:
    """From the run's creation to its end (else from its first event to its last)."""
    run = trace.get("run") or {}
    start, end = _at(run.get("created_at")), _at(run.get("finished_at"))
    if start is None or end is None:
        times = [t for t in (_at(e.get("at")) for e in trace.get("events") or []) if t is not None]
        start, end = (min(times), max(times)) if times else (None, None)
    return (end - start).total_seconds() if start and end else None


def _calls(trace: dict) -> list[dict]:
    calls = trace.get("model_calls")
    if calls is None:
        calls = [e for e in trace.get("events") or [] if e.get("type") == "model_call"]
    return calls


def _summary(traces: list[dict]) -> dict:
    statuses: dict[str, int] = {}
    model_verdicts = parsed = steps = warnings = rerenders = 0
    for trace in traces:
        status = (trace.get("run") or {}).get("status") or "unknown"
        statuses[status] = statuses.get(status, 0) + 1
        for step in trace.get("steps") or []:
            steps += 1
            warnings += step.get("badge") == "warning"
            rerenders += len(step.get("attempts") or []) > 1
            for attempt in step.get("attempts") or []:
                for verdict in attempt.get("verdicts") or []:
                    if verdict.get("source") == "model":
                        model_verdicts += 1
                        parsed += verdict.get("parsed") is not None
    calls = [call for trace in traces for call in _calls(trace)]
    tokens = {b: sum(int((c.get("usage") or {}).get(b) or 0) for c in calls) for b in _TOKEN_BUCKETS}
    tokens["total"] = sum(tokens.values())
    costs = [c["cost"] for c in calls if c.get("cost") is not None]
    times = [t for t in map(wall_time_s, traces) if t is not None]
    runs = len(traces)
    return {
        "runs": runs,
        "statuses": statuses,
        "parseable_verdicts": {"parsed": parsed, **proportion(parsed, model_verdicts)},
        "halts": statuses.get("halted", 0),
        "steps": steps,
        "warnings": warnings,
        "rerenders": rerenders,
        "wall_time_s": {"mean": round(statistics.fmean(times), 3) if times else None,
                        "median": round(statistics.median(times), 3) if times else None,
                        "max": round(max(times), 3) if times else None},
        "tokens": {**tokens, "per_run": round(tokens["total"] / runs, 1) if runs else None},
        "cost": {"usd": round(sum(costs), 6), "per_run_usd": round(sum(costs) / runs, 6) if runs else None,
                 "calls": len(calls), "unknown": len(calls) - len(costs)},
    }


def compare_topologies(traces: Mapping[str, Iterable[dict]]) -> dict:
    """`{"topologies": {label: summary + "by_task": {task: summary}}}` from run traces by topology label."""
    result = {}
    for label, runs in traces.items():
        runs = list(runs)
        by_task: dict[str, list[dict]] = {}
        for trace in runs:
            by_task.setdefault((trace.get("run") or {}).get("task") or "", []).append(trace)
        result[label] = {**_summary(runs), "by_task": {task: _summary(ts) for task, ts in by_task.items()}}
    return {"topologies": result}
