"""Runs over the API (docs/api.md): start one, read its trace, stop it, redo a step, regenerate,
download its deliverable. The services are the chat's own (runs/queue.py), so a run started here
is a run like any other."""
from __future__ import annotations

import hashlib
import json
from typing import Literal

from asgiref.sync import async_to_sync
from django.http import Http404, HttpResponse
from ninja import Header, Query, Status, Schema
from ninja.errors import HttpError

from beyond_site.lib.downloads import attachment
from beyond_site.api.base import api, membership, run_for
from beyond_site.api.schemas import Problem, RedoIn, RunIn, RunStarted, Stopped, Trace, answers
from beyond_site.exports.document import filename, nothing_to_export
from beyond_site.workspaces.models import CLASSIFICATIONS
from beyond_site.exports import jobs as export_jobs
from beyond_site.exports.formats import FORMATS
from beyond_site.exports.views import options_from
from beyond_site.runs.bells import ring_doorbell, ring_stop_bell
from beyond_site.runs.budgets import BudgetRefused
from beyond_site.runs.models import Run, RunEvent
from beyond_site.runs import queue, selectors
from beyond_site.runs.queue import (ConversationDeleted, NotRedoable, NotRetryable, may_stop, redo, regenerate,
                                    request_stop)
from beyond_site.runs.trust import CalibrationRequired
from beyond_site.workspaces.access import WRITE
from beyond_site.workspaces.models import Conversation, Document


#: An Idempotency-Key is kept as the run's key, under this prefix (a form's keys never have it).
KEY_PREFIX = "api-"


def _started(run: Run, created: bool) -> dict:
    return {"id": run.pk, "status": run.status, "conversation": run.conversation_id, "created": created,
            "trace": f"/api/v1/runs/{run.pk}", "events": f"/api/v1/runs/{run.pk}/events"}


def _refusing(start):
    """`start()`'s (run, created), with the chat's refusals as problems: over a budget (429), a
    calibration the workspace requires (403), a conversation deleted or a run that cannot be
    redone (409)."""
    try:
        return start()
    except BudgetRefused as exc:
        raise HttpError(429, f"Not started: {exc.message}") from None
    except CalibrationRequired as exc:
        raise HttpError(403, exc.message) from None
    except (ConversationDeleted, NotRedoable, NotRetryable) as exc:
        raise HttpError(409, str(exc)) from None


def _key(request, value: str) -> str | None:
    """The run's key for the caller's Idempotency-Key: theirs alone (another person's same key is
    another key), of a fixed length whatever the client sent."""
    if not value:
        return None
    return KEY_PREFIX + hashlib.sha256(f"{request.user.pk}\0{value}".encode()).hexdigest()[:64]


def idempotency_key_header():
    return Header("", alias="Idempotency-Key", pattern=r"^[!-~]{1,200}$",
                  description="Up to 200 visible ASCII characters (a UUID, say): the same key again from the same "
                              "person answers the run it started, rather than starting a second one.")


def _links_to_the_run(name: str) -> dict:
    """OpenAPI links from an answer naming a run (`id`) to what a client does next with it."""
    run = {"run_id": "$response.body#/id"}
    return {"responses": {202: {"links": {
        f"{name}Trace": {"operationId": "run_trace", "parameters": run},
        f"{name}Events": {"operationId": "run_events", "parameters": run},
        f"{name}Stop": {"operationId": "stop_run", "parameters": run},
        f"{name}Export": {"operationId": "export_run", "parameters": run},
        f"{name}Redo": {"operationId": "redo_step", "parameters": run},
        f"{name}Regenerate": {"operationId": "regenerate_run", "parameters": run}}}}}


@api.post("/workspaces/{slug}/runs", response=answers({202: RunStarted}), tags=["runs"],
          openapi_extra=_links_to_the_run("Started"))
def start_run(request, slug: str, body: RunIn, idempotency_key: str = idempotency_key_header()):
    """Start a run of `task` (a new conversation, or `conversation`'s follow-up)."""
    found = membership(request, slug, WRITE)
    conversation = None
    if body.conversation is not None:
        conversation = Conversation.visible.filter(workspace=found.workspace, pk=body.conversation).first()
        if conversation is None:
            raise Http404("No such conversation")
    for document in Document.objects.filter(workspace=found.workspace, pk__in=body.files).only("status", "name"):
        if document.status != Document.READY:
            raise HttpError(409, f"The file {document.name!r} is not read yet ({document.status}).")
    if len(set(body.files)) != Document.objects.filter(workspace=found.workspace, pk__in=body.files).count():
        raise Http404("No such file")
    key = _key(request, idempotency_key)
    run, created = _refusing(lambda: queue.start_run(found.workspace, body.task, user=request.user,
                                                     conversation=conversation, idempotency_key=key,
                                                     research=body.research))
    return Status(202, _started(run, created))


@api.get("/runs/{run_id}", response=answers({200: Trace}), tags=["runs"])
def run_trace(request, run_id: int):
    """The run trace: the same JSON as `beyond_run --json`."""
    run, _ = run_for(request, run_id)
    return selectors.run_trace(run)


@api.post("/runs/{run_id}/stop", response=answers({200: Stopped}), tags=["runs"])
def stop_run(request, run_id: int):
    """Stop a queued or running run: what is released stays, nothing more is."""
    run, found = run_for(request, run_id, WRITE)
    if not may_stop(run, request.user, found):
        raise HttpError(403, "Only the member who started this run, or an admin, may stop it.")
    stopping = request_stop(run.pk, request.user)
    if stopping:
        async_to_sync(ring_stop_bell)(run.pk)
        last = RunEvent.objects.filter(run_id=run.pk).order_by("-seq").values_list("seq", flat=True).first()
        async_to_sync(ring_doorbell)(run.pk, last or 0)
    return {"id": run.pk, "stopping": stopping, "status": Run.objects.get(pk=run.pk).status}


@api.post("/runs/{run_id}/redo", response=answers({202: RunStarted}), tags=["runs"],
          openapi_extra=_links_to_the_run("Redone"))
def redo_step(request, run_id: int, body: RedoIn,
              idempotency_key: str = idempotency_key_header()):
    """Redo one released step of a finished run, with an optional instruction to its executor."""
    run, _ = run_for(request, run_id, WRITE)
    new, created = _refusing(lambda: redo(run, body.step, user=request.user, instruction=body.instruction,
                                          idempotency_key=_key(request, idempotency_key)))
    return Status(202, _started(new, created))


@api.post("/runs/{run_id}/regenerate", response=answers({202: RunStarted}), tags=["runs"],
          openapi_extra=_links_to_the_run("Regenerated"))
def regenerate_run(request, run_id: int, idempotency_key: str = idempotency_key_header()):
    """Draft a completed run's task anew, as a new run in the same conversation."""
    run, _ = run_for(request, run_id, WRITE)
    new, created = _refusing(lambda: regenerate(run, user=request.user, idempotency_key=_key(request, idempotency_key)))
    return Status(202, _started(new, created))


Format = Literal[tuple(FORMATS)]
Edition = Literal["client", "audit"]
Classification = Literal[CLASSIFICATIONS]
#: What an export answers, by format: a file, or the run trace as JSON.
DOCUMENT_TYPES = {f.content_type.split(";")[0]: {"schema": {"type": "string", "format": "binary"}}
                  for f in FORMATS.values()}
DOCUMENT_TYPES["application/json"] = {"schema": {"$ref": "#/components/schemas/Trace"}}


class Preparing(Schema):
    status: Literal["preparing"]
    detail: str


@api.get("/runs/{run_id}/export", response=answers({200: None, 202: Preparing, 422: Problem}), tags=["runs"],
         openapi_extra={"responses": {200: {"description": "The file", "content": DOCUMENT_TYPES}}})
def export_run(request, run_id: int, format: Format = "md", edition: Edition = "audit",
               classification: Classification | None = Query(None, description="The marking on every page "
                                                                                "(the workspace's when omitted)."),
               endnotes: bool = Query(False, description="In the client edition, sources as numbered endnotes.")):
    """The deliverable in `format` and `edition`, or the run trace (`json`); for a finished run."""
    run, _ = run_for(request, run_id)
    if not run.is_finished:
        raise HttpError(409, "This run has not finished yet: export it when it has.")
    nothing = nothing_to_export(run)
    if nothing and format != "json":
        raise HttpError(409, nothing)
    fmt = FORMATS[format]
    options = options_from({"classification": classification, "endnotes": "1" if endnotes else ""})
    written = export_jobs.written_export(run, format, edition, options, request.user)
    if written == export_jobs.PREPARING:  # a large document, being written: ask again
        response = HttpResponse(json.dumps({"status": "preparing", "detail": f"The {fmt.label} is being written: "
                                            "ask again in a moment."}), status=202, content_type="application/json")
        response["Retry-After"] = "1"  # a large document's file, written off the request (exports/jobs.py)
        return response
    if not isinstance(written, bytes):  # as the page says it: why, and which formats still work
        others = ", ".join(other for other in FORMATS if other not in (format, "json"))
        raise HttpError(422, f"This document could not be written as {fmt.label}: {written}; it can be exported "
                             f"as {others}.")
    response = attachment(written, fmt.content_type, filename(run, format, edition))
    if run.requirements_gaps and edition == "client":
        response["Beyond-Coverage"] = f"{run.requirements_met} of {run.requirements_total} requirements met"
    return response
