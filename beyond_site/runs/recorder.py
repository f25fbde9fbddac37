"""Persist the pipeline's events: the event log first, the relational record beside it.

Each event is written (RunEvent row + the rows it implies) in one transaction, with the events
waiting behind it, before anyone is told about it, so the page, a reconnecting browser and the audit trail all replay the same truth
(docs/architecture.md, "The event log is the truth").
"""
from __future__ import annotations

import dataclasses

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from pipeline import events as ev
from pipeline.events import Event
from beyond_site.runs import chain, projection, provenance
from beyond_site.runs.contexts import ContextStore
from beyond_site.runs.models import Attempt, ModelCall, Run, RunEvent, Step, Verdict
from beyond_site.runs.scrubbing import Scrubber
from beyond_site.runs.verification import combined, step_checker
from beyond_site.workspaces.conversations import conversation_title
from beyond_site.workspaces.models import Conversation

#: What may no longer be recorded once a member asked to stop the run: nothing is shown after the click.
HELD_AFTER_STOP = frozenset({ev.STEP_RELEASED, ev.SUMMARY_READY, ev.SPECIFICS_LISTED})


def stop_reason(username: str | None) -> str:
    return f"stopped by {username}" if username else "stopped"



@dataclasses.dataclass
class _Pending:
    """Rows a batch's events introduced ({attname: value}), inserted together at the end of the batch."""

    attempts: list[tuple[tuple[int, int], dict]] = dataclasses.field(default_factory=list)
    verdicts: list[tuple[tuple[int, int], dict]] = dataclasses.field(default_factory=list)
    calls: list[dict] = dataclasses.field(default_factory=list)
    warnings: list[str] = dataclasses.field(default_factory=list)


def run_to_start(run_id: int) -> Run | None:
    """The run with its workspace and the workspace's budget (runs/budgets.py `run_budget`)."""
    return Run.objects.select_related("workspace__budget").filter(pk=run_id).first()


def name_conversation(run: Run, title: str | None) -> None:
    """A conversation still called after its first task takes its document's title once the brief
    gives one; a name a member chose is kept."""
    if not title or not run.conversation_id:
        return
    Conversation.objects.filter(pk=run.conversation_id, title=conversation_title(run.task)).update(
        title=conversation_title(title))


def _payload_data(payload: ev.Payload, scrubber: Scrubber) -> dict:
    """The payload as stored: plain JSON, scrubbed. (`dataclasses.asdict` would give the same for
    these flat payloads, deep-copying every leaf; the scrubber copies the containers anyway.)"""
    return scrubber.data(ev.fields_of(payload))


class RecordRefused(Exception):
    """The run is no longer this runner's to write: finished, or taken over by the reaper."""


class StopRequested(Exception):
    """A member stopped the run: this event (a release or a recap) is not recorded, and the runner
    must stop the run. `args[0]` is the reason to record."""


@dataclasses.dataclass
class Recorded:
    """What a batch left on the record: its rows, in order, and, when a member stopped the run,
    the reason to stop with (the releases and recaps held back are not among the rows)."""

    rows: list[RunEvent]
    stop: str | None = None


class EventRecorder:
    """Writes one run's events in order; `seq` is per run and gap-free.

    Events are written in batches, one transaction each (`record_many`): when the pipeline
    produces events faster than the database takes them, the ones waiting are written together,
    so a busy process pays a few round trips per batch instead of per event.

    With an `owner`, every batch first checks, inside its transaction, that the run is still
    running under that owner's lease: a runner the reaper gave up on cannot add to the record.
    Every event is scrubbed of secrets and server paths first (runs/scrubbing.py).
    """

    def __init__(self, run: Run, owner: str | None = None):
        self.run = run
        self.owner = owner
        #: The last event recorded: its seq, and its hash, which the next event links to (runs/chain.py).
        self.seq, self.head = chain.run_head(run.pk)
        self.scrubber = Scrubber(run.topology)
        self.contexts = ContextStore()
        self.warnings = list(run.warnings)
        #: Who checked the steps released so far (runs/verification.py).
        self.verification = run.verification
        #: Who asked to stop the run ({"id", "username"}), once a batch has seen it.
        self.stopper: dict | None = None
        # Ids of the rows later events point at, so that no event looks them up again.
        self._steps: dict[int, int] | None = None
        self._attempts: dict[tuple[int, int], int] = {}

    def record(self, event: Event) -> RunEvent:
        """Record one event; StopRequested if it is a release or a recap held back by a stop."""
        recorded = self.record_many([event])
        if not recorded.rows or recorded.rows[-1].type != event.type:  # (a run's first batch opens with its request)
            raise StopRequested(recorded.stop)
        return recorded.rows[-1]

    def record_many(self, events: list[Event]) -> Recorded:
        """Record `events` in order, in one transaction: all of them or, on an error, none."""
        saved = (self.seq, self.head, list(self.warnings), self._steps, dict(self._attempts), self.verification)
        try:
            with transaction.atomic():
                return self._record_many(events)
        except BaseException:
            # Rolled back: what this recorder remembers must be rolled back with it. (The context
            # store's memory may name rows that were rolled back: it is dropped too.)
            self.seq, self.head, self.warnings, self._steps, self._attempts, self.verification = saved
            self.contexts = ContextStore()
            raise

    def _stop_reason(self) -> str | None:
        """Check the lease (the row stays locked until the batch commits); the stop reason if a
        member asked to stop the run."""
        if self.owner is None:
            return None
        state = (Run.objects.select_for_update().filter(pk=self.run.pk, status=Run.RUNNING, lease_owner=self.owner)
                 .values_list("stop_requested_at", "stopped_by").first())
        if state is None:
            raise RecordRefused(f"run {self.run.pk} is not running under {self.owner}")
        if state[0] is None:
            return None
        username = get_user_model().objects.filter(pk=state[1]).values_list(
            get_user_model().USERNAME_FIELD, flat=True).first()
        self.stopper = provenance.person(state[1], username)
        return stop_reason(username)

    def _record_many(self, events: list[Event]) -> Recorded:
        stop = self._stop_reason()
        if stop is not None:
            events = [event for event in events if event.type not in HELD_AFTER_STOP]
        if self.seq == 0:  # every record opens with who asked for what (runs/provenance.py)
            events = [provenance.request_event(self.run), *events]
        datas = [_payload_data(event.payload, self.scrubber) for event in events]
        provenance.name_the_stopper(events, datas, self.stopper)
        texts = {sha: text.encode("utf-8") for event in events for sha, text in (event.texts or {}).items()}
        self.contexts.store_texts(texts)
        calls = [(n, self.scrubber.messages(event.messages)) for n, event in enumerate(events)
                 if event.messages is not None]
        for (n, _), sha in zip(calls, self.contexts.store_many([messages for _, messages in calls])):
            datas[n]["context"] = sha
        rows = []
        for event, data in zip(events, datas):
            self.seq += 1
            at = timezone.now()
            self.head = chain.event_hash(self.head, self.run.pk, self.seq, event.type, data, at)
            rows.append(RunEvent(run=self.run, seq=self.seq, type=event.type, data=data, at=at, hash=self.head))
        RunEvent.objects.bulk_create(rows)
        self._pending = _Pending()
        for row in rows:
            handler = getattr(self, f"_on_{row.type}", None)
            if handler:
                handler(ev.load(row.type, row.data), row)
        self._flush()
        return Recorded(rows, stop)

    def _flush(self) -> None:
        """Insert the rows the batch's events introduced, parents before children."""
        pending = self._pending
        if pending.attempts:
            attempts = Attempt.objects.bulk_create([Attempt(**row) for _, row in pending.attempts])
            self._attempts.update({key: attempt.pk for (key, _), attempt in zip(pending.attempts, attempts)})
        if pending.verdicts:
            Verdict.objects.bulk_create([Verdict(**row, attempt_id=self._attempt_id(*key))
                                         for key, row in pending.verdicts])
        if pending.calls:
            ModelCall.objects.bulk_create([ModelCall(**row) for row in pending.calls])
        if pending.warnings:
            self.warnings.extend(pending.warnings)
            self._run_rows().update(warnings=self.warnings)

    def _run_rows(self):
        return Run.objects.filter(pk=self.run.pk)

    def _step_id(self, index: int) -> int:
        if self._steps is None:
            self._steps = dict(Step.objects.filter(run_id=self.run.pk).values_list("index", "pk"))
        return self._steps[index]

    def _attempt_id(self, step: int, attempt: int) -> int:
        key = (step, attempt)
        if key not in self._attempts:  # written by an earlier recorder of this run
            self._attempts[key] = Attempt.objects.values_list("pk", flat=True).get(
                step__run=self.run, step__index=step, attempt=attempt)
        return self._attempts[key]

    # The relational record each event implies.
    def _on_brief_ready(self, p: ev.BriefReady, row: RunEvent) -> None:
        self._run_rows().update(brief=p.brief)
        name_conversation(self.run, p.brief.get("title"))
        steps = p.brief["steps"]
        created = Step.objects.bulk_create([Step(run_id=self.run.pk, index=s["index"], title=s["title"],
                                                 content_spec=s["content_spec"]) for s in steps])
        self._steps = {step.index: step.pk for step in created}

    def _on_attempt_drafted(self, p: ev.AttemptDrafted, row: RunEvent) -> None:
        self._pending.attempts.append(((p.step, p.attempt), {
            "step_id": self._step_id(p.step), "attempt": p.attempt, **projection.attempt(p)}))

    def _on_verdict_recorded(self, p: ev.VerdictRecorded, row: RunEvent) -> None:
        self._pending.verdicts.append(((p.step, p.attempt), projection.verdict(p)))

    def _on_step_released(self, p: ev.StepReleased, row: RunEvent) -> None:
        changed = Step.objects.filter(run_id=self.run.pk, index=p.step, status=Step.PENDING).update(
            **projection.release(p, row.at))
        if changed != 1:  # a step is released once, from pending; anything else is a bug upstream
            raise RuntimeError(f"step {p.step} of run {self.run.pk} cannot be released (not pending)")
        verification = combined((self.verification, step_checker(p.checked_by, self.run.topology)))
        if verification != self.verification:  # written at the first release, and again only if it changes
            self.verification = verification
            self._run_rows().update(verification=verification)

    def _on_specifics_listed(self, p: ev.SpecificsListed, row: RunEvent) -> None:
        """Advisory: the step's (or the recap's) specifics beside its content; a reading that failed
        leaves them unread (null), as on a run from before the reading."""
        if p.error is not None:
            return
        if p.step is None:
            self._run_rows().update(**projection.recap_specifics(p))
        elif Step.objects.filter(run_id=self.run.pk, index=p.step, status=Step.RELEASED).update(
                **projection.specifics(p)) != 1:
            return  # no released step of that index: nothing to annotate, nothing to count
        if p.unsourced:
            self._run_rows().update(unsourced_count=F("unsourced_count") + len(p.unsourced))

    def _on_step_halted(self, p: ev.StepHalted, row: RunEvent) -> None:
        Step.objects.filter(run=self.run, index=p.step).update(status=Step.HALTED)

    def _on_step_not_released(self, p: ev.StepNotReleased, row: RunEvent) -> None:
        Step.objects.filter(run=self.run, index=p.step, status=Step.PENDING).update(status=Step.NOT_RELEASED)

    def _on_summary_ready(self, p: ev.SummaryReady, row: RunEvent) -> None:
        self._run_rows().update(**projection.recap(p))

    def _on_requirements_traced(self, p: ev.RequirementsTraced, row: RunEvent) -> None:
        self._run_rows().update(**projection.requirements(p))

    def _add_warnings(self, *warnings: str) -> None:
        self._pending.warnings.extend(warnings)

    def _on_brief_checked(self, p: ev.BriefChecked, row: RunEvent) -> None:
        self._add_warnings(*p.warnings)

    def _on_task_checked(self, p: ev.TaskChecked, row: RunEvent) -> None:
        self._add_warnings(*p.warnings)

    def _on_summary_failed(self, p: ev.SummaryFailed, row: RunEvent) -> None:
        self._add_warnings(p.warning)

    def _on_model_call(self, p: ev.ModelCall, row: RunEvent) -> None:
        fields = projection.model_call(p)
        context = fields.pop("context__sha256")
        self._pending.calls.append({"run_id": self.run.pk, **fields,
                                    "context_id": self.contexts.records[context] if context else None})

    def _finish(self, event_type: str, reason: str | None, row: RunEvent) -> None:
        self._run_rows().update(**projection.final(event_type, reason, row.at), lease_owner=None, lease_expires_at=None)
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

    def _on_run_declined(self, p: ev.RunDeclined, row: RunEvent) -> None:
        # Nothing was released. A declined brief plans no step; a declined redo planned the earlier
        # brief's steps, none of which is released now.
        Step.objects.filter(run=self.run, status=Step.PENDING).update(status=Step.NOT_RELEASED)
        self._finish(ev.RUN_DECLINED, p.reason, row)
