"""Exports written off the request (issue 49's review, finding 4: a 2.9 MB document cost 223 s of
CPU as PDF inside its request, and eight spreadsheet exports held every request slot).

Word, PDF and Excel files are written by a background task (runs/jobs.py, the exports queue), each
at most once for the exact document it is made from: the file is kept (`ExportFile`) under a key
that covers the run, the format, the edition, the options and what the document says, so asking
again serves it at once, and a rename or a final mark makes a new one. A document larger than
BEYOND_EXPORT_MAX_CHARS is refused before any work with the reason; a file still being written
after BEYOND_EXPORT_TIMEOUT_S is given up with the reason. The request that asks waits a little
(BEYOND_EXPORT_WAIT_S): a usual document is there by then; a large one is answered "being
prepared" (the page reloads itself until the file comes; the API says 202 with Retry-After).
Markdown and the run trace are cheap and written in the request, as before.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import time
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from beyond_site.exports.document import NOTE_KINDS, Options
from beyond_site.exports.editions import build
from beyond_site.exports.formats import FORMATS
from beyond_site.exports.models import ExportFile
from beyond_site.lib import leases
from beyond_site.runs import jobs
from beyond_site.runs.models import Run

log = logging.getLogger("beyond.exports")

RENDER_TASK = "exports.render"
#: Formats written off the request; the others are cheap enough to write in it.
IN_THE_BACKGROUND = ("docx", "pdf", "xlsx")
#: How often a waiting request looks again.
POLL_S = 0.1
INTERRUPTED = "The export was interrupted: ask for it again."


class TooLarge(Exception):
    """The document is larger than an export may be; str() says so in words."""


def export_key(run: Run, ext: str, edition: str, options: Options) -> tuple[str, int]:
    """(the key of the file these choices make, the document's size in characters). Reading the
    document is cheap; writing it as a file is what costs."""
    document = build(run, edition, NOTE_KINDS[ext], options)
    said = repr(dataclasses.replace(document, run=None))
    content = json.dumps([run.pk, ext, edition, dataclasses.asdict(options), said], default=str)
    return hashlib.sha256(content.encode("utf-8")).hexdigest(), len(said)


def request_export(run: Run, ext: str, edition: str, options: Options, user=None) -> ExportFile:
    """The export of these choices: found (written, being written, or failed with its reason), or
    asked for now. TooLarge for a document over the limit, before any work."""
    key, size = export_key(run, ext, edition, options)
    found = ExportFile.objects.filter(key=key).first()
    if found is not None and not _given_up(found):
        return found
    if size > settings.BEYOND_EXPORT_MAX_CHARS:
        raise TooLarge(f"This document is too large to write as {FORMATS[ext].label} here ({size:,} characters; "
                       f"the limit is {settings.BEYOND_EXPORT_MAX_CHARS:,}): export it as Markdown.")
    try:
        with transaction.atomic():
            if found is not None:
                found.delete()  # an earlier try whose writer is gone: asked again
            made = ExportFile.objects.create(run=run, key=key, ext=ext, edition=edition,
                                             options=dataclasses.asdict(options), requested_by=user)
            # Earlier files of this run's format and edition are of a document that has changed.
            ExportFile.objects.filter(run=run, ext=ext, edition=edition, options=made.options).exclude(
                pk=made.pk).delete()
            if jobs.engine_enabled() or jobs.executes_here():
                jobs.defer(RENDER_TASK, export_id=made.pk, member=getattr(user, "pk", None))
    except IntegrityError:  # asked at the same moment by another request: that one is the file
        return ExportFile.objects.get(key=key)
    if not (jobs.engine_enabled() or jobs.executes_here()):
        jobs.run_now(RENDER_TASK, export_id=made.pk)  # a command or a test: written here and now
    return made


def _given_up(export: ExportFile) -> bool:
    """A file whose writer was gone (the sweeps said so) is asked for again."""
    return export.status == ExportFile.Status.FAILED and export.reason == INTERRUPTED


def wait_for(export: ExportFile, seconds: float) -> ExportFile:
    """The export as it stands after waiting up to `seconds` for it to be written (or given up:
    past BEYOND_EXPORT_TIMEOUT_S it is failed with the reason)."""
    deadline = time.monotonic() + seconds
    while True:
        export.refresh_from_db()
        if export.status in (ExportFile.Status.READY, ExportFile.Status.FAILED):
            return export
        if _overdue(export):
            return export
        if time.monotonic() >= deadline:
            return export
        time.sleep(POLL_S)


def _overdue(export: ExportFile) -> bool:
    limit = timedelta(seconds=settings.BEYOND_EXPORT_TIMEOUT_S)
    if export.started_at is None or timezone.now() - export.started_at < limit:
        return False
    reason = (f"Writing this document as {FORMATS[export.ext].label} took longer than "
              f"{settings.BEYOND_EXPORT_TIMEOUT_S} s: export it as Markdown.")
    ExportFile.objects.filter(pk=export.pk, status=ExportFile.Status.RUNNING).update(
        status=ExportFile.Status.FAILED, reason=reason, finished_at=timezone.now(), lease_owner=None)
    export.refresh_from_db()
    return True


def render(export_id: int, owner: str) -> str:
    """Write one export (the task): claimed, written, stored; a failure is stored with its reason
    (the other formats still work). Returns the status it ends in."""
    claimable = ExportFile.objects.filter(pk=export_id, status=ExportFile.Status.PENDING)
    # No lease to renew: a writer that is gone is found by its owner (lib/leases.py `abandoned`),
    # and one that takes too long is given up by the requests waiting for it (`_overdue`).
    if not leases.claim(claimable, owner, leased=False, status=ExportFile.Status.RUNNING, started_at=timezone.now()):
        return "taken"
    export = ExportFile.objects.select_related("run__workspace").get(pk=export_id)
    written = _write(export.run, export.ext, export.edition, Options(**export.options))
    done = ({"status": ExportFile.Status.READY, "body": written} if isinstance(written, bytes) else
            {"status": ExportFile.Status.FAILED, "reason": written})
    # Only while still this writer's (a file given up for taking too long stays failed).
    leases.held(ExportFile.objects.filter(pk=export_id, status=ExportFile.Status.RUNNING), owner).update(
        **done, finished_at=timezone.now(), lease_owner=None, lease_expires_at=None)
    return ExportFile.objects.filter(pk=export_id).values_list("status", flat=True).get()


#: What `written_export` says of a file still being written.
PREPARING = "preparing"


def written_export(run, ext: str, edition: str, options: Options, user=None) -> bytes | str:
    """The file, once written (bytes); or in words why not: PREPARING while it is being written
    (exports/jobs.py), else the reason it cannot be (the run's other formats still work). Markdown
    and the trace are written here; Word, PDF and Excel off the request."""
    if ext not in IN_THE_BACKGROUND:
        return _write(run, ext, edition, options)
    try:
        export = request_export(run, ext, edition, options, user)
    except TooLarge as exc:
        return str(exc)
    export = wait_for(export, settings.BEYOND_EXPORT_WAIT_S)
    if export.status == ExportFile.Status.READY:
        return bytes(export.body)
    return export.reason if export.status == ExportFile.Status.FAILED else PREPARING


def _write(run: Run, ext: str, edition: str, options: Options) -> bytes | str:
    """The file (bytes), or why it could not be written, in words: the run's other formats still
    work, and the error is in the log for the operator."""
    fmt = FORMATS[ext]
    try:
        return fmt.render(run, edition, options)
    except Exception as exc:
        log.exception("export %s of run %s failed", ext, run.pk)
        return f"{fmt.label} could not be written ({type(exc).__name__})"


def pending() -> list[dict]:
    """Exports asked for and not yet taken (a server stopped before it wrote them), for the sweeps."""
    return [{"export_id": pk} for pk in ExportFile.objects.filter(status=ExportFile.Status.PENDING)
            .values_list("pk", flat=True)]


def reap_abandoned() -> int:
    """Exports whose writer is gone: failed with the reason (asked again, they are written anew)."""
    gone = [pk for pk, _ in leases.abandoned(ExportFile.objects.filter(status=ExportFile.Status.RUNNING))]
    return ExportFile.objects.filter(pk__in=gone, status=ExportFile.Status.RUNNING).update(
        status=ExportFile.Status.FAILED, reason=INTERRUPTED,
        finished_at=timezone.now(), lease_owner=None)
