"""Persist the pipeline's events: the event log first, the relational record beside it.

Each event is written in one transaction (RunEvent row + the rows it implies) before anyone is
told about it, so the page, a reconnecting browser and the audit trail all replay the same truth
(docs/architecture.md, "The event log is the truth").
"""
from __future__ import annotations

import dataclasses

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from pipeline import events as ev
from pipeline.events import Event
from beyond_site.runs import chain
from beyond_site.runs.contexts import store_context
from beyond_site.runs.models import Attempt, ContextRecord, ModelCall, Run, RunEvent, Step, Verdict
from beyond_site.runs.scrubbing import Scrubber
from beyond_site.workspaces.models import Blob

FINAL_STATUS = {ev.RUN_COMPLETED: Run.COMPLETED, ev.RUN_HALTED: Run.HALTED, ev.RUN_FAILED: Run.FAILED,
                ev.RUN_CANCELLED: Run.CANCELLED}
#: What may no longer be recorded once a member asked to stop the run: nothing is shown after the click.
HELD_AFTER_STOP = frozenset({ev.STEP_RELEASED, ev.SUMMARY_READY})


def stop_reason(username: str | None) -> str:
    return f"stopped by {username}" if username else "stopped"


def _cut(value: str | None, length: int) -> str | None:
    return value[:length] if value else value


class RecordRefused(Exception):
    """The run is no longer this runner's to write: finished, or taken over by the reaper."""


class StopRequested(Exception):
    """A member stopped the run: this event (a release or a recap) is not recorded, and the runner
    must stop the run. `args[0]` is the reason to record."""


class EventRecorder:
    """Writes one run's events in order; `seq` is per run and gap-free.

    With an `owner`, every write first checks, inside its transaction, that the run is still
    running under that owner's lease: a runner the reaper gave up on cannot add to the record.
    Every event is scrubbed of secrets and server paths first (runs/scrubbing.py).
    """

    def __init__(self, run: Run, owner: str | None = None):
        self.run = run
        self.owner = owner
        self.seq = RunEvent.objects.filter(run=run).count()
        #: The hash of the last event recorded: the next event links to it (runs/chain.py).
        self.head = chain.run_head(run.pk)
        self.scrubber = Scrubber(run.topology)

    @transaction.atomic
    def record(self, event: Event) -> RunEvent:
        if self.owner is not None:
            state = (Run.objects.select_for_update().filter(pk=self.run.pk, status=Run.RUNNING, lease_owner=self.owner)
                     .values_list("stop_requested_at", "stopped_by").first())
            if state is None:
                raise RecordRefused(f"run {self.run.pk} is not running under {self.owner}")
            if state[0] is not None and event.type in HELD_AFTER_STOP:
                raise StopRequested(stop_reason(get_user_model().objects.filter(pk=state[1]).values_list(
                    get_user_model().USERNAME_FIELD, flat=True).first()))
        payload = ev.load(event.type, self.scrubber.data(dataclasses.asdict(event.payload)))
        if event.texts:
            Blob.store_for_audit({sha: text.encode("utf-8") for sha, text in event.texts.items()})
        if event.messages is not None:
            context = store_context(self.scrubber.messages(event.messages))
            payload = dataclasses.replace(payload, context=context.sha256)
        self.seq += 1
        data, at = dataclasses.asdict(payload), timezone.now()
        row = RunEvent.objects.create(run=self.run, seq=self.seq, type=event.type, data=data, at=at,
                                      hash=chain.event_hash(self.head, self.run.pk, self.seq, event.type, data, at))
        self.head = row.hash
        handler = getattr(self, f"_on_{event.type}", None)
        if handler:
            handler(payload, row)
        return row

    # The relational record each event implies.
    def _on_brief_ready(self, p: ev.BriefReady, row: RunEvent) -> None:
        Run.objects.filter(pk=self.run.pk).update(brief=p.brief)
        Step.objects.bulk_create(
            Step(run=self.run, index=s["index"], title=s["title"], content_spec=s["content_spec"])
            for s in p.brief["steps"]
        )

    def _on_attempt_drafted(self, p: ev.AttemptDrafted, row: RunEvent) -> None:
        step = Step.objects.get(run=self.run, index=p.step)
        Attempt.objects.create(step=step, attempt=p.attempt, draft=p.draft, truncated=p.truncated)

    def _on_verdict_recorded(self, p: ev.VerdictRecorded, row: RunEvent) -> None:
        attempt = Attempt.objects.get(step__run=self.run, step__index=p.step, attempt=p.attempt)
        Verdict.objects.create(attempt=attempt, source=p.source, raw=p.raw, parsed=p.parsed, error=p.error)

    def _on_step_released(self, p: ev.StepReleased, row: RunEvent) -> None:
        changed = Step.objects.filter(run=self.run, index=p.step, status=Step.PENDING).update(
            status=Step.RELEASED, badge=p.badge, content=p.content, warnings=p.warnings, released_at=row.at)
        if changed != 1:  # a step is released once, from pending; anything else is a bug upstream
            raise RuntimeError(f"step {p.step} of run {self.run.pk} cannot be released (not pending)")

    def _on_step_halted(self, p: ev.StepHalted, row: RunEvent) -> None:
        Step.objects.filter(run=self.run, index=p.step).update(status=Step.HALTED)

    def _on_step_not_released(self, p: ev.StepNotReleased, row: RunEvent) -> None:
        Step.objects.filter(run=self.run, index=p.step, status=Step.PENDING).update(status=Step.NOT_RELEASED)

    def _on_summary_ready(self, p: ev.SummaryReady, row: RunEvent) -> None:
        Run.objects.filter(pk=self.run.pk).update(summary=p.summary, summary_findings=p.findings)

    def _add_warnings(self, *warnings: str) -> None:
        self.run.refresh_from_db(fields=["warnings"])
        Run.objects.filter(pk=self.run.pk).update(warnings=[*self.run.warnings, *warnings])

    def _on_brief_checked(self, p: ev.BriefChecked, row: RunEvent) -> None:
        self._add_warnings(*p.warnings)

    def _on_task_checked(self, p: ev.TaskChecked, row: RunEvent) -> None:
        self._add_warnings(*p.warnings)

    def _on_summary_failed(self, p: ev.SummaryFailed, row: RunEvent) -> None:
        self._add_warnings(p.warning)

    def _on_model_call(self, p: ev.ModelCall, row: RunEvent) -> None:
        usage = p.usage or {}  # None: not reported, stored as nulls (never as a free zero)
        ModelCall.objects.create(
            run=self.run, role=p.role, step_index=p.step, attempt=p.attempt,
            # Provider-supplied strings are cut to their columns: an odd reply must not stop the record.
            provider=p.provider[:20], model=p.model[:200], model_served=_cut(p.model_served, 200),
            effort=_cut(p.effort, 10), latency_s=p.latency_s or 0,
            input_tokens=usage.get("input"), cache_read_tokens=usage.get("cache_read"),
            cache_write_tokens=usage.get("cache_write"), output_tokens=usage.get("output"),
            reasoning_tokens=usage.get("reasoning"), cost=p.cost, cost_source=_cut(p.cost_source, 10),
            transport_retries=p.transport_retries or 0, finish_reason=_cut(p.finish_reason, 40),
            error=p.error, context=ContextRecord.objects.get(sha256=p.context) if p.context else None,
        )

    def _finish(self, event_type: str, reason: str | None, row: RunEvent) -> None:
        Run.objects.filter(pk=self.run.pk).update(
            status=FINAL_STATUS[event_type], halt_reason=reason, finished_at=row.at,
            lease_owner=None, lease_expires_at=None)
        chain.append_to_ledger(self.run, row.hash)

    def _on_run_completed(self, p: ev.RunCompleted, row: RunEvent) -> None:
        self._finish(ev.RUN_COMPLETED, None, row)

    def _on_run_halted(self, p: ev.RunHalted, row: RunEvent) -> None:
        self._finish(ev.RUN_HALTED, p.reason, row)

    def _on_run_failed(self, p: ev.RunFailed, row: RunEvent) -> None:
        # A failure can come before the brief (planner) or at any point (a crash): whatever was
        # not yet released stays unreleased, on the record.
        Step.objects.filter(run=self.run, status=Step.PENDING).update(status=Step.NOT_RELEASED)
        self._finish(ev.RUN_FAILED, p.reason, row)

    def _on_run_cancelled(self, p: ev.RunCancelled, row: RunEvent) -> None:
        Step.objects.filter(run=self.run, status=Step.PENDING).update(status=Step.NOT_RELEASED)
        self._finish(ev.RUN_CANCELLED, p.reason, row)
