"""Persist the pipeline's events: the event log first, the relational record beside it.

Each event is written in one transaction (RunEvent row + the rows it implies) before anyone is
told about it, so the page, a reconnecting browser and the audit trail all replay the same truth.
"""
from __future__ import annotations

import hashlib

from django.db import transaction
from django.utils import timezone

from pipeline import events as ev
from pipeline.events import Event
from pipeline.providers.base import Message
from beyond_site.runs.models import Attempt, ContextRecord, ModelCall, Run, RunEvent, Step, Verdict
from beyond_site.workspaces.models import Blob

FINAL_STATUS = {ev.RUN_COMPLETED: Run.COMPLETED, ev.RUN_HALTED: Run.HALTED, ev.RUN_FAILED: Run.FAILED}


def store_blob(text: str) -> tuple[str, int]:
    """Store text content-addressed; return (sha256, size). Existing content is not copied again."""
    data = text.encode("utf-8")
    return Blob.store(data), len(data)


def _message_parts(message: Message) -> list[str]:
    # The stable context is one long message made of "# " sections (render_context). Storing each
    # section as its own blob means an unchanged document is stored once however many runs use it,
    # even when a memory or the task around it changed. Joining the parts gives the message back.
    first, *rest = message.content.split("\n\n# ")
    return [first, *("\n\n# " + piece for piece in rest)]


def store_context(messages: tuple[Message, ...]) -> ContextRecord:
    parts = []
    for number, message in enumerate(messages):
        for piece in _message_parts(message):
            digest, size = store_blob(piece)
            parts.append({"message": number, "role": message.role, "blob": digest, "size": size})
    record_hash = hashlib.sha256(
        repr([(p["message"], p["role"], p["blob"]) for p in parts]).encode()).hexdigest()
    record, _ = ContextRecord.objects.get_or_create(sha256=record_hash, defaults={"parts": parts})
    return record


def context_messages(record: ContextRecord) -> list[dict]:
    """Rebuild exactly the messages a call was given: [{"role", "content"}]."""
    blobs = {b.sha256: bytes(b.data).decode("utf-8")
             for b in Blob.objects.filter(sha256__in={p["blob"] for p in record.parts})}
    messages: dict[int, dict] = {}
    for part in record.parts:
        message = messages.setdefault(part["message"], {"role": part["role"], "content": ""})
        message["content"] += blobs[part["blob"]]
    return [messages[n] for n in sorted(messages)]


def _cut(value: str | None, length: int) -> str | None:
    return value[:length] if value else value


class RecordRefused(Exception):
    """The run is no longer this runner's to write: finished, or taken over by the reaper."""


class EventRecorder:
    """Writes one run's events in order; `seq` is per run and gap-free.

    With an `owner`, every write first checks, inside its transaction, that the run is still
    running under that owner's lease: a runner the reaper gave up on cannot add to the record.
    """

    def __init__(self, run: Run, owner: str | None = None):
        self.run = run
        self.owner = owner
        self.seq = RunEvent.objects.filter(run=run).count()

    @transaction.atomic
    def record(self, event: Event) -> RunEvent:
        if self.owner is not None and not Run.objects.select_for_update().filter(
                pk=self.run.pk, status=Run.RUNNING, lease_owner=self.owner).exists():
            raise RecordRefused(f"run {self.run.pk} is not running under {self.owner}")
        data = dict(event.data)
        if event.messages is not None:
            data["context"] = store_context(event.messages).sha256
        self.seq += 1
        row = RunEvent.objects.create(run=self.run, seq=self.seq, type=event.type, data=data, at=timezone.now())
        handler = getattr(self, f"_on_{event.type}", None)
        if handler:
            handler(data, row)
        return row

    # The relational record each event implies.
    def _on_brief_ready(self, data: dict, row: RunEvent) -> None:
        Run.objects.filter(pk=self.run.pk).update(brief=data["brief"])
        Step.objects.bulk_create(
            Step(run=self.run, index=s["index"], title=s["title"], content_spec=s["content_spec"])
            for s in data["brief"]["steps"]
        )

    def _on_attempt_drafted(self, data: dict, row: RunEvent) -> None:
        step = Step.objects.get(run=self.run, index=data["step"])
        Attempt.objects.create(step=step, attempt=data["attempt"], draft=data["draft"], truncated=data["truncated"])

    def _on_verdict_recorded(self, data: dict, row: RunEvent) -> None:
        attempt = Attempt.objects.get(step__run=self.run, step__index=data["step"], attempt=data["attempt"])
        Verdict.objects.create(attempt=attempt, source=data["source"], raw=data["raw"], parsed=data["parsed"],
                               error=data["error"])

    def _on_step_released(self, data: dict, row: RunEvent) -> None:
        changed = Step.objects.filter(run=self.run, index=data["step"], status=Step.PENDING).update(
            status=Step.RELEASED, badge=data["badge"], content=data["content"], warnings=data["warnings"],
            released_at=row.at)
        if changed != 1:  # a step is released once, from pending; anything else is a bug upstream
            raise RuntimeError(f"step {data['step']} of run {self.run.pk} cannot be released (not pending)")

    def _on_step_halted(self, data: dict, row: RunEvent) -> None:
        Step.objects.filter(run=self.run, index=data["step"]).update(status=Step.HALTED)

    def _on_step_not_released(self, data: dict, row: RunEvent) -> None:
        Step.objects.filter(run=self.run, index=data["step"]).update(status=Step.NOT_RELEASED)

    def _on_summary_ready(self, data: dict, row: RunEvent) -> None:
        Run.objects.filter(pk=self.run.pk).update(summary=data["summary"])

    def _add_warnings(self, *warnings: str) -> None:
        self.run.refresh_from_db(fields=["warnings"])
        Run.objects.filter(pk=self.run.pk).update(warnings=[*self.run.warnings, *warnings])

    def _on_brief_checked(self, data: dict, row: RunEvent) -> None:
        self._add_warnings(*data["warnings"])

    def _on_summary_failed(self, data: dict, row: RunEvent) -> None:
        self._add_warnings(data["warning"])

    def _on_model_call(self, data: dict, row: RunEvent) -> None:
        usage = data.get("usage") or {}
        ModelCall.objects.create(
            run=self.run, role=data["role"], step_index=data.get("step"), attempt=data.get("attempt"),
            # Provider-supplied strings are cut to their columns: an odd reply must not stop the record.
            provider=data["provider"][:20], model=data["model"][:200], model_served=_cut(data.get("model_served"), 200),
            effort=data["effort"][:10], latency_s=data.get("latency_s") or 0,
            input_tokens=usage.get("input", 0), cache_read_tokens=usage.get("cache_read", 0),
            cache_write_tokens=usage.get("cache_write", 0), output_tokens=usage.get("output", 0),
            reasoning_tokens=usage.get("reasoning", 0), cost=data.get("cost"),
            transport_retries=data.get("transport_retries") or 0, finish_reason=_cut(data.get("finish_reason"), 40),
            error=data.get("error"), context=ContextRecord.objects.get(sha256=data["context"]) if data.get("context") else None,
        )

    def _finish(self, event_type: str, data: dict, row: RunEvent) -> None:
        Run.objects.filter(pk=self.run.pk).update(
            status=FINAL_STATUS[event_type], halt_reason=data.get("reason"), finished_at=row.at,
            lease_owner=None, lease_expires_at=None)

    def _on_run_completed(self, data: dict, row: RunEvent) -> None:
        self._finish(ev.RUN_COMPLETED, data, row)

    def _on_run_halted(self, data: dict, row: RunEvent) -> None:
        self._finish(ev.RUN_HALTED, data, row)

    def _on_run_failed(self, data: dict, row: RunEvent) -> None:
        # A failure can come before the brief (planner) or at any point (a crash): whatever was
        # not yet released stays unreleased, on the record.
        Step.objects.filter(run=self.run, status=Step.PENDING).update(status=Step.NOT_RELEASED)
        self._finish(ev.RUN_FAILED, data, row)
