"""What the audit pages show, shaped for templates. Reads only; nothing here writes.

Wording rule (docs/verifier-contract.md): a pass means the blind verifier found no contract violation. No label
made here may call a step "verified", "true" or "correct".
"""
from __future__ import annotations

import json
from collections import defaultdict
from difflib import SequenceMatcher
from urllib.parse import urlsplit, urlunsplit

from django.db.models import Count, Q, Sum

from pipeline import badges, events as ev
from beyond_site.lib.markdown import markdown_to_html
from beyond_site.runs import chain, verification
from beyond_site.runs.wording import engines_words, one_engine
from beyond_site.runs.trust import badge_standing, pass_standing, sentence as trust_sentence, standing_label
from beyond_site.runs.models import ModelCall, Run, RunEvent, Step
from beyond_site.runs.sources import mark_sources, source_views
from beyond_site.runs.unsourced import mark_unsourced, specifics_view

STATUS_LABELS = {Step.HALTED: "halted", Step.NOT_RELEASED: "not released", Step.PENDING: "pending"}

# Event fields too long for a one-line summary: the page shows them in full elsewhere.
LONG_FIELDS = {"brief", "draft", "content", "raw", "topology", "summary"}
SUMMARY_VALUE_CHARS = 120
# Unchanged lines kept around each change of a re-render's diff; longer unchanged stretches fold.
DIFF_CONTEXT_LINES = 2
# A diff costs up to the product of the two drafts' line counts: past this, show the draft whole.
DIFF_MAX_LINES = 4000


def step_label(status: str, badge: str | None) -> str:
    if status == Step.RELEASED and badge:
        return badges.label(badge).lower()
    return STATUS_LABELS.get(status, status)


def run_facts(run: Run) -> dict:
    """Who checked the run's steps, what was known of its verifier when it was created and, for a
    declined run, why it was declined, in words."""
    return {"verification": verification.words(run.verification), "declined": run.decline_reason or "",
            "trust": trust_sentence(run.verifier_trust), "engines": engines_words(run.topology),
            "offline_only": run.offline and one_engine(run.topology)}


def list_rows(runs: list[Run]) -> list[dict]:
    """One row per run for the list page, with two grouped queries for the whole page.

    `runs` should come with `created_by` selected (the "started by" column), so that no row
    queries on its own.
    """
    ids = [r.pk for r in runs]
    steps = defaultdict(lambda: {"released": 0, "total": 0, "warnings": 0})
    rows_of: dict[int, list[Step]] = defaultdict(list)
    # order_by(): the models' default orderings go through the run, and would join it for nothing.
    for s in Step.objects.filter(run_id__in=ids).order_by():
        rows_of[s.run_id].append(s)
        row = steps[s.run_id]
        row["total"] += 1
        row["released"] += s.status == Step.RELEASED
        row["warnings"] += len(s.warnings or [])
    # Checked as it is shown: an edited step is marked here at once (runs/chain.py).
    tampered = chain.shown_tampered({r.pk: r for r in runs}, rows_of)
    costs = {c["run_id"]: c for c in ModelCall.objects.filter(run_id__in=ids).order_by().values("run_id")
             .annotate(cost=Sum("cost"), calls=Count("id"))}
    return [
        {"run": r, "released": steps[r.pk]["released"], "total": steps[r.pk]["total"],
         # Every warning a reader of the run meets: its steps', its own, and its recap's findings.
         "warnings": steps[r.pk]["warnings"] + len(r.warnings or []) + len(r.summary_findings or []),
         "cost": costs.get(r.pk, {}).get("cost"), "checked": _checked(r), "engines": engines_words(r.topology),
         "offline_only": r.offline and one_engine(r.topology),
         "tampered": r.pk in tampered}
        for r in runs
    ]


def _checked(run: Run) -> str:
    """Who checked the run's steps, and how far a model's passes can be trusted ("by a model ·
    uncalibrated verifier")."""
    short = verification.SHORT.get(run.verification, "")
    standing = pass_standing(run.verifier_trust) if run.verification != badges.MECHANICAL else None
    return standing_label(short, standing) if short else short


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
    return [{"seq": e.seq, "type": e.type, "at": e.at, "summary": event_summary(e.data)}
            for e in events]


def draft_diff(before: str, after: str, context: int = DIFF_CONTEXT_LINES) -> list[dict]:
    """What a re-render changed, line by line: [{"kind": "same"|"added"|"removed"|"skipped", "text"}].

    Long unchanged stretches fold into one "skipped" line saying how many lines they hold. The
    texts are model output: the template escapes them like any other text.
    """
    old, new = (before or "").splitlines(), (after or "").splitlines()
    if old == new:
        return []
    lines: list[dict] = []
    shown_to = 0  # lines of `old` accounted for so far
    for group in SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(context):
        start = group[0][1]
        if start > shown_to:
            lines.append(_skipped(start - shown_to))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [{"kind": "same", "text": t} for t in old[i1:i2]]
                continue
            lines += [{"kind": "removed", "text": t} for t in old[i1:i2]]
            lines += [{"kind": "added", "text": t} for t in new[j1:j2]]
        shown_to = group[-1][2]
    if shown_to < len(old):
        lines.append(_skipped(len(old) - shown_to))
    return lines


def _skipped(count: int) -> dict:
    return {"kind": "skipped", "text": f"… {count} unchanged line{'s' if count != 1 else ''} …"}


def attempt_views(attempts: list[dict]) -> list[dict]:
    """The trace's attempts, each after the first with its diff against the one before it (None,
    and the draft shown whole, for the first and for drafts too long to compare)."""
    views = []
    for n, attempt in enumerate(attempts):
        diff = None
        if n and max(len(a["draft"].splitlines()) for a in (attempts[n - 1], attempt)) <= DIFF_MAX_LINES:
            diff = draft_diff(attempts[n - 1]["draft"], attempt["draft"])
        views.append({**attempt, "diff": diff, "previous": attempts[n - 1]["attempt"] if n else None})
    return views


def conversation_link(run: Run) -> dict | None:
    """The run's conversation as the detail page links it: its id and title, and whether the chat
    still shows it (a deleted conversation is hidden there; its runs stay here)."""
    if run.conversation_id is None:
        return None
    conversation = run.conversation
    return {"id": conversation.pk, "title": conversation.title, "visible": conversation.deleted_at is None}


def call_status(call: ModelCall) -> str:
    """One word for a call's outcome: "error", the finish reason when it is not a plain stop, else "ok"."""
    if call.error:
        return "error"
    if call.finish_reason and call.finish_reason != "stop":
        return call.finish_reason
    return "ok"


def call_rows(calls) -> list[dict]:
    """The model calls table: what is read first, the rest kept for the row's "more" panel."""
    return [{"call": c, "status": call_status(c),
             "tokens_reported": c.input_tokens is not None or c.output_tokens is not None}
            for c in calls]


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
    # A research run's links to approved evidence carry its id (E1...), as in the chat.
    released = [step["content"] for step in trace["steps"] if step["content"] is not None]
    sources = [source for e in events if e.type == ev.EVIDENCE_COLLECTED
               for source in source_views(e.payload.items, run.brief, released)]
    # The trace calls a not-yet-settled step "not_released"; while the run goes on, it is pending.
    pending = set(run.steps.filter(status=Step.PENDING).values_list("index", flat=True))
    steps = []
    for step in trace["steps"]:
        note = notes.get(step["index"], {"halt_reasons": [], "rerender_issues": []})
        status = Step.PENDING if step["index"] in pending else step["status"]
        badge = verification.shown_badge(step["badge"], run.verification)
        standing = badge_standing(badge, run.verifier_trust) if status == Step.RELEASED else None
        steps.append({**step, "label": standing_label(step_label(status, badge), standing),
                      "css": "unproven" if standing else badge or status, "standing": standing, **note,
                      "tip": (f"{trust_sentence(run.verifier_trust)} " if standing else "") + verification.badge_tip(badge),
                      # Rendered by the chat's own renderer, so the auditor reads what the member read.
                      "html": (mark_unsourced(mark_sources(markdown_to_html(step["content"]), sources),
                                              step["unsourced"]) if step["content"] is not None else None),
                      "specifics": (specifics_view(step["unsourced"], step["sources"])
                                    if step["specifics_read"] else None),
                      "attempts": attempt_views(step["attempts"])})
    return steps


#: How a later run follows on from an earlier one (runs/models.py: the lineage fields).
LINEAGE = (("retry_of", "runs it again"), ("redo_of", "redoes a step"), ("regenerates", "regenerates it"),
           ("edited_from", "edits its task"))


def later_runs(run) -> list[tuple[str, int]]:
    """The runs that follow on from `run` ([(how, run id)], oldest first), in one query: the earlier
    run's page links to them as theirs link back."""
    from_run = Q()
    for name, _ in LINEAGE:
        from_run |= Q(**{f"{name}_id": run.pk})
    rows = Run.objects.filter(from_run, workspace_id=run.workspace_id).order_by("pk").values_list(
        "pk", *(f"{name}_id" for name, _ in LINEAGE))
    return [(next(words for (_, words), link in zip(LINEAGE, links) if link == run.pk), pk) for pk, *links in rows]
