"""The bytes behind the record: every stored blob the record names by its sha256 must be there and
still hash to it (docs/audit.md, "Tamper evidence").

A run's record names bytes it does not hold itself: the parts of what each model call was given
(context records), and the text of each page its web research read (its evidence, by the sha256
its events hold): stored blobs. A workspace's change log names the original of each file added (its
sha256, with the file's id), stored on disk (workspaces/originals.py). `beyond_audit verify` reads
those bytes back here: bytes deleted, or replaced by others under the same name, are reported as
missing or as no longer matching; a file row pointed at other bytes no longer matches its change
log.
"""
from __future__ import annotations

import hashlib

from beyond_site.workspaces import originals
from beyond_site.workspaces.models import Blob, Document, Workspace, WorkspaceEvent

#: Blobs read at once (a workspace file may be many megabytes).
BLOBS_PER_READ = 20


def blob_problems(named: dict[str, str]) -> list[str]:
    """`named`: {sha256: how the record names those bytes}. One sentence per blob that is gone or
    whose bytes no longer hash to its name."""
    problems, seen = [], set()
    rows = Blob.objects.filter(sha256__in=list(named)).values_list("sha256", "data").iterator(chunk_size=BLOBS_PER_READ)
    for sha, data in rows:
        seen.add(sha)
        if hashlib.sha256(bytes(data)).hexdigest() != sha:
            problems.append(f"{named[sha]} no longer matches its sha256")
    problems += [f"{named[sha]} is missing" for sha in named if sha not in seen]
    return problems


def evidence_named(items: list[dict]) -> dict[str, str]:
    """The stored page texts an evidence_collected event names: {sha256: "the text of evidence E1"}."""
    return {item["sha256"]: f"the text of evidence {item.get('id') or '?'}" for item in items
            if item.get("status") == "ok" and item.get("sha256")}


def original_problem(sha256: str, label: str) -> str | None:
    """Whether a file's original (on disk: workspaces/originals.py) is there and still hashes to its
    name, read a piece at a time."""
    if not originals.exists(sha256):
        return f"{label} is missing"
    digest = hashlib.sha256()
    with originals.open_original(sha256) as original:
        while piece := original.read(originals.PIECE):
            digest.update(piece)
    return None if digest.hexdigest() == sha256 else f"{label} no longer matches its sha256"


def file_problems(workspace: Workspace) -> list[str]:
    """Each file of the workspace (a workspace file or a conversation's upload) whose original is gone,
    no longer hashes to its sha256, or is not the one the change log recorded when it was added."""
    recorded = {}
    for detail in (WorkspaceEvent.objects.filter(workspace=workspace, action="document_added")
                   .values_list("detail", flat=True).iterator()):
        if isinstance(detail, dict) and detail.get("document") is not None:
            recorded[detail["document"]] = detail.get("sha256")
    problems, checked = [], set()
    for pk, name, sha in Document.objects.filter(workspace=workspace).order_by("id").values_list("id", "name", "sha256"):
        if pk in recorded and recorded[pk] != sha:
            problems.append(f"{name} is not the file the change log recorded (its original changed)")
        if sha not in checked:
            checked.add(sha)
            problem = original_problem(sha, f"the original of {name}")
            if problem:
                problems.append(problem)
    return problems
