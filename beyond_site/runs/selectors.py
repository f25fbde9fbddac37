"""Read the run record: the run trace JSON (docs/interfaces.md) and the snapshot the page is built from."""
from __future__ import annotations

from collections import defaultdict

from pipeline import events as ev
from beyond_site.runs.models import Run, RunEvent, Step
from beyond_site.runs.scrubbing import public_topology


def iso(dt) -> str:
    """A timestamp as the run record writes it (the trace, the audit event log)."""
    return dt.isoformat(timespec="microseconds")


def step_dict(step: Step) -> dict:
    released = step.status == Step.RELEASED
    return {
        "index": step.index,
        "title": step.title,
        "status": step.status if step.status != Step.PENDING else "not_released",
        "badge": step.badge if released else None,
        "warnings": list(step.warnings or []),
        "content": step.content if released else None,
        # Unsourced specifics (docs/interfaces.md): advisory, never part of a verdict.
        "unsourced": list(step.unsourced or []) if released else [],
        "sources": list(step.sources or []) if released else [],
        "specifics_read": released and step.unsourced is not None,
        # A redo's step released as the earlier run released it, not inspected again (its attempts
        # and verdicts are that run's: `run.redo_of`).
        "carried_over": step.carried_over,
        "attempts": [
            {
                "attempt": a.attempt,
                "draft": a.draft,
                "truncated": a.truncated,
                "verdicts": [
                    {"source": v.source, "raw": v.raw, "parsed": v.parsed, "error": v.error}
                    for v in a.verdicts.all()
                ],
            }
            for a in step.attempts.all()
        ],
    }


def usage_of(call) -> dict | None:
    """A call's token usage, or None when the endpoint did not report it."""
    if call.input_tokens is None and call.output_tokens is None:
        return None
    return {"input": call.input_tokens, "cache_read": call.cache_read_tokens, "cache_write": call.cache_write_tokens,
            "output": call.output_tokens, "reasoning": call.reasoning_tokens}


def run_events(run: Run) -> list[RunEvent]:
    return list(RunEvent.objects.filter(run=run).order_by("seq"))


def run_trace(run: Run, events: list[RunEvent] | None = None) -> dict:
    """The run trace: field names fixed (docs/interfaces.md), more fields allowed.

    `events`: the run's events in seq order, when the caller has read them already.
    """
    steps = run.steps.prefetch_related("attempts__verdicts").order_by("index")
    if events is None:
        events = run_events(run)
    return {
        "run": _run_fields(run),
        "brief": run.brief,
        "steps": [step_dict(s) for s in steps],
        "summary": run.summary,
        "summary_findings": list(run.summary_findings or []),
        "summary_unsourced": list(run.summary_unsourced or []),
        "summary_sources": list(run.summary_sources or []),
        "model_calls": [_model_call(c) for c in run.model_calls.select_related("context").order_by("id")],
        **({"evidence": evidence_items(events)} if run.research else {}),
        # The fixed fields last: no event data can overwrite them.
        "events": [event_json(e) for e in events],
    }


def _run_fields(run: Run) -> dict:
    """The trace's `run` object."""
    return {
        "id": run.pk,
        "status": run.status,
        "halt_reason": run.halt_reason,
        "decline_reason": run.decline_reason,
        # Who checked the released steps: "model", "mechanical", "mixed"; null when none was.
        "verification": run.verification,
        # What was known of the verifier when the run was created (runs/trust.py); null on
        # runs recorded before it was kept.
        "verifier_trust": run.verifier_trust,
        "topology": public_topology(run.topology),  # no server file path
        "workspace": run.workspace.slug,
        "conversation": run.conversation_id,
        "created_by": (run.created_by_name or run.created_by.get_username()) if run.created_by_id else None,
        "research": run.research,
        "task": run.task,
        "offline": run.offline,
        "warnings": list(run.warnings or []),
        "unsourced_count": run.unsourced_count,
        # The requirement trace (docs/verifier-contract.md): each requirement of the task and its status.
        "requirements": list(run.requirements or []),
        "coverage": {"met": run.requirements_met, "total": run.requirements_total}
        if run.requirements_total is not None else None,
        # The earlier run it follows on from (docs/working-loop.md); null when none.
        "redo_of": {"run": run.redo_of_id, "step": run.redo_step, "instruction": run.redo_instruction}
        if run.redo_of_id else None,
        "retry_of": run.retry_of_id,
        "regenerates": run.regenerates_id,
        "edited_from": run.edited_from_id,
        "created_at": iso(run.created_at),
        "finished_at": iso(run.finished_at) if run.finished_at else None,
    }


def _model_call(c) -> dict:
    return {"role": c.role, "step": c.step_index, "attempt": c.attempt, "provider": c.provider, "model": c.model,
            "model_served": c.model_served, "effort": c.effort, "latency_s": c.latency_s, "usage": usage_of(c),
            "cost": c.cost, "cost_source": c.cost_source, "transport_retries": c.transport_retries,
            "finish_reason": c.finish_reason, "error": c.error, "context": c.context.sha256 if c.context_id else None}


def event_json(e: RunEvent) -> dict:
    """An event as the trace and the API's event stream give it (its fixed fields last: no data
    can overwrite them)."""
    return {**_shown(e.data), "seq": e.seq, "type": e.type, "at": iso(e.at)}


def _shown(data: dict) -> dict:
    """An event's data as the trace shows it (run_started's topology without server file paths)."""
    return {**data, "topology": public_topology(data["topology"])} if isinstance(data.get("topology"), dict) else data


def halt_reasons(run_ids) -> dict[int, dict[int, str]]:
    """Per run, per halted step, the reason its step_halted event gave."""
    reasons: dict[int, dict[int, str]] = defaultdict(dict)
    for e in RunEvent.objects.filter(run_id__in=run_ids, type=ev.STEP_HALTED).only("run_id", "type", "data"):
        halted = e.payload
        reasons[e.run_id][halted.step] = halted.reason
    return reasons


EVIDENCE_FIELDS = ("id", "url", "final_url", "title", "fetched_at", "sha256", "status", "reason", "http_status",
                   "bytes", "elapsed_s")


def evidence_items(events: list[RunEvent]) -> list[dict]:
    """Every evidence item the run's research collected, read or not (text left out: it is stored
    by its sha256)."""
    for e in events:
        if e.type == ev.EVIDENCE_COLLECTED:
            return [{k: item.get(k) for k in EVIDENCE_FIELDS} for item in e.payload.items]
    return []
