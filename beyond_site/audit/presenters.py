"""What the audit pages show, shaped for templates. Reads only; nothing here writes.

Wording rule (docs/verifier-contract.md): a pass means the blind verifier found no contract violation. No label
made here may call a step "verified", "true" or "correct".
"""
from __future__ import annotations

import json
from collections import defaultdict
from urllib.parse import urlsplit, urlunsplit

from django.db.models import Count, Sum

from pipeline import badges, events as ev
from beyond_site.runs.models import ModelCall, Run, RunEvent, Step
from beyond_site.runs.selectors import iso

STATUS_LABELS = {Step.HALTED: "halted", Step.NOT_RELEASED: "not released", Step.PENDING: "pending"}

# Event fields too long for a one-line summary: the page shows them in full elsewhere.
LONG_FIELDS = {"brief", "draft", "content", "raw", "topology", "summary"}
SUMMARY_VALUE_CHARS = 120


def step_label(status: str, badge: str | None) -> str:
    if status == Step.RELEASED and badge:
        return badges.label(badge).lower()
    return STATUS_LABELS.get(status, status)


def list_rows(runs: list[Run]) -> list[dict]:
    """One row per run for the list page, with two grouped queries for the whole page."""
    ids = [r.pk for r in runs]
    steps = defaultdict(lambda: {"released": 0, "total": 0, "warnings": 0})
    for s in Step.objects.filter(run_id__in=ids).values("run_id", "status", "warnings"):
        row = steps[s["run_id"]]
        row["total"] += 1
        row["released"] += s["status"] == Step.RELEASED
        row["warnings"] += len(s["warnings"] or [])
    costs = {c["run_id"]: c for c in ModelCall.objects.filter(run_id__in=ids).values("run_id")
             .annotate(cost=Sum("cost"), calls=Count("id"))}
    return [
        {"run": r, "released": steps[r.pk]["released"], "total": steps[r.pk]["total"],
         "warnings": steps[r.pk]["warnings"] + len(r.warnings or []),
         "cost": costs.get(r.pk, {}).get("cost")}
        for r in runs
    ]


def safe_url(url: str) -> str:
    """A base URL without user:password or query string, where a careless admin may put a key."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]  # keeps an IPv6 host's brackets and the port as typed
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def redact_topology(topology: dict) -> dict:
    """The topology as stored, with any credential-shaped part of a base URL removed.

    Keys come from the environment, so a stored topology holds none; this guards the
    one free-text field where someone could still paste one.
    """
    clean = {}
    for role, cfg in (topology or {}).items():
        cfg = dict(cfg) if isinstance(cfg, dict) else cfg
        if isinstance(cfg, dict) and isinstance(cfg.get("base_url"), str):
            cfg["base_url"] = safe_url(cfg["base_url"])
        clean[role] = cfg
    return clean


def redact_trace(trace: dict) -> dict:
    trace = dict(trace)
    trace["run"] = {**trace["run"], "topology": redact_topology(trace["run"].get("topology"))}
    for event in trace.get("events", []):
        if isinstance(event.get("topology"), dict):
            event["topology"] = redact_topology(event["topology"])
    return trace


def event_summary(data: dict) -> str:
    parts = []
    for key, value in data.items():
        if key in LONG_FIELDS:
            size = len(value) if isinstance(value, (str, list, dict)) else 0
            parts.append(f"{key}: ({size} {'chars' if isinstance(value, str) else 'items'}, shown above)")
            continue
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        if len(text) > SUMMARY_VALUE_CHARS:
            text = text[:SUMMARY_VALUE_CHARS] + "…"
        parts.append(f"{key}: {text}")
    return "; ".join(parts)


def event_rows(events: list[RunEvent]) -> list[dict]:
    return [{"seq": e.seq, "type": e.type, "at": iso(e.at),
             "summary": event_summary(e.data)}
            for e in events]


def step_notes(events: list[RunEvent]) -> dict[int, dict]:
    """Per step, what only the event log says: halt reasons and the issues that caused a re-render."""
    notes: dict[int, dict] = defaultdict(lambda: {"halt_reasons": [], "rerender_issues": []})
    for e in events:
        if e.type not in (ev.STEP_RERENDERING, ev.STEP_HALTED):
            continue
        p = e.payload
        if isinstance(p, ev.StepRerendering):
            notes[p.step]["rerender_issues"].extend(p.issues)
        elif isinstance(p, ev.StepHalted) and p.reason:
            notes[p.step]["halt_reasons"].append(p.reason)
    return notes


def detail_steps(trace: dict, run: Run, events: list[RunEvent]) -> list[dict]:
    """The trace's steps, each with its label, halt reasons and re-render issues."""
    notes = step_notes(events)
    # The trace calls a not-yet-settled step "not_released"; while the run goes on, it is pending.
    pending = set(run.steps.filter(status=Step.PENDING).values_list("index", flat=True))
    steps = []
    for step in trace["steps"]:
        note = notes.get(step["index"], {"halt_reasons": [], "rerender_issues": []})
        status = Step.PENDING if step["index"] in pending else step["status"]
        steps.append({**step, "label": step_label(status, step["badge"]), "css": step["badge"] or status, **note})
    return steps
