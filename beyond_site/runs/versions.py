"""A conversation's document and its versions: what a deliverable's footer calls "Version 2 · Draft".

Every finished run of a conversation that released at least one step is a new version of the
conversation's document, numbered 1, 2, 3... in the order the runs were started (a follow-up, a
run again, a redo: each that released something is the next version). A run that released nothing
(halted before its first step, declined, stopped early) is no version, and a run still going is
not one yet. Nor is a redo that did not complete: it would be the earlier version with its sections
from the redone step on missing, so the version it redoes stays the newest.

A member marks the conversation's newest version final (`mark_final`); the number is kept on the
conversation (`Conversation.final_version`) and the change is on the workspace's change log, with
who and when. A version is then:

- "Final" when it is the version marked final;
- "Superseded" when it is older than the version marked final;
- "Draft" otherwise: before any version is marked final, and for every version after it (a
  revision of a final document is a draft until it is marked final in turn).

Reopening (`reopen`) takes the mark away: every version is a draft again. A version with sections
that were not released is never marked final: it is not the whole document.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Exists, OuterRef

from beyond_site.runs.models import Run, Step
from beyond_site.workspaces.changelog import record_change
from beyond_site.workspaces.models import Conversation

DRAFT, FINAL, SUPERSEDED = "Draft", "Final", "Superseded"


class NotMarkable(Exception):
    """This version cannot be marked final (or reopened): the message says why, in a member's words."""


@dataclass(frozen=True)
class DocumentVersion:
    """Where one run stands among its conversation's versions."""

    number: int | None  # None: the run is no version of the document
    latest: int  # the conversation's newest version (0: none yet)
    final: int | None  # the version marked final, if any

    @property
    def status(self) -> str:
        if self.number is None or self.final is None or self.number > self.final:
            return DRAFT
        return FINAL if self.number == self.final else SUPERSEDED

    @property
    def current(self) -> bool:
        """The conversation's newest version: the one a member may mark final."""
        return self.number is not None and self.number == self.latest


#: The ends of a redo that make it no version (anything but completed).
_UNFINISHED_REDO = [status for status in Run.FINISHED if status != Run.COMPLETED]


def _version_runs(**where):
    """The runs that are versions of their conversation's document, among those `where` selects."""
    released = Exists(Step.objects.filter(run=OuterRef("pk"), status=Step.RELEASED))
    return (Run.objects.filter(status__in=Run.FINISHED, **where).filter(released)
            .exclude(redo_of__isnull=False, status__in=_UNFINISHED_REDO))


def versions_of(conversation_ids) -> dict[int, list[int]]:
    """{conversation id: its version runs' ids, version 1 first}."""
    out: dict[int, list[int]] = defaultdict(list)
    rows = (_version_runs(conversation_id__in=list(conversation_ids))
            .order_by("conversation_id", "pk").values_list("conversation_id", "pk"))
    for conversation_id, run_id in rows:
        out[conversation_id].append(run_id)
    return out


def document_versions(runs) -> dict[int, DocumentVersion]:
    """{run id: DocumentVersion} for `runs` (Run rows), in two queries whatever their number."""
    runs = list(runs)
    conversation_ids = {r.conversation_id for r in runs if r.conversation_id}
    versions = versions_of(conversation_ids)
    finals = dict(Conversation.objects.filter(pk__in=conversation_ids).values_list("pk", "final_version"))
    return {run.pk: version_in(run, versions.get(run.conversation_id, []) if run.conversation_id else [],
                               finals.get(run.conversation_id)) for run in runs}


def version_in(run: Run, ordered: list[int], final: int | None) -> DocumentVersion:
    """Where `run` stands among its conversation's version runs `ordered` (version 1 first)."""
    number = ordered.index(run.pk) + 1 if run.pk in ordered else None
    return DocumentVersion(number=number, latest=len(ordered), final=final)


def document_version(run: Run) -> DocumentVersion:
    return document_versions([run])[run.pk]


def _locked(run: Run) -> tuple[Conversation, DocumentVersion]:
    if run.conversation_id is None:
        raise NotMarkable("This run belongs to no conversation: it has no document to mark.")
    conversation = Conversation.objects.select_for_update().get(pk=run.conversation_id)
    return conversation, document_version(run)


def mark_final(run: Run, user=None) -> DocumentVersion:
    """Mark `run`'s version of its conversation's document final (logged with who and when)."""
    with transaction.atomic():
        conversation, version = _locked(run)
        if run.status != Run.COMPLETED:
            raise NotMarkable(f"Only a completed run's document can be marked final: this run ended {run.status}. "
                              "Run it again, or revise it, then mark that version final.")
        if version.number is None:
            raise NotMarkable("This run released nothing: it is no version of the document.")
        if not version.current:
            raise NotMarkable(f"Version {version.number} is not the newest: version {version.latest} of this "
                              "document is. Mark that one final.")
        if run.steps.exclude(status=Step.RELEASED).exists():
            raise NotMarkable(f"Version {version.number} has sections that were not released: it is not the "
                              "whole document. Run it again, or revise it, before you mark it final.")
        if version.final != version.number:
            _set_final(conversation, run, user, "document_marked_final", version.number)
        return document_version(run)


def reopen(run: Run, user=None) -> DocumentVersion:
    """Take the final mark off `run`'s version: the document is a draft again (logged)."""
    with transaction.atomic():
        conversation, version = _locked(run)
        if version.final is None or version.number != version.final:
            raise NotMarkable("This version is not marked final.")
        _set_final(conversation, run, user, "document_reopened", None)
        return document_version(run)


def _set_final(conversation: Conversation, run: Run, user, action: str, value: int | None) -> None:
    before = conversation.final_version
    Conversation.objects.filter(pk=conversation.pk).update(final_version=value)
    record_change(run.workspace, user, action, before=before, after=value, conversation=conversation.pk,
                  title=conversation.title, run=run.pk)
