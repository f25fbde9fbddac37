"""HTML fragments pushed over a run's websocket: out-of-band swaps keyed by stable element ids
(the run's templates in templates/chat/, the same the chat page draws a run with).

Every fragment is rendered from the current database state, not from the event's payload, so
sending one twice (a reconnect, a doorbell that raced a snapshot) changes nothing.
"""
from __future__ import annotations

from typing import NamedTuple

from django.template.loader import render_to_string

from pipeline import events as ev
from beyond_site.chat.presenting import (PROGRESS_TYPES, RunView, changed_steps, recap_changed, run_view,
                                         tail_view)
from beyond_site.runs.access import LIVE_FIELDS, readable_run
from beyond_site.runs.models import Run, RunEvent, Step

Pushed = tuple[str, int, bool]


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
    if run.status in (Run.QUEUED, Run.RUNNING) and not RunEvent.objects.filter(run_id=run_id).exists():
        return "", 0, False
    return snapshot(run_id)


def since_for(user, run_id: int, last_seq: int) -> Pushed | None:
    """`since`, when `user` may still read the run (None when not), in one trip. The new events
    come with the run's live fields, which the tail uses, and only while the user may read the run;
    when none come, the access check alone tells whether nothing is new or the user was removed."""
    if not getattr(user, "is_authenticated", False):
        return None
    # The events after the page's last seq, each with the run's live fields, and only while the
    # user may read the run (the condition of runs/access.py `readable_run`).
    rows = list(RunEvent.objects.filter(run_id=run_id, seq__gt=last_seq, run__workspace__memberships__user_id=user.pk)
                .order_by("seq").values_list("seq", "type", "data", *(f"run__{name}" for name in LIVE_FIELDS)))
    if not rows:
        return None if readable_run(user, run_id) is None else ("", last_seq, False)
    run = Run(**dict(zip(LIVE_FIELDS, rows[-1][3:])))  # the live fields the tail read with its events
    return _since(run, [NewEvent(*row[:3]) for row in rows])


def snapshot(run_id: int) -> Pushed:
    """(fragments for the whole current state, last seq covered, finished?)."""
    rv = run_view(run_id)
    return _state(rv), rv.last_seq, rv.finished


#: Events after which the whole run is read again; the others (most of them) change the steps or
#: the progress line, and only that is read and rendered.
WHOLE_RUN = ev.FINAL_TYPES | {ev.SUMMARY_READY, ev.SUMMARY_FAILED, ev.EVIDENCE_COLLECTED}


def since(run: Run, last_seq: int) -> Pushed:
    """(fragments for what changed after `last_seq`, new last seq, finished?). `run` is the run's
    row as just read (its live fields at least)."""
    new = [NewEvent(*row) for row in RunEvent.objects.filter(run_id=run.pk, seq__gt=last_seq).order_by("seq")
           .values_list("seq", "type", "data")]
    return _since(run, new) if new else ("", last_seq, False)


def _since(run: Run, new: list[NewEvent]) -> Pushed:
    types = {e.type for e in new}
    # A research run's steps mark their sources, which only the whole view knows.
    whole = types & WHOLE_RUN or run.research or recap_changed(new)
    rv = run_view(run.pk) if whole else tail_view(run, new, list(Step.objects.filter(run_id=run.pk).order_by("index")))
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
    return render_to_string(template, {"rv": rv, "oob": True, **extra})
