"""HTML fragments pushed over a run's websocket: out-of-band swaps keyed by stable element ids.

Every fragment is rendered from the current database state, not from the event's payload, so
sending one twice (a reconnect, a doorbell that raced a snapshot) changes nothing.
"""
from __future__ import annotations

from django.template.loader import render_to_string

from pipeline import events as ev
from beyond_site.chat.presenting import PROGRESS_TYPES, RunView, queued_view, run_view, tail_view
from beyond_site.lib.prepared import Param, Prepared
from beyond_site.runs.access import readable_run
from beyond_site.runs.models import Run, RunEvent

Pushed = tuple[str, int, bool]


_HAS_EVENTS = Prepared(lambda: RunEvent.objects.filter(run_id=Param("run_id")).order_by().values_list("id")[:1])
_EVENTS_AFTER = Prepared(lambda: RunEvent.objects.filter(run_id=Param("run_id"), seq__gt=Param("after")).order_by("seq")
                         .only("seq", "type", "data"))


def snapshot_for(user, run_id: int) -> Pushed | None:
    """`snapshot`, when `user` may read the run (None when not): a websocket's access check and its
    read in one trip to the database lane. A queued run with no event yet (what a page opened with
    its submission usually finds) is drawn from the check's read, without reading the whole run;
    the socket joined the run's group before these reads, so its first event still rings."""
    run = readable_run(user, run_id)
    if run is None:
        return None
    if run.status == Run.QUEUED and _HAS_EVENTS.first(run_id=run_id) is None:
        return _state(queued_view(run)), 0, False
    return snapshot(run_id)


def since_for(user, run_id: int, last_seq: int) -> Pushed | None:
    """`since`, when `user` may still read the run (None when not), in one trip; the check reads
    the run's live fields, which the tail then uses."""
    run = readable_run(user, run_id)
    return since(run, last_seq) if run is not None else None


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
    new = _EVENTS_AFTER.instances(run_id=run.pk, after=last_seq)
    if not new:
        return "", last_seq, False
    types = {e.type for e in new}
    # A research run's steps mark their sources, which only the whole view knows.
    rv = run_view(run.pk) if types & WHOLE_RUN or run.research else tail_view(run, new)
    last = max(rv.last_seq, new[-1].seq)
    if rv.finished:
        return _render("chat/_run.html", rv), last, True
    parts = []
    if ev.BRIEF_READY in types:  # the plan: every step, pending
        parts.append(_render("chat/_steps.html", rv))
    else:
        changed = {e.payload.step for e in new if e.type in ev.STEP_TYPES}
        parts += [_render("chat/_step.html", rv, s=s) for s in rv.steps if s.index in changed]
    if types & set(PROGRESS_TYPES):
        parts.append(_render("chat/_progress.html", rv))
    if types & {ev.SUMMARY_READY, ev.SUMMARY_FAILED}:
        parts.append(_render("chat/_recap.html", rv))
    if types & {ev.EVIDENCE_COLLECTED, ev.BRIEF_READY} and run.research:
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
