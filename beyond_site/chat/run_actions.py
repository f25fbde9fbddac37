"""What a member does to a run from the chat: stop it, run its task again, redo one of its steps,
regenerate it, or edit its task and send it again (docs/working-loop.md)."""
from __future__ import annotations

import hashlib

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from beyond_site.chat.notices import calibration_required, notice_only
from beyond_site.chat.presenting import run_view
from beyond_site.runs.access import require_run
from beyond_site.runs.budgets import BudgetRefused
from beyond_site.runs.trust import CalibrationRequired
from beyond_site.runs.bells import ring_doorbell, ring_stop_bell
from beyond_site.runs.queue import (ConversationDeleted, NotRedoable, NotRetryable, edit_and_resend,
                                    may_stop, redo, regenerate, request_stop, run_again)
from beyond_site.workspaces import access


def _stop_from_form(request, slug, run_id):
    membership = access.require_membership(request, slug, access.WRITE)
    run = require_run(request, slug, run_id, access.WRITE)
    if not may_stop(run, request.user, membership):
        raise PermissionDenied("Only the member who started this run, or an admin, can stop it")
    stopped = request_stop(run.pk, request.user)
    return stopped, run.events.count()


@login_required
@require_POST
async def stop(request, slug, run_id):
    """Stop a running run (the Stop button): what is released stays, nothing more is."""
    request.user = await request.auser()  # read by login_required already: the sync part reads it again otherwise
    stopped, last_seq = await sync_to_async(_stop_from_form)(request, slug, run_id)
    if stopped:
        await ring_stop_bell(run_id)
        await ring_doorbell(run_id, last_seq)  # a queued run is cancelled already: show it
    label = "Stopping…" if stopped else "Already finished"
    return HttpResponse(f'<button type="button" class="run-stop" data-action="stop" disabled>{label}</button>')


#: The longest task a member may send (the composer, edit and resend).
MAX_TASK_CHARS = 20_000
ALREADY_AGAIN = "This run was already run again: the new run is further down."
#: Run again's idempotency keys ("again-<run id>": one new run per run, whoever clicks); a
#: submitted form's keys never start so (chat/views.py refuses one that does).
AGAIN_KEY_PREFIX = "again-"
#: The same for a redo, a regeneration and an edited task: the action on a run with the same words
#: starts one run, however many times it is posted and by whom (a double click, two tabs, a
#: replayed request); the answer to a repeat points to the run it started.
REDO_KEY_PREFIX, REGENERATE_KEY_PREFIX, EDIT_KEY_PREFIX = "redo-", "regen-", "edit-"
SERVER_KEY_PREFIXES = (AGAIN_KEY_PREFIX, REDO_KEY_PREFIX, REGENERATE_KEY_PREFIX, EDIT_KEY_PREFIX)
ALREADY_STARTED = "This was asked already: its run is further down."


def action_key(prefix: str, run_id: int, *words) -> str:
    """The idempotency key of an action on run `run_id` with `words` (a step, an instruction, a task)."""
    digest = hashlib.sha256("\x00".join(str(w) for w in words).encode()).hexdigest()[:40]
    return f"{prefix}{run_id}-{digest}"


@login_required
@require_POST
def again(request, slug, run_id):
    """Run a failed, halted or stopped run's task again, as a new run in the same conversation."""
    membership = access.require_membership(request, slug, access.WRITE)
    earlier = require_run(request, slug, run_id, access.WRITE)
    if earlier.retries.exists():
        return notice_only(request, ALREADY_AGAIN)
    # A run is run again once, whoever asks: a double click, or two members clicking at once,
    # start one new run (a new run that fails has its own Run again).
    started = _start(request, membership, lambda: run_again(earlier, user=request.user,
                                                      idempotency_key=f"{AGAIN_KEY_PREFIX}{earlier.pk}"))
    if isinstance(started, HttpResponse):
        return started
    run, created = started
    if not request.htmx:
        return redirect("chat:conversation", slug, run.conversation_id)
    if not created:
        return notice_only(request, ALREADY_AGAIN)
    ctx = {"workspace": membership.workspace, "membership": membership, "can_write": True, "earlier": earlier,
           "conversation": run.conversation, "exchange": {"text": run.task, "rv": run_view(run.pk)}}
    return render(request, "chat/_again.html", ctx)


def _start(request, membership, start):
    """`start()`'s (run, created), or the notice that says why nothing was started."""
    try:
        return start()
    except (NotRetryable, NotRedoable, ConversationDeleted) as exc:
        return notice_only(request, str(exc))
    except BudgetRefused as exc:  # over one of the workspace's caps: nothing was created
        response = notice_only(request, f"Not started: {exc.message}")
        response.status_code = 429
        return response
    except CalibrationRequired as exc:  # the workspace requires a calibration its verifier lacks
        return calibration_required(request, membership, exc.message)


def _new_run(request, membership, start):
    """Start a run with `start()` (a redo, a regeneration, an edited task) and answer with its
    exchange, appended to the conversation; a refusal is a notice and nothing else changes, and a
    repeat (the same action, already started) says where its run is."""
    started = _start(request, membership, start)
    if isinstance(started, HttpResponse):
        return started
    run, created = started
    if not request.htmx:
        return redirect("chat:conversation", membership.workspace.slug, run.conversation_id)
    if not created:
        return notice_only(request, ALREADY_STARTED)
    ctx = {"workspace": membership.workspace, "membership": membership, "can_write": True,
           "max_task_chars": MAX_TASK_CHARS, "conversation": run.conversation,
           "exchange": {"text": run.message.text, "rv": run_view(run.pk), "last": True}}
    return render(request, "chat/_new_run.html", ctx)


@login_required
@require_POST
def redo_step(request, slug, run_id, index):
    """Redo one released step of a finished run, with the member's optional instruction to its
    executor: a new run in the same conversation that carries the other steps over."""
    membership = access.require_membership(request, slug, access.WRITE)
    earlier = require_run(request, slug, run_id, access.WRITE)
    instruction = request.POST.get("instruction", "")
    if "\x00" in instruction:
        return notice_only(request, "The instruction holds a character that cannot be stored.")
    key = action_key(REDO_KEY_PREFIX, earlier.pk, index, instruction.strip())
    return _new_run(request, membership, lambda: redo(earlier, index, user=request.user, instruction=instruction,
                                                      idempotency_key=key))


@login_required
@require_POST
def regenerate_run(request, slug, run_id):
    """Draft a completed run's task anew, as a new run in the same conversation."""
    membership = access.require_membership(request, slug, access.WRITE)
    earlier = require_run(request, slug, run_id, access.WRITE)
    key = action_key(REGENERATE_KEY_PREFIX, earlier.pk)
    return _new_run(request, membership, lambda: regenerate(earlier, user=request.user, idempotency_key=key))


@login_required
@require_POST
def edit_task(request, slug, run_id):
    """Send the conversation's last task again, edited, as a new run; the earlier one stays."""
    membership = access.require_membership(request, slug, access.WRITE)
    earlier = require_run(request, slug, run_id, access.WRITE)
    task = request.POST.get("message", "").strip()
    if "\x00" in task:
        return notice_only(request, "The task holds a character that cannot be stored.")
    if len(task) > MAX_TASK_CHARS:
        return notice_only(request, f"This task is {len(task):,} characters long; a task is at most "
                                    f"{MAX_TASK_CHARS:,}. Nothing was sent.")
    key = action_key(EDIT_KEY_PREFIX, earlier.pk, task)
    return _new_run(request, membership, lambda: edit_and_resend(earlier, task, user=request.user,
                                                                 idempotency_key=key))
