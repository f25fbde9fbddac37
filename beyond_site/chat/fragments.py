"""HTML fragments pushed over a run's websocket: out-of-band swaps keyed by stable element ids
(templates/jinja2/chat/, rendered by the Jinja2 environment of chat/jinja.py).

Every fragment is rendered from the current database state, not from the event's payload, so
sending one twice (a reconnect, a doorbell that raced a snapshot) changes nothing.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

from django.conf import settings
from django.template import engines

from pipeline import events as ev
from django.db.models import Exists, OuterRef

from beyond_site.chat.presenting import (PROGRESS_TYPES, RunRead, RunView, changed_steps, recap_changed, run_view,
                                         tail_view)
from beyond_site.lib.prepared import Param, Prepared
from beyond_site.runs.access import LIVE_FIELDS, readable_run
from beyond_site.runs.models import Run, RunEvent, Step
from beyond_site.runs.versions import (DocumentVersion, conversation_versions_query, final_version_query,
                                       version_in)

Pushed = tuple[str, int, bool]


_HAS_EVENTS = Prepared(lambda: RunEvent.objects.filter(run_id=Param("run_id")).order_by().values_list("id")[:1])
_EVENTS_AFTER = Prepared(lambda: RunEvent.objects.filter(run_id=Param("run_id"), seq__gt=Param("after")).order_by("seq")
                         .values_list("seq", "type", "data"))
#: A tail's one read: the events after the page's last seq, each with the run's live fields, and
#: only while the user may read the run (the condition of runs/access.py `readable_run`).
_TAIL = Prepared(lambda: RunEvent.objects.filter(
    run_id=Param("run_id"), seq__gt=Param("after"), run__workspace__memberships__user_id=Param("user_id"))
    .order_by("seq").values_list("seq", "type", "data", *(f"run__{name}" for name in LIVE_FIELDS)))

#: A run's whole view (presenting.py `run_view`), read at a page's snapshot, at the recap and at
#: the run's end, and the steps every other tail reads: the pages' hottest reads after the tail's
#: own (bench/README.md, "Before and after issue 30's restructure").
_LAST_SEQ = Prepared(lambda: RunEvent.objects.filter(run_id=Param("run_id")).order_by("-seq").values_list("seq")[:1])
_RUN = Prepared(lambda: Run.objects.select_related("workspace").filter(pk=Param("run_id"))
                .annotate(retried=Exists(Run.objects.filter(retry_of=OuterRef("pk")))).order_by()[:1])
_STEPS = Prepared(lambda: Step.objects.filter(run_id=Param("run_id")).order_by("index"))
_MARKS = Prepared(lambda: RunEvent.objects.filter(run_id=Param("run_id"), type__in=(ev.STEP_HALTED, ev.EVIDENCE_COLLECTED))
                  .order_by("seq").only("run_id", "type", "data"))
_LATEST_PROGRESS = Prepared(lambda: RunEvent.objects.filter(run_id=Param("run_id"), type__in=PROGRESS_TYPES)
                            .order_by("-seq").only("run_id", "seq", "type", "data")[:1])

#: A finished run's place among its document's versions (runs/versions.py), read at its end.
_VERSIONS = Prepared(lambda: conversation_versions_query(Param("conversation_id")))
_FINAL_VERSION = Prepared(lambda: final_version_query(Param("conversation_id")))


def _read_run(run_id: int) -> RunRead:
    """What `run_view` reads, by the prepared queries above, in its order."""
    last = _LAST_SEQ.first(run_id=run_id)
    run = _RUN.instances(run_id=run_id)
    steps, marks = _STEPS.instances(run_id=run_id), _MARKS.instances(run_id=run_id)
    latest = _LATEST_PROGRESS.instances(run_id=run_id)
    return RunRead(last[0] if last else None, run[0] if run else None, steps, marks, latest[0] if latest else None)


def _version(run: Run) -> DocumentVersion:
    """runs/versions.py `document_version`, by the prepared queries above."""
    if run.conversation_id is None:
        return version_in(run, [], None)
    final = _FINAL_VERSION.first(conversation_id=run.conversation_id)
    return version_in(run, [pk for (pk,) in _VERSIONS.rows(conversation_id=run.conversation_id)],
                      final[0] if final else None)


class NewEvent(NamedTuple):
    """An event a page has not sent yet, as a tail reads it (no model instance: a tail reads a few
    every time, and that is all it needs of them)."""

    seq: int
    type: str
    data: dict

    @property
    def payload(self) -> ev.Payload:
        return ev.load(self.type, self.data)


def snapshot_for(user, run_id: int) -> Pushed | None:
    """`snapshot`, when `user` may read the run (None when not): a websocket's access check and its
    read in one trip to the database lane. A run queued or claimed with no event yet (what a page
    opened with its submission usually finds) is sent nothing: whatever drew the page (the
    submission, a load of the conversation) drew it as it is, and nothing has happened since.
    The socket joined the run's group before these reads, so its first event still rings."""
    run = readable_run(user, run_id)
    if run is None:
        return None
    if run.status in (Run.QUEUED, Run.RUNNING) and _HAS_EVENTS.first(run_id=run_id) is None:
        return "", 0, False
    return snapshot(run_id)


def since_for(user, run_id: int, last_seq: int) -> Pushed | None:
    """`since`, when `user` may still read the run (None when not), in one trip. The new events
    come with the run's live fields, which the tail uses, and only while the user may read the run;
    when none come, the access check alone tells whether nothing is new or the user was removed."""
    if not getattr(user, "is_authenticated", False):
        return None
    rows = _TAIL.rows(run_id=run_id, after=last_seq, user_id=user.pk)
    if not rows:
        return None if readable_run(user, run_id) is None else ("", last_seq, False)
    run = Run(**dict(zip(LIVE_FIELDS, rows[-1][3:])))  # the live fields the tail read with its events
    return _since(run, [NewEvent(*row[:3]) for row in rows])


def snapshot(run_id: int) -> Pushed:
    """(fragments for the whole current state, last seq covered, finished?)."""
    rv = run_view(run_id, _read_run, _version)
    return _state(rv), rv.last_seq, rv.finished


#: Events after which the whole run is read again; the others (most of them) change the steps or
#: the progress line, and only that is read and rendered.
WHOLE_RUN = ev.FINAL_TYPES | {ev.SUMMARY_READY, ev.SUMMARY_FAILED, ev.EVIDENCE_COLLECTED}


def since(run: Run, last_seq: int) -> Pushed:
    """(fragments for what changed after `last_seq`, new last seq, finished?). `run` is the run's
    row as just read (its live fields at least)."""
    new = [NewEvent(*row) for row in _EVENTS_AFTER.rows(run_id=run.pk, after=last_seq)]
    return _since(run, new) if new else ("", last_seq, False)


def _since(run: Run, new: list[NewEvent]) -> Pushed:
    types = {e.type for e in new}
    # A research run's steps mark their sources, which only the whole view knows.
    whole = types & WHOLE_RUN or run.research or recap_changed(new)
    rv = run_view(run.pk, _read_run, _version) if whole else tail_view(run, new, _STEPS.instances(run_id=run.pk))
    last = max(rv.last_seq, new[-1].seq)
    if rv.finished:
        return _render("chat/_run.html", rv), last, True
    parts = []
    if ev.BRIEF_READY in types:  # the plan: every step, pending
        parts.append(_render("chat/_steps.html", rv))
    else:
        changed = changed_steps(new)
        parts += [_render("chat/_step.html", rv, s=s) for s in rv.steps if s.index in changed]
    if types & set(PROGRESS_TYPES):
        parts.append(_render("chat/_progress.html", rv))
    if recap_changed(new):
        parts.append(_render("chat/_recap.html", rv))
    # A source is "used" once a released step cites it: each release may change the panel.
    if types & {ev.EVIDENCE_COLLECTED, ev.BRIEF_READY, ev.STEP_RELEASED} and run.research:
        parts.append(_render("chat/_sources.html", rv))
    return "".join(parts), last, False


def _state(rv: RunView) -> str:
    if rv.finished:
        # The finished article replaces the live one, whose websocket htmx then closes.
        return _render("chat/_run.html", rv)
    return "".join([
        _render("chat/_progress.html", rv),
        _render("chat/_sources.html", rv),
        _render("chat/_steps.html", rv),
        _render("chat/_recap.html", rv),
    ])


def _render(template: str, rv: RunView, **extra) -> str:
    return _template(template).render({"rv": rv, "oob": True, **extra})


def _template(name: str):
    """The compiled fragment (templates/jinja2/chat/, chat/jinja.py), found once (an edited one is
    found again while DEBUG is on, so that edits show)."""
    return engines["fragments"].get_template(name) if settings.DEBUG else _found(name)


@functools.lru_cache(maxsize=16)
def _found(name: str):
    return engines["fragments"].get_template(name)
