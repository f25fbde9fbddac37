"""HTML fragments pushed over a run's websocket: out-of-band swaps keyed by stable element ids.

Every fragment is rendered from the current database state, not from the event's payload, so
sending one twice (a reconnect, a doorbell that raced a snapshot) changes nothing.
"""
from __future__ import annotations

from django.template.loader import render_to_string

from pipeline import events as ev
from beyond_site.chat.presenting import PROGRESS_TYPES, RunView, run_view, tail_view
from beyond_site.runs.access import may_read_run
from beyond_site.runs.models import RunEvent

Pushed = tuple[str, int, bool]


def snapshot_for(user, run_id: int) -> Pushed | None:
    """`snapshot`, when `user` may read the run (None when not): a websocket's access check and its
    read in one trip to the database lane."""
    return snapshot(run_id) if may_read_run(user, run_id) else None


def since_for(user, run_id: int, last_seq: int) -> Pushed | None:
    """`since`, when `user` may still read the run (None when not), in one trip."""
    return since(run_id, last_seq) if may_read_run(user, run_id) else None


def snapshot(run_id: int) -> Pushed:
    """(fragments for the whole current state, last seq covered, finished?)."""
    rv = run_view(run_id)
    return _state(rv), rv.last_seq, rv.finished


#: Events after which the whole run is read again; the others (most of them) change one step or
#: the progress line, and only that is read and rendered.
WHOLE_RUN = ev.FINAL_TYPES | {ev.BRIEF_READY, ev.SUMMARY_READY, ev.SUMMARY_FAILED, ev.EVIDENCE_COLLECTED}


def since(run_id: int, last_seq: int) -> Pushed:
    """(fragments for what changed after `last_seq`, new last seq, finished?)."""
    new = list(RunEvent.objects.filter(run_id=run_id, seq__gt=last_seq).order_by("seq").only("seq", "type", "data"))
    if not new:
        return "", last_seq, False
    types = {e.type for e in new}
    if not types & WHOLE_RUN:
        rv = tail_view(run_id, new)
        if not rv.run.research:  # a research run's steps mark their sources: the whole view knows them
            parts = [_render("chat/_step.html", rv, s=s) for s in rv.steps]
            if rv.progress:
                parts.append(_render("chat/_progress.html", rv))
            return "".join(parts), new[-1].seq, False
    rv = run_view(run_id)
    if rv.finished:
        return _render("chat/_run.html", rv), max(rv.last_seq, new[-1].seq), True
    types = {e.type for e in new}
    parts = []
    if ev.BRIEF_READY in types:
        parts.append(_render("chat/_steps.html", rv))
    else:
        changed = {e.payload.step for e in new if e.type in ev.STEP_TYPES}
        parts += [_render("chat/_step.html", rv, s=s) for s in rv.steps if s.index in changed]
    if types & set(PROGRESS_TYPES):
        parts.append(_render("chat/_progress.html", rv))
    if types & {ev.SUMMARY_READY, ev.SUMMARY_FAILED}:
        parts.append(_render("chat/_recap.html", rv))
    if types & {ev.EVIDENCE_COLLECTED, ev.BRIEF_READY} and rv.run.research:
        parts.append(_render("chat/_sources.html", rv))
    return "".join(parts), max(rv.last_seq, new[-1].seq), False


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
