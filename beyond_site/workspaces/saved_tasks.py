"""Saved tasks (docs/saved-tasks.md): who may see and change which, their checks, and the change log.

A workspace task (`owner` null) is curated by the workspace's admins and offered to every member;
a member's own task (`owner` set) is seen by that member alone, admins included. An admin may move
one of their own tasks into the workspace's library (`promote_task`); nobody can see, let alone
promote, someone else's. Auditors read the workspace's library and keep none of their own: they
cannot send tasks.

A task's text may hold placeholders, `{theme}`, filled in when it is used; `{{` and `}}` stand for
a brace itself. `task_parts` is the one parser: the page is given its result (literal text and
placeholder names, in order) and only joins it with what the member typed.

Every create, edit, delete and promotion is written to the workspace's change log with what the
task said before and after (workspaces/changelog.py), own tasks included: the log is read by the
workspace's auditors and admins, who read its conversations' tasks anyway.
"""
from __future__ import annotations

import re
import unicodedata

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.db.models.functions import Lower

from beyond_site.lib.inputs import without_bidi_controls
from beyond_site.workspaces.access import ADMIN, WRITE, allows
from beyond_site.workspaces.changelog import record_change
from beyond_site.workspaces.models import Membership, SavedTask

MAX_NAME_CHARS = 120
#: Below the chat's limit on a task (20,000), leaving room for what the placeholders are filled with.
MAX_TEXT_CHARS = 10_000
MAX_PLACEHOLDERS = 10
MAX_PLACEHOLDER_NAME = 40
#: Enough for any quarter's prompts; the picker is drawn into every chat page.
MAX_WORKSPACE_TASKS = 200
MAX_OWN_TASKS = 100

WORKSPACE, OWN = "workspace", "own"
_PLACEHOLDER_NAME = re.compile(r"\w[\w \-]*")


class TaskRefused(ValueError):
    """A saved task that cannot be kept as given; the message says why and is safe to show."""

    def __init__(self, message: str, field: str = "text"):
        super().__init__(message)
        self.field = field  # "name" or "text": which box the page marks


def task_parts(text: str) -> list[tuple[str, str]]:
    """The task as ("text", literal) and ("placeholder", name) parts, in order; TaskRefused with
    the place of the first malformed brace."""
    parts: list[tuple[str, str]] = []
    literal: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char in "{}" and text[i + 1:i + 2] == char:  # {{ or }}: the brace itself
            literal.append(char)
            i += 2
        elif char == "}":
            raise TaskRefused(f"The '}}' at character {i + 1} closes no placeholder: remove it, or write '}}}}' "
                              "for a brace in the text.")
        elif char == "{":
            end = text.find("}", i + 1)
            opened = text.find("{", i + 1)
            if end == -1 or (opened != -1 and opened < end):
                raise TaskRefused(f"The '{{' at character {i + 1} is not closed: end the placeholder with '}}', "
                                  "or write '{{{{' for a brace in the text.")
            name = text[i + 1:end].strip()
            if not name:
                raise TaskRefused(f"The placeholder at character {i + 1} has no name: write one between the "
                                  "braces, e.g. {theme}.")
            if len(name) > MAX_PLACEHOLDER_NAME or not _PLACEHOLDER_NAME.fullmatch(name):
                raise TaskRefused(f"The placeholder at character {i + 1} is not a name: use letters, digits, "
                                  f"spaces, '-' and '_' ({MAX_PLACEHOLDER_NAME} characters at most), e.g. {{theme}}.")
            if literal:
                parts.append(("text", "".join(literal)))
                literal = []
            parts.append(("placeholder", name))
            i = end + 1
        else:
            literal.append(char)
            i += 1
    if literal:
        parts.append(("text", "".join(literal)))
    if len(placeholders(parts)) > MAX_PLACEHOLDERS:
        raise TaskRefused(f"A task has at most {MAX_PLACEHOLDERS} different placeholders.")
    return parts


def placeholders(parts) -> list[str]:
    """The placeholder names of `parts`, each once, in the order they first appear."""
    return list(dict.fromkeys(value for kind, value in parts if kind == "placeholder"))


def fill(parts, values: dict[str, str]) -> str:
    """The task with each placeholder replaced by its value (what the chat page does in the browser)."""
    return "".join(values[value] if kind == "placeholder" else value for kind, value in parts)


def _no_controls(text: str) -> bool:
    return not any(unicodedata.category(c) == "Cc" for c in text)


def clean_name(name: str) -> str:
    name = without_bidi_controls(name or "").strip()
    if not name:
        raise TaskRefused("Give the task a name.", "name")
    if not _no_controls(name):
        raise TaskRefused("A task's name is one line of text, without control characters.", "name")
    if len(name) > MAX_NAME_CHARS:
        raise TaskRefused(f"A task's name is at most {MAX_NAME_CHARS} characters (this one has {len(name)}).", "name")
    return name


def clean_text(text: str) -> str:
    text = without_bidi_controls(text or "").replace("\r\n", "\n").strip()
    if not text:
        raise TaskRefused("Write the task's text.")
    if "\x00" in text:  # PostgreSQL cannot store it
        raise TaskRefused("A task cannot contain NUL characters (\\x00).")
    if len(text) > MAX_TEXT_CHARS:
        raise TaskRefused(f"A saved task is at most {MAX_TEXT_CHARS:,} characters (this one has {len(text):,}): "
                          "attach long material as a file instead.")
    task_parts(text)
    return text


# ---- who sees and changes what ---------------------------------------------------------------

def visible_tasks(membership: Membership):
    """The tasks `membership` may use: the workspace's, and the member's own (none for an auditor)."""
    mine = Q(owner=membership.user) if allows(membership, WRITE) else Q(pk__in=[])
    return (SavedTask.objects.filter(Q(owner__isnull=True) | mine, workspace=membership.workspace)
            .order_by(Lower("name"), "id"))


def may_change(task: SavedTask, membership: Membership) -> bool:
    """A workspace task: its admins. An own task: its owner while still allowed to write."""
    if task.owner_id is None:
        return allows(membership, ADMIN)
    return task.owner_id == membership.user_id and allows(membership, WRITE)


def may_create(membership: Membership, scope: str) -> bool:
    return allows(membership, ADMIN if scope == WORKSPACE else WRITE)


def scope_of(task: SavedTask) -> str:
    return WORKSPACE if task.owner_id is None else OWN


def _same_name(workspace, name: str, scope: str, owner, exclude_pk=None):
    """Tasks whose name clashes with `name` in `scope`: for the workspace's library, its tasks; for
    a member's own, theirs and the workspace's (both are offered side by side in the picker). A
    workspace task may share a name with someone's own task: an admin cannot see those."""
    rows = SavedTask.objects.annotate(lower=Lower("name")).filter(workspace=workspace, lower=name.lower())
    rows = rows.filter(owner__isnull=True) if scope == WORKSPACE else rows.filter(Q(owner__isnull=True) | Q(owner=owner))
    return rows.exclude(pk=exclude_pk) if exclude_pk else rows


def _check_name_free(workspace, name: str, scope: str, owner, exclude_pk=None) -> None:
    clash = _same_name(workspace, name, scope, owner, exclude_pk).first()
    if clash is not None:
        where = "The workspace's library has" if clash.owner_id is None else "You have"
        raise TaskRefused(f"{where} a task named “{clash.name}” already: choose another name.", "name")


def _content(task: SavedTask) -> dict:
    return {"name": task.name, "text": task.text,
            "for": "the workspace" if task.owner_id is None else f"{task.owner.get_username()} only"}


def _save(task: SavedTask, **kwargs) -> None:
    """Save; a name taken at the same moment by someone else is refused like any other clash."""
    try:
        with transaction.atomic():
            task.save(**kwargs)
    except IntegrityError:
        raise TaskRefused("Another task with this name was just saved: choose another name.", "name") from None


@transaction.atomic
def add_task(membership: Membership, name: str, text: str, scope: str) -> SavedTask:
    workspace, user = membership.workspace, membership.user
    if not may_create(membership, scope):
        raise PermissionError("Only the workspace's admins add to its library." if scope == WORKSPACE
                              else "Your role here cannot save tasks.")
    name, text = clean_name(name), clean_text(text)
    owner = None if scope == WORKSPACE else user
    limit = MAX_WORKSPACE_TASKS if owner is None else MAX_OWN_TASKS
    if SavedTask.objects.filter(workspace=workspace, owner=owner).count() >= limit:
        raise TaskRefused(f"{'The library' if owner is None else 'You'} already {'holds' if owner is None else 'have'} "
                          f"{limit} tasks, the most it can: delete one first.", "name")
    _check_name_free(workspace, name, scope, owner)
    task = SavedTask(workspace=workspace, owner=owner, name=name, text=text, created_by=user, updated_by=user)
    _save(task, force_insert=True)
    record_change(workspace, user, "saved_task_added", after=_content(task), task=task.pk, scope=scope)
    return task


@transaction.atomic
def edit_task(membership: Membership, task: SavedTask, name: str, text: str) -> SavedTask:
    if not may_change(task, membership):
        raise PermissionError("Only the workspace's admins change its library.")
    name, text = clean_name(name), clean_text(text)
    if (name, text) == (task.name, task.text):
        return task
    scope = scope_of(task)
    _check_name_free(task.workspace, name, scope, task.owner, exclude_pk=task.pk)
    before = _content(task)
    task.name, task.text, task.updated_by = name, text, membership.user
    _save(task, update_fields=["name", "text", "updated_by", "updated_at"])
    record_change(task.workspace, membership.user, "saved_task_edited", before=before, after=_content(task),
                  task=task.pk, scope=scope)
    return task


@transaction.atomic
def delete_task(membership: Membership, task: SavedTask) -> None:
    if not may_change(task, membership):
        raise PermissionError("Only the workspace's admins change its library.")
    record_change(task.workspace, membership.user, "saved_task_deleted", before=_content(task), task=task.pk,
                  scope=scope_of(task))
    task.delete()


@transaction.atomic
def promote_task(membership: Membership, task: SavedTask) -> SavedTask:
    """Move an admin's own task into the workspace's library (it is then theirs no longer)."""
    if task.owner_id != membership.user_id or not allows(membership, ADMIN):
        raise PermissionError("Only an admin's own tasks can be moved into the workspace's library.")
    _check_name_free(task.workspace, task.name, WORKSPACE, None, exclude_pk=task.pk)
    if SavedTask.objects.filter(workspace=task.workspace, owner=None).count() >= MAX_WORKSPACE_TASKS:
        raise TaskRefused(f"The library already holds {MAX_WORKSPACE_TASKS} tasks, the most it can: delete one first.",
                          "name")
    before = _content(task)
    task.owner, task.updated_by = None, membership.user
    _save(task, update_fields=["owner", "updated_by", "updated_at"])
    record_change(task.workspace, membership.user, "saved_task_promoted", before=before, after=_content(task),
                  task=task.pk, scope=WORKSPACE)
    return task
