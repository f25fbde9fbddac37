"""Changes to workspaces: members, memories and documents. Views and commands call these."""
from __future__ import annotations

import hashlib

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Sum

from beyond_site.workspaces.models import Blob, Document, Membership, Memory, Workspace


class DocumentRefused(ValueError):
    """A file Beyond will not take; `code` is stable and the message is safe to show."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def create_workspace(slug: str, name: str | None = None) -> tuple[Workspace, bool]:
    return Workspace.objects.get_or_create(slug=slug, defaults={"name": name or slug.replace("-", " ").title()})


def add_member(workspace: Workspace, username: str, role: str, *, create_user: bool = False) -> Membership:
    if role not in dict(Membership.ROLES):
        raise ValueError(f"unknown role {role!r}; expected admin, member or auditor")
    User = get_user_model()
    user = User.objects.filter(username=username).first()
    if user is None:
        if not create_user:
            raise ValueError(f"unknown user {username!r}")
        user = User.objects.create_user(username=username)
    membership, _ = Membership.objects.update_or_create(user=user, workspace=workspace, defaults={"role": role})
    return membership


def add_memory(workspace: Workspace, text: str, user=None) -> Memory:
    text = text.strip()
    if not text:
        raise ValueError("a memory cannot be empty")
    if len(text) > 4000:
        raise ValueError("a memory is a short fact: 4,000 characters at most (add a file for longer text)")
    existing = Memory.objects.filter(workspace=workspace, text=text).first()
    return existing or Memory.objects.create(workspace=workspace, text=text, created_by=user, updated_by=user)


def _limits():
    from beyond_site.workspaces.extraction import Limits

    return Limits(max_file_bytes=settings.BEYOND_MAX_FILE_BYTES)


def add_document(workspace: Workspace, name: str, data: bytes, *, user=None, conversation=None) -> tuple[Document, bool]:
    """Extract and store a file; returns (document, created). A refused file changes nothing:
    every check and the extraction run before the one transaction that writes."""
    from beyond_site.workspaces.extraction import ExtractionError, extract

    name = (name or "document").replace("\\", "/").rsplit("/", 1)[-1][:255] or "document"
    digest = hashlib.sha256(data).hexdigest()
    existing = Document.objects.filter(workspace=workspace, conversation=conversation, sha256=digest).first()
    if existing:
        return existing, False
    used = Document.objects.filter(workspace=workspace).aggregate(total=Sum("size"))["total"] or 0
    if used + len(data) > settings.BEYOND_MAX_WORKSPACE_BYTES:
        raise DocumentRefused("workspace_full", f"{name}: the workspace's storage limit "
                              f"({settings.BEYOND_MAX_WORKSPACE_BYTES // (1024 * 1024)} MB) would be exceeded")
    try:
        extracted = extract(data, name, _limits())
    except ExtractionError as exc:
        raise DocumentRefused(exc.code, f"{name}: {exc}") from None
    with transaction.atomic():
        if not Blob.objects.filter(sha256=digest).exists():
            Blob.objects.create(sha256=digest, size=len(data), data=data)
        document = Document.objects.create(
            workspace=workspace, conversation=conversation, name=name, kind=extracted.kind, mime=extracted.mime,
            size=len(data), sha256=digest, original_id=digest, text=extracted.text, uploaded_by=user)
    return document, True
