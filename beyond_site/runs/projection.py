"""What each event of a run's log implies in the relational record: one projection of the log into
rows, which the recorder writes (runs/recorder.py) and `beyond_audit verify` holds the stored rows
to (runs/chain.py, docs/audit.md "Tamper evidence").

Each function takes an event's payload and returns the columns of the row it writes, as the
recorder writes them; the `*_COLUMNS` tuples name the same columns for reading the rows back, and
`fingerprint` is what the check compares, so a column added to a row is written and checked alike.
"""
from __future__ import annotations

from typing import Any

from pipeline import events as ev
from beyond_site.lib.chaining import content_hash
from beyond_site.runs.models import Run, Step

#: The run status each final event leaves.
FINAL_STATUS = {ev.RUN_COMPLETED: Run.COMPLETED, ev.RUN_HALTED: Run.HALTED, ev.RUN_FAILED: Run.FAILED,
                ev.RUN_CANCELLED: Run.CANCELLED, ev.RUN_DECLINED: Run.DECLINED}
FINAL_COLUMNS = ("status", "halt_reason", "decline_reason", "finished_at")
ATTEMPT_COLUMNS = ("draft", "truncated")
VERDICT_COLUMNS = ("source", "raw", "parsed", "error")
RELEASE_COLUMNS = ("status", "badge", "content", "warnings", "released_at", "carried_over")
SPECIFICS_COLUMNS = ("unsourced", "sources")
RECAP_COLUMNS = ("summary", "summary_findings")
RECAP_SPECIFICS_COLUMNS = ("summary_unsourced", "summary_sources")


def fingerprint(*values: Any) -> str:
    return content_hash(list(values))


def attempt(p: ev.AttemptDrafted) -> dict:
    return dict(zip(ATTEMPT_COLUMNS, (p.draft, p.truncated)))


def verdict(p: ev.VerdictRecorded) -> dict:
    return dict(zip(VERDICT_COLUMNS, (p.source, p.raw, p.parsed, p.error)))


def release(p: ev.StepReleased, at) -> dict:
    """The step row a release leaves (`at`: its event's time)."""
    return dict(zip(RELEASE_COLUMNS, (Step.RELEASED, p.badge, p.content, p.warnings, at, p.carried_over)))


def release_fingerprint(status, badge, content, warnings, released_at, carried_over: bool) -> str:
    """A released step's row; a redo's carried-over step says so too (a step marked carried over,
    or unmarked, behind the application's back no longer matches)."""
    return fingerprint(status, badge, content, warnings, released_at, *(("carried over",) if carried_over else ()))


def specifics(p: ev.SpecificsListed) -> dict:
    return dict(zip(SPECIFICS_COLUMNS, (p.unsourced, p.sources)))


def recap_specifics(p: ev.SpecificsListed) -> dict:
    return dict(zip(RECAP_SPECIFICS_COLUMNS, (p.unsourced, p.sources)))


def final(type_: str, reason: str | None, at) -> dict:
    """The run's columns a final event leaves (`reason`: a declined run's is its decline reason;
    it has no halt reason)."""
    declined = type_ == ev.RUN_DECLINED
    return dict(zip(FINAL_COLUMNS, (FINAL_STATUS[type_], None if declined else reason, reason if declined else None, at)))


def recap(p: ev.SummaryReady) -> dict:
    return dict(zip(RECAP_COLUMNS, (p.summary, p.findings)))


def recap_fingerprint(summary, findings) -> str:
    """A run's recap and its findings (none and an empty list alike: a run with no recap yet)."""
    return fingerprint(summary, findings or [])


#: A run's recap before any summary_ready event.
NO_RECAP = recap_fingerprint(None, [])


def _cut(value: str | None, length: int) -> str | None:
    return value[:length] if value else value


def model_call(p: ev.ModelCall) -> dict:
    """The ModelCall row (its context named by its sha256): usage not reported is stored as nulls
    (never as a free zero), and provider-supplied strings are cut to their columns."""
    usage = p.usage or {}
    return {
        "role": p.role, "step_index": p.step, "attempt": p.attempt, "provider": p.provider[:20],
        "model": p.model[:200], "model_served": _cut(p.model_served, 200), "effort": _cut(p.effort, 10),
        "latency_s": p.latency_s or 0, "input_tokens": usage.get("input"),
        "cache_read_tokens": usage.get("cache_read"), "cache_write_tokens": usage.get("cache_write"),
        "output_tokens": usage.get("output"), "reasoning_tokens": usage.get("reasoning"), "cost": p.cost,
        "cost_source": _cut(p.cost_source, 10), "transport_retries": p.transport_retries or 0,
        "finish_reason": _cut(p.finish_reason, 40), "error": p.error, "context__sha256": p.context,
    }


MODEL_CALL_COLUMNS = tuple(model_call(ev.ModelCall(role="", provider="", model="", effort=None)))


def requirements(p: ev.RequirementsTraced) -> dict:
    return {"requirements": p.requirements, "requirements_met": p.coverage.get("met"),
            "requirements_total": p.coverage.get("total"), "requirements_gaps": p.gaps or ""}
