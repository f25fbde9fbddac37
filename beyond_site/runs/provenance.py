"""Who asked for what: the part of a run's record that names people and the request itself.

Every run's record opens with a `run_requested` event (pipeline.events.RunRequested), written by
the recorder as the first event of the run's chain: the task, who started it (id, and username as
it was then), its conversation and message (with the message's text), the models per role, the
offline and web-research flags, its verifier's trust status (runs/trust.py), and the earlier run
it follows on from (the run it retries, the step it redoes with the member's instruction, the run
it regenerates, the run whose task it edits). A final event recorded after a member asked to stop
the run names who did (`stopped_by`, beside the event's own fields). `beyond_audit
verify` holds the run's columns, its message and its stopper to these events (`problems`), so a
run re-attributed, moved, or re-worded behind the application's back is caught like an edited
draft.

A run recorded before this existed has no `run_requested` event: its models and offline flag are
still checked against its `run_started` event; the rest cannot be, and verify says so.
"""
from __future__ import annotations

import dataclasses

from pipeline import events as ev
from pipeline.events import Event
from beyond_site.runs.models import Run
from beyond_site.runs.scrubbing import Scrubber
from beyond_site.workspaces.models import Message

#: What verify could not check on a run recorded before its request was chained.
NOT_CHECKED = "task, who started it, conversation and message"


def person(user_id: int | None, username: str | None) -> dict | None:
    return None if user_id is None else {"id": user_id, "username": username or ""}


def message_text(message_id: int) -> str | None:
    return Message.objects.filter(pk=message_id).values_list("text", flat=True).first()


def request_event(run: Run) -> Event:
    """The run_requested event of `run`, from the run as it was created."""
    text = message_text(run.message_id) if run.message_id else None
    return Event(ev.RunRequested(
        task=run.task, requested_by=person(run.created_by_id, run.created_by_name),
        conversation=run.conversation_id, message=run.message_id, message_text=text, topology=run.topology,
        offline=run.offline, research=run.research, retry_of=run.retry_of_id, verifier_trust=run.verifier_trust,
        redo_of=redo_of(run), regenerates=run.regenerates_id, edited_from=run.edited_from_id))


def redo_of(run: Run) -> dict | None:
    """A redo's link as its record gives it: the earlier run, the step redone, the instruction."""
    if run.redo_of_id is None:
        return None
    return {"run": run.redo_of_id, "step": run.redo_step, "instruction": run.redo_instruction}


def name_the_stopper(events: list[Event], datas: list[dict], stopper: dict | None) -> None:
    """Add who stopped the run to the data of a final event recorded after the stop (in place)."""
    if stopper is None:
        return
    for event, data in zip(events, datas):
        if event.type in ev.FINAL_TYPES:
            data["stopped_by"] = stopper


@dataclasses.dataclass
class Provenance:
    """What a run's events say of its request and its stop, gathered while its chain is walked."""

    requested: tuple[int, ev.RunRequested] | None = None
    started: tuple[int, ev.RunStarted] | None = None
    #: (seq of the final event, the `stopped_by` its data holds, or None).
    stopped: tuple[int, dict | None] | None = None

    def add(self, seq: int, type_: str, data: dict, payload: ev.Payload) -> None:
        if type_ == ev.RUN_REQUESTED and self.requested is None:
            self.requested = (seq, payload)
        elif type_ == ev.RUN_STARTED and self.started is None:
            self.started = (seq, payload)
        elif type_ in ev.FINAL_TYPES:
            self.stopped = (seq, data.get("stopped_by"))

    @property
    def chained(self) -> bool:
        """Whether the run's request is on its chain (false for runs recorded before it was)."""
        return self.requested is not None

    def problems(self, run_id: int) -> list[str]:
        """Each column, message or stopper that differs from the events recording it. The events were
        scrubbed as they were recorded (runs/scrubbing.py: a scripted file is named by its file name),
        so the columns are scrubbed the same way before they are compared."""
        (task, user_id, username, conversation, message, topology, offline, research, retry_of,
         stopped_by, trust, redone, redo_step, instruction, regenerates, edited_from) = Run.objects.filter(
            pk=run_id).values_list(
            "task", "created_by_id", "created_by_name", "conversation_id", "message_id", "topology", "offline",
            "research", "retry_of_id", "stopped_by_id", "verifier_trust", "redo_of_id", "redo_step",
            "redo_instruction", "regenerates_id", "edited_from_id").get()
        redo = None if redone is None else {"run": redone, "step": redo_step, "instruction": instruction}
        scrubbed = Scrubber(topology).data
        if self.requested is None:
            if self.started is None:
                return []
            seq, started = self.started
            return [f"the run's {what} does not match event {seq}"
                    for what, stored, recorded in (("models", scrubbed(topology), started.topology),
                                                   ("offline flag", offline, started.offline))
                    if stored != recorded]
        seq, asked = self.requested
        text, author = (Message.objects.filter(pk=message).values_list("text", "author_id").first() or (None, None)) \
            if message else (None, None)
        checks = (
            ("the run's task", scrubbed(task), asked.task),
            ("who started the run", scrubbed(person(user_id, username)), asked.requested_by),
            ("the run's conversation", conversation, asked.conversation),
            ("the run's message", (message, scrubbed(text), author),
             (asked.message, asked.message_text, (asked.requested_by or {}).get("id") if asked.message else None)),
            ("the run's models", scrubbed(topology), asked.topology),
            ("the run's offline flag", offline, asked.offline),
            ("the run's web research flag", research, asked.research),
            ("the run it retries", retry_of, asked.retry_of),
            ("the run's verifier trust status", scrubbed(trust), asked.verifier_trust),
            ("the step it redoes", scrubbed(redo), asked.redo_of),
            ("the run it regenerates", regenerates, asked.regenerates),
            ("the run whose task it edits", edited_from, asked.edited_from),
        )
        problems = [f"{what} does not match event {seq}" for what, stored, recorded in checks if stored != recorded]
        stop_seq, stopper = self.stopped or (None, None)
        if stopper is not None and stopped_by != stopper.get("id"):
            problems.append(f"who stopped the run does not match event {stop_seq}")
        elif stopper is None and stopped_by is not None:
            problems.append("the run names who stopped it, but no event records a stop")
        return problems
