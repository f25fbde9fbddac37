"""Changes to workspaces: members, memories and documents. Views and commands call these."""
from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from decimal import Decimal, InvalidOperation

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.backends.base.operations import BaseDatabaseOperations
from django.db.models import Sum
from django.utils import timezone
from django.utils.text import slugify

from pipeline.frameworks import ALL_FRAMEWORKS, pack_from_dict
from pipeline.topology import ROLES, TopologyError, parse_topology
from beyond_site.lib.chaining import canonical_json
from beyond_site.lib.endpoints import endpoint_refusal
from beyond_site.lib.inputs import without_bidi_controls
from beyond_site.lib.usernames import username_refusal
from beyond_site.workspaces.chunking import estimate_tokens, split_into_chunks
from beyond_site.workspaces.extraction import ExtractionError, Limits, extract
from beyond_site.workspaces.access import users_visible_to
from beyond_site.workspaces.admin_rights import maker_refusal, withdraw_invitations_of
from beyond_site.workspaces.changelog import record_change
from beyond_site.workspaces.frameworks import canonical_keys
from beyond_site.workspaces.models import (
    Blob, Conversation, Document, DocumentChunk, FrameworkPack, Invitation, Membership, Memory, Workspace,
    WorkspaceBudget,
)


class DocumentRefused(ValueError):
    """A file Beyond will not take; `code` is stable and the message is safe to show."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def create_workspace(slug: str, name: str | None = None, user=None) -> tuple[Workspace, bool]:
    """The workspace `slug`, made (and logged) if it does not exist yet (the commands' way)."""
    with transaction.atomic():
        workspace, created = Workspace.objects.get_or_create(
            slug=slug, defaults={"name": name or slug.replace("-", " ").title()})
        if created:
            _log(workspace, user, "workspace_created", after={"name": workspace.name, "slug": slug})
    return workspace, created


@transaction.atomic
def rename_workspace(workspace: Workspace, name: str, user=None) -> Workspace:
    """Give the workspace another display name (logged); ValueError for an empty one."""
    name = " ".join((name or "").split())[:200]
    if not name:
        raise ValueError("Give the workspace a name.")
    workspace = Workspace.objects.select_for_update().get(pk=workspace.pk)
    if name != workspace.name:
        _log(workspace, user, "workspace_renamed", before=workspace.name, after=name)
        workspace.name = name
        workspace.save(update_fields=["name"])
    return workspace


def new_workspace(name: str, slug: str = "", *, user) -> Workspace:
    """A workspace made in the app (by a user with the site's staff flag): its maker is its first
    admin, and the change log says who made it. ValueError, changing nothing, for an empty name or a
    slug that is malformed or taken."""
    name = " ".join((name or "").split())[:200]
    if not name:
        raise ValueError("Give the workspace a name.")
    slug = slugify(slug or name)[:60].strip("-")
    if not slug:
        raise ValueError("Choose a web address with letters or digits (e.g. acme-clinics).")
    with transaction.atomic():
        if Workspace.objects.filter(slug=slug).exists():
            raise ValueError(f"The address {slug} is taken: choose another.")
        workspace = Workspace.objects.create(slug=slug, name=name)
        Membership.objects.create(user=user, workspace=workspace, role=Membership.ADMIN)
        _log(workspace, user, "workspace_created", after={"name": name, "slug": slug}, admin=user.get_username())
    return workspace


@transaction.atomic
def add_member(workspace: Workspace, username: str, role: str, *, create_user: bool = False,
               user=None) -> Membership:
    """Make `username` a member with `role`, or give a member that role (the commands' way: no
    check of who may see whom; the last admin is still kept). Logged like the settings page's."""
    if role not in dict(Membership.ROLES):
        raise ValueError(f"unknown role {role!r}; expected admin, member or auditor")
    User = get_user_model()
    target = User.objects.filter(username=username).first()
    if target is None:
        if not create_user:
            raise ValueError(f"unknown user {username!r}")
        refused = username_refusal(username)  # the sign-up's rule (lib/usernames.py)
        if refused:
            raise ValueError(f"{username!r}: {refused}")
        target = User.objects.create_user(username=username)
    existing = Membership.objects.filter(user=target, workspace=workspace).first()
    if existing is not None:
        return change_role(existing, role, user)
    membership = Membership.objects.create(user=target, workspace=workspace, role=role)
    _log(workspace, user, "member_added", after=role, username=target.get_username())
    return membership


def _clean_memory_text(text: str) -> str:
    text = without_bidi_controls(text or "").strip()  # they make a fact read otherwise than it is
    if not text:
        raise ValueError("a memory cannot be empty")
    if "\x00" in text:  # PostgreSQL cannot store it: said here rather than failing on save
        raise ValueError("a memory cannot contain NUL characters (\\x00)")
    if len(text) > 4000:
        raise ValueError("a memory is a short fact: 4,000 characters at most (add a file for longer text)")
    return text


#: Every change is logged through the change log (hash-chained, append-only: changelog.py).
_log = record_change


@transaction.atomic
def add_memory(workspace: Workspace, text: str, user=None) -> Memory:
    """A memory with `text` (the one already there, if the workspace has it); a new one is logged."""
    text = _clean_memory_text(text)
    existing = Memory.objects.filter(workspace=workspace, text=text).first()
    if existing:
        return existing
    memory = Memory.objects.create(workspace=workspace, text=text, created_by=user, updated_by=user)
    _log(workspace, user, "memory_added", after=text, memory=memory.pk)
    return memory


def _limits():
    return Limits(max_file_bytes=settings.BEYOND_MAX_FILE_BYTES)


def add_document(workspace: Workspace, name: str, data: bytes, *, user=None, conversation=None) -> tuple[Document, bool]:
    """Extract and store a file; returns (document, created). A refused file changes nothing:
    every check and the extraction run before the one transaction that writes."""
    name = without_bidi_controls((name or "document").replace("\\", "/").rsplit("/", 1)[-1])[:255] or "document"
    if "\x00" in name:  # PostgreSQL cannot store it
        raise DocumentRefused("bad_name", "A file name cannot contain NUL characters (\\x00).")
    digest = hashlib.sha256(data).hexdigest()
    existing = Document.objects.filter(workspace=workspace, conversation=conversation, sha256=digest).first()
    if existing:
        return existing, False
    _check_room(workspace, name, len(data))  # early, before the costly extraction
    try:
        extracted = extract(data, name, _limits())
    except ExtractionError as exc:
        raise DocumentRefused(exc.code, f"{name}: {exc}") from None
    with transaction.atomic():
        # Again under a lock on the workspace row: two uploads at once must not both fit in the
        # room that only one of them has (PostgreSQL locks; SQLite writes one at a time anyway).
        Workspace.objects.select_for_update().filter(pk=workspace.pk).first()
        _check_room(workspace, name, len(data))
        if Document.objects.filter(workspace=workspace, conversation=conversation, sha256=digest).exists():
            return Document.objects.get(workspace=workspace, conversation=conversation, sha256=digest), False
        Blob.store(data, digest)
        document = Document.objects.create(
            workspace=workspace, conversation=conversation, name=name, kind=extracted.kind, mime=extracted.mime,
            size=len(data), sha256=digest, text=extracted.text, pages=extracted.pages, sheets=extracted.sheets,
            uploaded_by=user if getattr(user, "pk", None) else None)
        index_document(document)
        _log(workspace, user, "document_added", name=name, sha256=digest, size=len(data),
             conversation=conversation.pk if conversation is not None else None, document=document.pk)
    return document, True


def _check_room(workspace: Workspace, name: str, size: int) -> None:
    used = Document.objects.filter(workspace=workspace).aggregate(total=Sum("size"))["total"] or 0
    if used + size > settings.BEYOND_MAX_WORKSPACE_BYTES:
        raise DocumentRefused("workspace_full", f"{name}: the workspace's storage limit "
                              f"({settings.BEYOND_MAX_WORKSPACE_BYTES // (1024 * 1024)} MB) would be exceeded")


def index_document(document: Document) -> int:
    """Split the document's text into chunks; the database indexes them for full-text search
    (triggers or a generated column, migration 0003). Returns the number of chunks."""
    chunks = split_into_chunks(document.text)
    DocumentChunk.objects.bulk_create(
        DocumentChunk(document=document, ordinal=n, text=text, tokens=estimate_tokens(text))
        for n, text in enumerate(chunks))
    return len(chunks)


@transaction.atomic
def edit_memory(memory: Memory, text: str, user=None) -> Memory:
    """Change a memory's text; `updated_by`/`updated_at` and the workspace's event log say who and when."""
    text = _clean_memory_text(text)
    if text != memory.text:
        _log(memory.workspace, user, "memory_edited", memory=memory.pk, before=memory.text, after=text)
        memory.text = text
        memory.updated_by = user if getattr(user, "pk", None) else None
        memory.save(update_fields=["text", "updated_by", "updated_at"])
    return memory


@transaction.atomic
def delete_memory(memory: Memory, user=None) -> None:
    """Delete a memory; the workspace's event log keeps who deleted what, and when."""
    _log(memory.workspace, user, "memory_deleted", before=memory.text, memory=memory.pk)
    memory.delete()


@transaction.atomic
def delete_document(document: Document, user=None) -> None:
    """Delete a file or upload with its chunks (and their index entries). The original bytes go too
    unless another document (in any workspace) has the same content or a model call was given them."""
    _log(document.workspace, user, "document_deleted", name=document.name, sha256=document.sha256,
         size=document.size, conversation=document.conversation_id)
    digest = document.sha256
    document.delete()
    if not Document.objects.filter(sha256=digest).exists():
        Blob.objects.filter(sha256=digest, kept_for_audit=False).delete()


def _locked_workspace(workspace: Workspace) -> Workspace:
    """The workspace re-read under a lock on its row (call inside a transaction): the value logged
    as "before" is the one this change replaces, even when two admins save at once."""
    return Workspace.objects.select_for_update().get(pk=workspace.pk)


def _set_field(workspace: Workspace, field: str, value, user, action: str) -> None:
    with transaction.atomic():
        locked = _locked_workspace(workspace)
        before = getattr(locked, field)
        if value != before:
            _log(locked, user, action, before=before, after=value)
            setattr(locked, field, value)
            locked.save(update_fields=[field])
    setattr(workspace, field, value)


def set_research_default(workspace: Workspace, on: bool, user=None) -> bool:
    """Whether new conversations start with web research on (logged like every admin change)."""
    on = bool(on)
    _set_field(workspace, "research_default", on, user, "research_default_changed")
    return on


def set_enabled_frameworks(workspace: Workspace, keys, user=None) -> list[str]:
    """Enable exactly the packs `keys` (shipped or imported), in display order; ValueError on an
    unknown key, leaving the workspace as it was."""
    enabled = canonical_keys(list(keys))
    _set_field(workspace, "enabled_frameworks", enabled, user, "frameworks_changed")
    return enabled


def save_framework_pack(data: dict) -> tuple[FrameworkPack, bool]:
    """Store an imported pack (pack JSON format); returns (row, created). A shipped pack's key is refused."""
    key, name = data.get("key"), data.get("name")
    if not key or not name:
        raise ValueError("a framework pack needs a key and a name")
    if key in ALL_FRAMEWORKS:
        raise ValueError(f"{key!r} is a shipped framework pack; import under another --key")
    if not data.get("entries"):
        raise ValueError("the catalogue has no controls or groups: nothing to import")
    pack_from_dict(data)  # refuse a malformed pack before storing it
    with transaction.atomic():
        stored = FrameworkPack.objects.select_for_update().filter(key=key).first()
        before = pack_summary(stored)
        row, created = FrameworkPack.objects.update_or_create(key=key, defaults={"name": name, "data": data})
        after = pack_summary(row)
        if after != before:  # the same catalogue imported again changes nothing
            _record_pack_change(key, "framework_pack_imported" if stored is None else "framework_pack_updated",
                                before, after, user=None)
    return row, created


def delete_framework_pack(row: FrameworkPack, user=None) -> None:
    """Remove an imported pack. The workspaces that enabled it keep its key, and draw on it again
    if it is imported anew; until then their runs do without it."""
    with transaction.atomic():
        # Locked and read again first (as an import locks it before the workspaces): what is logged
        # is what is removed, and two removals at once log one.
        stored = FrameworkPack.objects.select_for_update().filter(pk=row.pk).first()
        if stored is None:
            return
        _record_pack_change(stored.key, "framework_pack_removed", pack_summary(stored), None, user=user)
        stored.delete()


def pack_summary(row: FrameworkPack | None) -> dict | None:
    """What a change log says of an imported pack: its name, its size, and a digest of its content."""
    if row is None:
        return None
    return {"name": row.name, "entries": len(row.data.get("entries") or []),
            "sha256": hashlib.sha256(canonical_json(row.data)).hexdigest()}


def _record_pack_change(key: str, action: str, before, after, *, user) -> None:
    """Packs are site-wide: the change is logged in every workspace that has `key` enabled, since
    what its runs are told of that framework changes with it."""
    for workspace in Workspace.objects.only("pk", "enabled_frameworks").order_by("pk"):
        if key in (workspace.enabled_frameworks or []):
            record_change(workspace, user, action, before=before, after=after, pack=key)


class LastAdminError(ValueError):
    """Removing or demoting this member would leave the workspace without an admin."""


def _locked_membership(membership: Membership) -> Membership:
    """The membership re-read under a lock on its workspace row, so that two admins stepping down
    at once cannot both see the other one as the remaining admin (call inside a transaction)."""
    Workspace.objects.select_for_update().filter(pk=membership.workspace_id).first()
    return Membership.objects.select_related("user", "workspace").get(pk=membership.pk)


def _other_admins(membership: Membership) -> int:
    return (Membership.objects.filter(workspace_id=membership.workspace_id, role=Membership.ADMIN)
            .exclude(pk=membership.pk).count())


class NotAddable(ValueError):
    """No user the admin may add directly has this name (which says nothing of who exists)."""


def add_existing_member(workspace: Workspace, username: str, role: str, user=None) -> Membership:
    """Add a user the admin `user` can already see (access.users_visible_to) with `role` (logged).

    NotAddable for any other name, existing or not, with the same words: the form must not tell
    an admin which usernames exist elsewhere on the server (anyone else joins by invitation).
    ValueError for an unknown role or someone already a member (their role is changed with
    change_role, which guards the last admin)."""
    username = (username or "").strip()
    if role not in dict(Membership.ROLES):
        raise ValueError(f"unknown role {role!r}; expected admin, member or auditor")
    if role == Membership.ADMIN:  # nobody is made an admin without accepting it (consent.offer_role)
        raise ValueError("An admin is never added directly: offer them the role, which they accept or decline.")
    if Membership.objects.filter(workspace=workspace, user__username=username).exists():
        raise ValueError(f"{username} is already a member of this workspace; change their role instead")
    target = users_visible_to(user).filter(username=username).first() if user is not None else None
    if target is None:
        raise NotAddable(f"You cannot add {username or 'this user'} directly: only people who share a "
                         "workspace with you can be. Send them an invitation link instead.")
    with transaction.atomic():
        membership = Membership.objects.create(user=target, workspace=workspace, role=role)
        _log(workspace, user, "member_added", after=role, username=username)
    return membership


INVITATION_DAYS = (1, 3, 7, 14, 30)


class InvitationRefused(ValueError):
    """An invitation link that cannot be accepted; the message says why and is safe to show."""


def _token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create_invitation(workspace: Workspace, role: str, *, user, days: int = 7, note: str = "") -> tuple[Invitation, str]:
    """A single-use invitation to `workspace` as `role`, valid for `days` (logged).

    Returns (invitation, token): the token goes in the link and is not stored, only its sha256."""
    if role not in dict(Membership.ROLES):
        raise ValueError(f"unknown role {role!r}; expected admin, member or auditor")
    if days not in INVITATION_DAYS:
        raise ValueError(f"an invitation lasts {', '.join(map(str, INVITATION_DAYS))} days")
    token = secrets.token_urlsafe(32)
    with transaction.atomic():
        invitation = Invitation.objects.create(
            workspace=workspace, role=role, token_sha256=_token_digest(token), note=" ".join(note.split())[:200],
            created_by=user, expires_at=timezone.now() + timedelta(days=days))
        _log(workspace, user, "invitation_created", after=role, invitation=invitation.pk, note=invitation.note,
             expires_at=invitation.expires_at.isoformat())
    return invitation, token


def invitation_for(token: str) -> Invitation | None:
    """The invitation behind a link's token, whatever its state, or None."""
    if not token or len(token) > 100:
        return None
    return Invitation.objects.select_related("workspace").filter(token_sha256=_token_digest(token)).first()


REFUSALS = {
    "accepted": "This invitation link has been used already: each link lets one person in, once.",
    "revoked": "This invitation was withdrawn by an admin of the workspace.",
    "declined": "This invitation was declined.",
    "expired": "This invitation link has expired.",
}


def check_invitation(invitation: Invitation | None) -> Invitation:
    """The invitation if it can still be accepted, else InvitationRefused saying why."""
    if invitation is None:
        raise InvitationRefused("This invitation link is not valid: check that it was copied whole.")
    state = invitation.state(timezone.now())
    if state != "pending":
        raise InvitationRefused(f"{REFUSALS[state]} Ask an admin of the workspace for a new one.")
    refused = maker_refusal(invitation)
    if refused:
        raise InvitationRefused(f"{refused}: ask one of its admins for a new invitation.")
    return invitation


@transaction.atomic
def accept_invitation(token: str, user) -> Membership:
    """Make `user` a member with the invitation's role and use the invitation up (logged).

    The invitation row is locked first, so two people with the same link cannot both get in.
    InvitationRefused for a link that is unknown, used, withdrawn or expired, or whose workspace
    `user` belongs to already (the link then stays unused, for the person it was meant for)."""
    found = invitation_for(token)
    invitation = check_invitation(found and Invitation.objects.select_for_update()
                                  .select_related("workspace", "created_by").get(pk=found.pk))
    if invitation.invitee_id is not None and invitation.invitee_id != user.pk:
        raise InvitationRefused("This invitation is for someone else.")
    existing = Membership.objects.filter(user=user, workspace=invitation.workspace).first()
    if existing:
        raise InvitationRefused(f"You are already a member of {invitation.workspace.name} "
                                f"({existing.get_role_display().lower()}); the link was not used.")
    membership = Membership.objects.create(user=user, workspace=invitation.workspace, role=invitation.role)
    invitation.accepted_by, invitation.accepted_at = user, timezone.now()
    invitation.save(update_fields=["accepted_by", "accepted_at"])
    _log(invitation.workspace, user, "invitation_accepted", after=invitation.role, invitation=invitation.pk,
         username=user.get_username(), note=invitation.note, made_by=invitation.created_by.get_username())
    return membership


@transaction.atomic
def revoke_invitation(invitation: Invitation, user=None) -> None:
    """Withdraw a pending invitation (logged); an accepted or expired one is left as it is."""
    invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
    if invitation.state(timezone.now()) != "pending":
        return
    invitation.revoked_at = timezone.now()
    invitation.save(update_fields=["revoked_at"])
    _log(invitation.workspace, user, "invitation_revoked", before="pending", after="revoked",
         invitation=invitation.pk, role=invitation.role, note=invitation.note)


@transaction.atomic
def change_role(membership: Membership, role: str, user=None) -> Membership:
    """Give a member another role (logged); LastAdminError rather than demote the last admin."""
    if role not in dict(Membership.ROLES):
        raise ValueError(f"unknown role {role!r}; expected admin, member or auditor")
    membership = _locked_membership(membership)
    if role == membership.role:
        return membership
    if membership.role == Membership.ADMIN and not _other_admins(membership):
        raise LastAdminError(f"{membership.user.get_username()} is the workspace's only admin: "
                             "make another member an admin first")
    _log(membership.workspace, user, "member_role_changed", username=membership.user.get_username(),
         before=membership.role, after=role)
    if membership.role == Membership.ADMIN:
        withdraw_invitations_of(membership.workspace, membership.user, user=user)
    membership.role = role
    membership.save(update_fields=["role"])
    return membership


@transaction.atomic
def remove_member(membership: Membership, user=None) -> None:
    """Remove a member (logged); LastAdminError rather than remove the last admin."""
    membership = _locked_membership(membership)
    if membership.role == Membership.ADMIN and not _other_admins(membership):
        raise LastAdminError(f"{membership.user.get_username()} is the workspace's only admin: "
                             "make another member an admin first")
    _log(membership.workspace, user, "member_removed", before=membership.role,
         username=membership.user.get_username())
    if membership.role == Membership.ADMIN:
        withdraw_invitations_of(membership.workspace, membership.user, user=user)
    membership.delete()


def set_topology(workspace: Workspace, topology, user=None, *, operator: bool = False) -> dict | None:
    """Store the workspace's model per role (validated with parse_topology; TopologyError leaves the
    workspace as it was), or None for "BEYOND_PROVIDER for every role".

    Workspace admins are not the server's operator: from them (operator=False) a scripted provider
    (it reads a file on the server) is refused, and so is an endpoint on this machine or its
    private network unless the operator configured it (beyond_site/lib/endpoints.py), so a
    workspace setting cannot make the server probe its own network. This check says so when the
    topology is saved; the guarded transport of its runs checks every connection again."""
    stored = None
    if topology is not None:
        parsed = parse_topology(topology)
        scripted = [role for role in ROLES if parsed.role(role).provider == "scripted"]
        if scripted and not operator:
            raise TopologyError(f"a scripted provider cannot be set here ({', '.join(scripted)})")
        for role in ROLES:
            url = parsed.role(role).base_url
            refused = endpoint_refusal(url) if url and not operator else None
            if refused:
                raise TopologyError(f"{role}: {url} is refused ({refused}): the server connects only to public "
                                    "endpoints and to those the operator lists in BEYOND_ALLOWED_BASE_URLS")
        stored = parsed.as_json()
    _set_field(workspace, "topology", stored, user, "topology_changed")
    return stored


def may_manage_conversation(conversation: Conversation, membership: Membership) -> bool:
    """The member who started a conversation may rename or delete it, and so may the workspace's admins."""
    return membership.role == Membership.ADMIN or (
        membership.role == Membership.MEMBER and conversation.created_by_id == membership.user_id)


def clean_conversation_title(title: str) -> str:
    title = " ".join(without_bidi_controls(title or "").split())
    if not title:
        raise ValueError("A conversation needs a title.")
    if len(title) > 200:
        raise ValueError("A title is at most 200 characters.")
    return title


@transaction.atomic
def rename_conversation(conversation: Conversation, title: str, user=None) -> Conversation:
    title = clean_conversation_title(title)
    if title != conversation.title:
        _log(conversation.workspace, user, "conversation_renamed", conversation=conversation.pk,
             before=conversation.title, after=title)
        conversation.title = title
        conversation.save(update_fields=["title"])  # a rename does not make it the most recent
    return conversation


@transaction.atomic
def delete_conversation(conversation: Conversation, user=None) -> None:
    """Hide a conversation from the chat. Its runs stay on the audit record (append-only), and so do
    its messages and uploads, which those runs' records point at."""
    _log(conversation.workspace, user, "conversation_deleted", conversation=conversation.pk, title=conversation.title)
    Conversation.objects.filter(pk=conversation.pk).update(deleted_at=timezone.now(),
                                                           deleted_by=user if getattr(user, "pk", None) else None)


#: The smallest value each budget limit may take (None clears a limit): a run needs a token and
#: a fraction of a cent at least; a cap on runs may be 0, which stops new runs altogether.
BUDGET_MINIMUMS = {"max_tokens_per_run": 1, "max_cost_per_run": Decimal("0.0001"), "max_runs_per_user_per_day": 0,
                   "max_runs_in_flight_per_user": 0, "max_runs_in_flight_per_workspace": 0}
BUDGET_MAXIMUM = 10**15


def _column_maximum(name: str):
    """The largest value the limit's column holds on every database Beyond runs on (a run cap
    past 2^31-1 is a DataError on PostgreSQL, a 500)."""
    field = WorkspaceBudget._meta.get_field(name)
    if field.get_internal_type() == "DecimalField":
        return Decimal(10) ** (field.max_digits - field.decimal_places) - Decimal(1).scaleb(-field.decimal_places)
    return BaseDatabaseOperations.integer_field_ranges[field.get_internal_type()][1]


#: The largest value each limit may take: its column's, and never past BUDGET_MAXIMUM.
BUDGET_MAXIMA = {name: min(BUDGET_MAXIMUM, _column_maximum(name)) for name in WorkspaceBudget.LIMITS}


def _budget_value(name: str, value):
    if value is None:
        return None
    try:
        number = Decimal(str(value)).quantize(Decimal("0.0001")) if name == "max_cost_per_run" else int(value)
    except (InvalidOperation, TypeError, ValueError):
        raise ValueError(f"{name.replace('_', ' ')}: {value!r} is not a number") from None
    if not BUDGET_MINIMUMS[name] <= number <= BUDGET_MAXIMA[name]:
        raise ValueError(f"{name.replace('_', ' ')}: at least {BUDGET_MINIMUMS[name]} and at most "
                         f"{BUDGET_MAXIMA[name]} (or no limit)")
    return number


@transaction.atomic
def set_budget(workspace: Workspace, limits: dict, user=None) -> WorkspaceBudget:
    """Change the limits named in `limits` ({limit: value, None for no limit}; the others stay as
    they are), logged in the workspace's history; ValueError leaves the budget as it was."""
    unknown = set(limits) - set(WorkspaceBudget.LIMITS)
    if unknown:
        raise ValueError(f"unknown budget limits: {', '.join(sorted(unknown))}")
    values = {name: _budget_value(name, value) for name, value in limits.items()}
    Workspace.objects.select_for_update().filter(pk=workspace.pk).first()
    budget = WorkspaceBudget.of(workspace)
    before = budget.limits()
    for name, value in values.items():
        setattr(budget, name, value)
    if budget.limits() != before:
        _log(workspace, user, "budget_changed", before=before, after=budget.limits())
        budget.save()
    return budget
