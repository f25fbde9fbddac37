"""The run queue: starting a run (the chat, Run again, `beyond_run`), claiming it, stopping it.

Executing a claimed run is the runner's (`runner.py`); where it executes (this server, a worker)
is the job interface's (`jobs.py`).
"""
from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from pipeline import events as ev
from pipeline.events import Event
from pipeline.topology import ROLES, Topology
from beyond_site.lib import leases
from beyond_site.lib.inputs import without_bidi_controls
from beyond_site.lib.runners import runner_identity
from beyond_site.runs import jobs
from beyond_site.runs.budgets import check_submission
from beyond_site.runs.models import Run
from beyond_site.runs.provenance import person
from beyond_site.runs.recorder import EventRecorder, stop_reason
from beyond_site.runs.trust import Requirement, check_requirement, trust_status
from beyond_site.workspaces.configuration import resolve_topology
from beyond_site.workspaces.conversations import conversation_title
from beyond_site.workspaces.models import Conversation, Message, Workspace

RUN_TASK = "beyond.execute_run"


class ConversationDeleted(ValueError):
    """No new run joins a deleted conversation."""


def start_run(workspace: Workspace, task: str, *, user=None, conversation: Conversation | None = None,
              topology: Topology | None = None, idempotency_key: str | None = None,
              research: bool = False, run_here: bool = False, retry_of: Run | None = None,
              message_text: str | None = None, **lineage) -> tuple[Run, bool]:
    """Queue a run for `task` as a new message of `conversation` (a new conversation when None);
    returns (run, created). A replayed submission (the same idempotency key) creates nothing and
    returns the run that key already started, in that run's own conversation. A submission over
    one of the workspace's caps raises BudgetRefused (runs/budgets.py) and creates nothing; so does
    a verifier without the calibration the workspace requires (CalibrationRequired, runs/trust.py).
    The run records its verifier's trust status as it is now (`Run.verifier_trust`).

    The run is executed off the request (`jobs.defer`), unless the caller executes it itself
    (`run_here`, as `beyond_run` does). Where this process executes deferred work itself (the
    embedded server), the run is created already claimed by it: under a burst of submissions, a
    separate claim would wait behind every other run's writes (docs/architecture.md).

    `message_text`: the member's message when it is not the task itself (a redo's "Redo step 2");
    `lineage`: the earlier run this one follows on from (`redo_of`, `redo_step`, `redo_instruction`,
    `regenerates`, `edited_from`: docs/working-loop.md)."""
    task = without_bidi_controls(task)  # they make a task read otherwise than it is (lib/inputs.py)
    replayed = _run_of_key(workspace, idempotency_key)
    if replayed is not None:
        return replayed, False
    if conversation is not None and conversation.deleted_at is not None:
        raise ConversationDeleted("This conversation was deleted: start a new one.")
    topo = resolve_topology(workspace, topology)
    requirement = Requirement.of(workspace.calibration_requirement)
    trust = trust_status(workspace.pk, topo.as_json(), requirement)
    check_requirement(trust, requirement)  # before anything exists, like a cap of the budget
    claimed = _claimed_fields(runner_identity()) if jobs.executes_here() and not run_here else {}
    try:
        with transaction.atomic():  # a new conversation exists only with its run
            check_submission(workspace, user)  # locks the workspace row when it caps submissions
            conversation = _conversation_for(workspace, conversation, task, user)
            message = Message.objects.create(conversation=conversation, text=message_text or task, author=user)
            run = Run.objects.create(workspace=workspace, conversation=conversation, message=message, task=task,
                                     topology=topo.as_json(), created_by=user, idempotency_key=idempotency_key,
                                     offline=any(topo.role(r).provider == "offline" for r in ROLES),
                                     research=research, retry_of=retry_of, verifier_trust=trust, **lineage,
                                     **claimed)
            if not run_here:
                jobs.defer(RUN_TASK, run_id=run.pk)
    except IntegrityError:
        # Two submissions with one key raced: the other one won, and that run is this task's run.
        return Run.objects.get(workspace=workspace, idempotency_key=idempotency_key), False
    return run, True


def _run_of_key(workspace: Workspace, idempotency_key: str | None) -> Run | None:
    """The run a submission's key started already, or None."""
    if not idempotency_key:
        return None
    # Whether the key started a run already, read as that run's id: nearly every key is new, and
    # reading the whole row (some fifty columns) tripled this read's cost at every submission
    # (bench/README.md, "Issue 30: what a submission runs").
    used = list(Run.objects.filter(workspace=workspace, idempotency_key=idempotency_key).order_by()
                .values_list("pk", flat=True)[:1])  # one run per key: no ordering either
    return Run.objects.get(pk=used[0]) if used else None


def _conversation_for(workspace: Workspace, conversation: Conversation | None, task: str, user) -> Conversation:
    """The conversation the task goes into: a new one named after it, or the given one, moved to
    the top of the list (and named after the task, when an upload started it)."""
    if conversation is None:
        return Conversation.objects.create(workspace=workspace, title=conversation_title(task), created_by=user)
    if not conversation.messages.exists():
        # A conversation started by an upload takes its first task's name.
        conversation.title = conversation_title(task)
    conversation.save(update_fields=["title", "updated_at"])  # most recent first in the list
    return conversation


class NotRetryable(ValueError):
    """Only a run that failed, halted or was stopped can be run again."""


def run_again(run: Run, *, user, idempotency_key: str | None = None) -> tuple[Run, bool]:
    """The same task as a new run in the same conversation, linked to `run` (which stays on record)."""
    if run.status not in Run.RETRYABLE:
        raise NotRetryable("Only a run that failed, halted or was stopped can be run again.")
    if run.redo_of_id is not None:  # a redo that did not complete is redone again, not planned anew
        return redo(run.redo_of, run.redo_step, user=user, instruction=run.redo_instruction,
                    idempotency_key=idempotency_key, retry_of=run)
    return start_run(run.workspace, run.task, user=user, conversation=run.conversation, retry_of=run,
                     research=run.research, idempotency_key=idempotency_key)


class NotRedoable(ValueError):
    """This step of this run cannot be redone, regenerated or edited: the message says why."""


#: A redo's instruction to the executor, at most (the form and `beyond_run` say so up front).
INSTRUCTION_CHARS = 2000


def redo_message(step: int, title: str, instruction: str) -> str:
    """What the conversation shows (and later runs see) of a redo: which step, and the instruction."""
    text = f"Redo step {step} ({title})"
    return f"{text}: {instruction}" if instruction else text


def redo(run: Run, step: int, *, user=None, instruction: str = "", idempotency_key: str | None = None,
         run_here: bool = False, topology: Topology | None = None, retry_of: Run | None = None) -> tuple[Run, bool]:
    """Redo step `step` of the finished run `run` (docs/working-loop.md): a new run in the same
    conversation, with `run`'s task and brief, that renders and inspects that step anew (the
    executor told `instruction`) and carries the other steps over. `run` stays as it is."""
    instruction = " ".join(without_bidi_controls(instruction or "").split())
    if len(instruction) > INSTRUCTION_CHARS:
        raise NotRedoable(f"The instruction is too long: {INSTRUCTION_CHARS} characters at most.")
    if run.status not in Run.FINISHED:
        raise NotRedoable(f"Run {run.pk} has not finished: wait for it, or stop it, before redoing a step.")
    target = run.steps.filter(index=step).first()
    if target is None or not run.brief:
        count = run.steps.count()
        raise NotRedoable(f"Run {run.pk} has no step {step}" + (f" (its steps are 1 to {count})." if count else "."))
    if target.status != target.RELEASED:
        raise NotRedoable(f"Step {step} of run {run.pk} was not released: only a released step can be redone "
                          "(run the task again instead).")
    if run.conversation is None:
        raise NotRedoable(f"Run {run.pk} belongs to no conversation: there is no document to redo a step of.")
    return start_run(run.workspace, run.task, user=user, conversation=run.conversation, research=run.research,
                     topology=topology, idempotency_key=idempotency_key, run_here=run_here, retry_of=retry_of,
                     message_text=redo_message(step, target.title, instruction),
                     redo_of=run, redo_step=step, redo_instruction=instruction)


def regenerate(run: Run, *, user, idempotency_key: str | None = None) -> tuple[Run, bool]:
    """Draft a completed run's task anew, as a new run in the same conversation (`run` stays)."""
    if run.status != Run.COMPLETED:
        raise NotRedoable("Only a completed run can be regenerated (a run that did not complete has Run again).")
    return start_run(run.workspace, run.task, user=user, conversation=run.conversation, research=run.research,
                     idempotency_key=idempotency_key, regenerates=run)


def last_run(conversation) -> Run | None:
    """The run of the conversation's last message (None when that message started no run)."""
    message = conversation.messages.order_by("-created_at", "-id").first()
    return Run.objects.filter(message=message).first() if message is not None else None


def edit_and_resend(run: Run, task: str, *, user, idempotency_key: str | None = None) -> tuple[Run, bool]:
    """The conversation's last task, edited, as a new run; `run` (the one it asked for) stays on
    record, linked from the new one."""
    if not task.strip():
        raise NotRedoable("The edited task is empty.")
    if run.conversation is None or (last := last_run(run.conversation)) is None or last.pk != run.pk:
        raise NotRedoable("Only the conversation's last task can be edited and sent again.")
    if run.status not in Run.FINISHED:
        raise NotRedoable("This task's run has not finished: wait for it, or stop it, before editing the task.")
    return start_run(run.workspace, task, user=user, conversation=run.conversation, research=run.research,
                     idempotency_key=idempotency_key, edited_from=run)


def _claimed_fields(owner: str, *, leased: bool = True) -> dict:
    return {"status": Run.RUNNING, "started_at": timezone.now(), **leases.lease_fields(owner, leased=leased)}


def claim_run(run_id: int, owner: str, *, leased: bool = True) -> bool:
    """Take a queued run (lib/leases.py). A runner outside the job engine takes a lease it must
    renew; a job-engine worker takes none (the engine's worker heartbeats say whether it is alive)."""
    return leases.claim(Run.objects.filter(pk=run_id, status=Run.QUEUED), owner, leased=leased,
                        status=Run.RUNNING, started_at=timezone.now())


def claim_next_run(owner: str) -> int | None:
    for run_id in Run.objects.filter(status=Run.QUEUED).order_by("created_at", "id").values_list("id", flat=True)[:5]:
        if claim_run(run_id, owner):
            return run_id
    return None


def may_stop(run: Run, user, membership) -> bool:
    """The member who started a run may stop it, and so may the workspace's admins."""
    from_admin = membership is not None and membership.role == membership.ADMIN
    return from_admin or (run.created_by_id is not None and run.created_by_id == getattr(user, "pk", None))


def request_stop(run_id: int, user) -> bool:
    """Stop a queued or running run; False when it had already finished. A queued run is cancelled
    at once (taking it with the same claim a runner would, so no runner starts it meanwhile); a
    running one is marked, and its runner, told through the stop bell or its own check, stops it.
    From the mark on, nothing more of it is released."""
    if claim_run(run_id, "stopper"):
        Run.objects.filter(pk=run_id).update(stopped_by=user)
        recorder = EventRecorder(Run.objects.get(pk=run_id), owner="stopper")
        recorder.stopper = person(user.pk, user.get_username())  # named in the final event, as any stop
        recorder.record(Event(ev.RunCancelled(reason=stop_reason(user.get_username()))))
        return True
    return Run.objects.filter(pk=run_id, status=Run.RUNNING, stop_requested_at=None).update(
        stop_requested_at=timezone.now(), stopped_by=user) == 1
