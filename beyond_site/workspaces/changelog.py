"""The workspace change log: one append-only, hash-chained record of every administrative change.

Every change to a workspace's members and roles, invitations, models per role (topology),
frameworks, budgets and settings (and changes to what it knows: memories, files, conversations) is
written here by `record_change`, inside the transaction that makes the change: the change and its
record commit together or not at all.

The chain (docs/audit.md, "Admin change log"): rows are numbered 1, 2, 3... per workspace (`seq`,
gap-free) and each carries

    hash = link_hash(hash of the row before it, or GENESIS for seq 1, change_content(row))

(beyond_site/lib/chaining.py), so a row changed, deleted or moved after the fact no longer links
up, and `verify_changes` says where. The workspace row is locked while a row is added, so two
changes made at once cannot both take the same `seq` and fork the chain.
"""
from __future__ import annotations

import contextlib
import contextvars
import json

from django.db import transaction
from django.utils import timezone

from beyond_site.lib.chaining import GENESIS, as_read_back, canonical_json, link_hash
from beyond_site.workspaces.models import Workspace, WorkspaceEvent

#: Set by the Django admin's pages: the change came through it rather than the app's own pages.
_via: contextvars.ContextVar[str | None] = contextvars.ContextVar("beyond_change_via", default=None)


@contextlib.contextmanager
def changes_via(via: str):
    """Record the changes made inside this block as coming through `via` (WorkspaceEvent.VIA)."""
    token = _via.set(via)
    try:
        yield
    finally:
        _via.reset(token)


def change_content(*, workspace_id: int, seq: int, action: str, actor_id, actor_name: str, via: str, at,
                   before, after, detail) -> dict:
    """What a row's hash covers: everything it says, in plain JSON values."""
    return {"workspace": workspace_id, "seq": seq, "action": action, "user_id": actor_id,
            "username": actor_name, "via": via, "at": at, "before": before, "after": after, "detail": detail}


def _row_content(row: WorkspaceEvent) -> dict:
    return change_content(workspace_id=row.workspace_id, seq=row.seq, action=row.action, actor_id=row.actor_id,
                          actor_name=row.actor_name, via=row.via, at=row.at, before=row.before, after=row.after,
                          detail=row.detail)


def _plain(value):
    """`value` as the database will give it back (JSON values only; integral floats as integers,
    since PostgreSQL's jsonb returns 1e16 as 10000000000000000), so that the hash computed now is
    the one recomputed later; TypeError for anything without a JSON form (e.g. a Decimal)."""
    return as_read_back(json.loads(canonical_json(value)))


def record_change(workspace: Workspace, user, action: str, *, before=None, after=None, **detail) -> WorkspaceEvent:
    """Append one change to `workspace`'s log: who (`user`; None for a command run on the server),
    what (`action`), the value `before` and `after` it, and anything else worth keeping (`detail`).

    Call it inside the transaction that makes the change (it opens one if there is none, so a
    lone call is still atomic)."""
    user = user if getattr(user, "pk", None) else None
    via = _via.get() or (WorkspaceEvent.APP if user is not None else WorkspaceEvent.COMMAND)
    with transaction.atomic():
        # The lock orders concurrent changes to one workspace: the second waits for the first to
        # commit, then reads its row as the last one (on SQLite, writers are serialised anyway).
        Workspace.objects.select_for_update().filter(pk=workspace.pk).values_list("pk").first()
        last = (WorkspaceEvent.objects.filter(workspace_id=workspace.pk).order_by("-seq")
                .values_list("seq", "hash").first())
        seq, prev = (last[0] + 1, last[1]) if last else (1, GENESIS)
        row = WorkspaceEvent(workspace_id=workspace.pk, seq=seq, user=user, actor_id=user.pk if user else None,
                             actor_name=user.get_username() if user else "", via=via, action=action,
                             before=_plain(before), after=_plain(after), detail=_plain(detail),
                             at=timezone.now())
        row.hash = link_hash(prev, _row_content(row))
        row.save(force_insert=True)
    return row


def chain_rows(rows) -> None:
    """Give `rows` (unsaved or being migrated, in order) their seq and hash, from GENESIS."""
    prev = GENESIS
    for seq, row in enumerate(rows, start=1):
        row.seq = seq
        row.hash = link_hash(prev, _row_content(row))
        prev = row.hash


def _label(row: WorkspaceEvent) -> str:
    return f"change {row.seq} ({row.action}, {row.at.isoformat(timespec='seconds')})"


def verify_changes(workspace: Workspace) -> list[str]:
    """Recompute `workspace`'s chain; one sentence per broken link, none when the log is intact.

    A row edited after the fact fails its own link; a deleted row leaves a gap in `seq`; rows moved
    (their `seq` swapped) fail their links and the link of the row after them. Each row is checked
    against the stored hash of the row before it, so one edited row is one problem, not a cascade.
    Rows deleted from the end of the log leave no gap: compare the last `seq` with a copy kept
    elsewhere (an export) to catch that."""
    problems = []
    expected, prev = 1, GENESIS
    for row in WorkspaceEvent.objects.filter(workspace_id=workspace.pk).order_by("seq").iterator():
        if row.seq != expected:
            missing = (f"change {expected}" if row.seq == expected + 1
                       else f"changes {expected} to {row.seq - 1}")
            problems.append(f"{missing} missing: deleted from the log (the chain skips from "
                            f"{expected - 1} to {row.seq}); {_label(row)} cannot be linked to what came before")
        elif row.hash != link_hash(prev, _row_content(row)):
            problems.append(f"{_label(row)} does not match its hash: it was changed after it was written, "
                            "or rows before it were changed, moved or removed")
        expected, prev = row.seq + 1, row.hash
    return problems


#: The workspace's settings that its change log says the value of: each is only ever changed
#: through a logged change (the app, the admin site, the commands), so its value must be the last
#: change's `after`. The calibration requirement is logged from the start (none until a change sets
#: one); the others from their first logged change.
LOGGED_SETTINGS = {"calibration_requirement": "calibration_requirement_changed", "topology": "topology_changed",
                   "enabled_frameworks": "frameworks_changed", "research_default": "research_default_changed",
                   "name": "workspace_renamed"}
LOGGED_FROM_THE_START = {"calibration_requirement": None}


def settings_problems(workspace: Workspace) -> list[str]:
    """The settings whose value is not what the change log last set: changed outside the
    application (an SQL edit that clears the calibration requirement turns the gate off)."""
    current = Workspace.objects.filter(pk=workspace.pk).values(*LOGGED_SETTINGS).get()
    problems = []
    for field, action in LOGGED_SETTINGS.items():
        last = (WorkspaceEvent.objects.filter(workspace_id=workspace.pk, action=action).order_by("-seq")
                .values_list("seq", "after").first())
        if last is None and field not in LOGGED_FROM_THE_START:
            continue
        seq, expected = last if last is not None else (None, LOGGED_FROM_THE_START[field])
        if _plain(current[field]) != _plain(expected):
            said = f"change {seq}" if seq else "the log, which holds no change of it"
            problems.append(f"the workspace's {field.replace('_', ' ')} is not what {said} set: it was changed "
                            "outside the application")
    return problems
