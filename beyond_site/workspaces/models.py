"""Workspaces, who belongs to them, what they know (memories and documents) and what they say
(conversations and their messages).

This is the bottom layer of the site: nothing here knows about runs. A run refers to the
conversation and the message that asked for it, never the other way round (docs/architecture.md).
"""
from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models
from django.db.models.functions import Lower
from django.utils import timezone

from pipeline.frameworks import SHIPPED_FRAMEWORKS


def default_frameworks() -> list[str]:
    return list(SHIPPED_FRAMEWORKS)


#: The classifications an export may print in its footers (a workspace's default is free text).
CLASSIFICATIONS = ("Public", "Internal", "Confidential", "Restricted")


class Workspace(models.Model):
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=60, unique=True)
    #: Model per role (docs/interfaces.md); null means "use BEYOND_PROVIDER for all four roles".
    topology = models.JSONField(null=True, blank=True)
    #: Keys of the enabled framework packs (pipeline.frameworks); every shipped pack by default.
    enabled_frameworks = models.JSONField(default=default_frameworks, blank=True)
    #: Whether a new conversation starts with the chat's web-research toggle on.
    research_default = models.BooleanField(default=False)
    #: A calibration its runs' verifiers must have (docs/calibration.md, "Trust status"): rates as
    #: fractions, {"max_clean_flagged", "max_unparseable", "min_caught"} (None: no bound on that
    #: one); null when the workspace requires none.
    calibration_requirement = models.JSONField(null=True, blank=True)
    #: The deliverables' page furniture (docs/deliverables.md): paper size, the classification in
    #: every footer, and the organisation on the title page (the workspace's name when empty).
    export_paper = models.CharField(max_length=6, choices=[("a4", "A4"), ("letter", "Letter")], default="a4")
    export_classification = models.CharField(max_length=60, default="Internal", blank=True)
    export_organisation = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class WorkspaceBudget(models.Model):
    """What a workspace's runs may spend, and how many may start; None means no limit.

    Per run: tokens and cost (the run halts with a `budget:` reason when it reaches either).
    Per submission: runs a member may start in any 24 hours, and runs queued or running at once
    per member and in the whole workspace (a submission over a cap is refused before a run exists).
    """

    workspace = models.OneToOneField(Workspace, models.CASCADE, related_name="budget")
    max_tokens_per_run = models.PositiveBigIntegerField(null=True, blank=True)
    #: In USD.
    max_cost_per_run = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    max_runs_per_user_per_day = models.PositiveIntegerField(null=True, blank=True)
    max_runs_in_flight_per_user = models.PositiveIntegerField(null=True, blank=True)
    max_runs_in_flight_per_workspace = models.PositiveIntegerField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    LIMITS = ("max_tokens_per_run", "max_cost_per_run", "max_runs_per_user_per_day",
              "max_runs_in_flight_per_user", "max_runs_in_flight_per_workspace")

    def __str__(self) -> str:
        return f"budget of {self.workspace}"

    @classmethod
    def of(cls, workspace: Workspace) -> WorkspaceBudget:
        """The workspace's budget, or an unsaved one with no limit."""
        # One per workspace: sliced rather than `first()`, which would build an ordering for it
        # (read at every submission, inside its write transaction: runs/budgets.py).
        found = list(cls.objects.filter(workspace=workspace)[:1])
        if not found:
            return cls(workspace=workspace)
        found[0].workspace = workspace
        return found[0]

    def limits(self) -> dict:
        """{limit: value} as plain JSON (the cost as a string, exact)."""
        return {name: (str(value) if name == "max_cost_per_run" and value is not None else value)
                for name, value in ((n, getattr(self, n)) for n in self.LIMITS)}


class Membership(models.Model):
    ADMIN, MEMBER, AUDITOR = "admin", "member", "auditor"
    ROLES = [(ADMIN, "Admin"), (MEMBER, "Member"), (AUDITOR, "Auditor")]

    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="memberships")
    workspace = models.ForeignKey(Workspace, models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=ROLES, default=MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)
    #: An admin's "noted" on the admins who joined since (workspaces/consent.py, `admin_news`).
    admin_news_seen_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "workspace"], name="one_membership_per_user")]

    def __str__(self) -> str:
        return f"{self.user} in {self.workspace} ({self.role})"


class ApiToken(models.Model):
    """A person's key to the HTTP API (docs/api.md): it acts as its person, with their roles and
    never more; only its hash is kept. Limited to some workspaces (none: all of the person's) and
    to reading when `read_only`. Useless once revoked or expired, or when its person is deactivated."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    #: The token's first characters, shown to tell tokens apart; the rest is never stored.
    prefix = models.CharField(max_length=16)
    digest = models.CharField(max_length=64, unique=True)  # sha256 of the whole token
    read_only = models.BooleanField(default=False)
    workspaces = models.ManyToManyField(Workspace, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"


class Invitation(models.Model):
    """A link that makes whoever accepts it a member of `workspace` with `role`: once, before
    `expires_at`, unless an admin withdrew it, and only while the admin who made it is still one.
    Only the token's sha256 is stored; the link itself is shown once, to the admin who made it.

    With an `invitee`, it is an offer to that one account (the role of admin, which nobody gets
    without accepting it: workspaces/consent.py), accepted or declined from their home page."""

    workspace = models.ForeignKey(Workspace, models.CASCADE, related_name="invitations")
    role = models.CharField(max_length=10, choices=Membership.ROLES, default=Membership.MEMBER)
    token_sha256 = models.CharField(max_length=64, unique=True)
    #: Who it is for, in the admin's words (a name or an address): shown in the list, never checked.
    note = models.CharField(max_length=200, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    accepted_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    invitee = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, null=True, blank=True, related_name="+")
    declined_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Invitation to {self.workspace} as {self.role}"

    def state(self, now) -> str:
        """"pending", "accepted", "declined", "revoked" or "expired"."""
        if self.accepted_at:
            return "accepted"
        if self.declined_at:
            return "declined"
        if self.revoked_at:
            return "revoked"
        return "expired" if now >= self.expires_at else "pending"


class WrittenText(models.Model):
    """Text members write and edit: who wrote it, who changed it last, and when."""

    text = models.TextField()
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class Memory(WrittenText):
    """A short workspace fact (who we are, scope, decisions) that every run's context carries."""

    workspace = models.ForeignKey(Workspace, models.CASCADE, related_name="memories")

    class Meta:
        ordering = ["created_at", "id"]
        verbose_name_plural = "memories"

    def __str__(self) -> str:
        return self.text[:80]


class Document(models.Model):
    """A workspace file (conversation null) or an upload attached to one conversation.

    The original bytes are stored on disk by `sha256` (workspaces/originals.py); the text read from
    them is kept here once the file has been read, off the request that uploaded it
    (workspaces/reading.py): until then the file is `reading`, and `failed` (with the reason) if
    it could not be read. Only a `ready` file's text reaches a run.
    """

    class Status(models.TextChoices):
        READING = "reading", "reading"
        READY = "ready", "ready"
        FAILED = "failed", "failed"

    READING, READY, FAILED = Status.READING, Status.READY, Status.FAILED
    STATUSES = Status.choices

    workspace = models.ForeignKey(Workspace, models.CASCADE, related_name="documents")
    conversation = models.ForeignKey("workspaces.Conversation", models.CASCADE, null=True, blank=True,
                                     related_name="uploads")
    name = models.CharField(max_length=255)
    kind = models.CharField(max_length=16)  # text, markdown, csv, pdf, docx, xlsx
    mime = models.CharField(max_length=100)
    size = models.BigIntegerField()
    sha256 = models.CharField(max_length=64)
    text = models.TextField()
    #: Pages of a PDF, sheets of a workbook (null for the other kinds, and files added before).
    pages = models.PositiveIntegerField(null=True, blank=True)
    sheets = models.PositiveIntegerField(null=True, blank=True)
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=8, choices=STATUSES, default=READY)
    #: Why the file could not be read, in words fit to show its uploader.
    failure = models.TextField(blank=True, default="")
    #: Who is reading it (lib/leases.py).
    lease_owner = models.CharField(max_length=100, null=True, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "conversation", "sha256"], name="one_copy_per_scope"),
        ]

    def __str__(self) -> str:
        return self.name

    KIND_LABELS = {"text": "Text", "markdown": "Markdown", "csv": "CSV", "pdf": "PDF", "docx": "Word",
                   "xlsx": "Excel"}

    @property
    def kind_label(self) -> str:
        return self.KIND_LABELS.get(self.kind, self.kind)


class Blob(models.Model):
    """Content-addressed bytes: a document used by a hundred runs is stored once.

    `kept_for_audit` marks bytes that a model call was given (the run record points at them by
    hash): deleting a document never deletes those, so the audit record stays whole.
    """

    sha256 = models.CharField(max_length=64, primary_key=True)
    size = models.BigIntegerField()
    data = models.BinaryField()
    kept_for_audit = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.sha256[:12]} ({self.size} bytes)"

    @classmethod
    def store(cls, data: bytes, digest: str | None = None) -> str:
        """Store `data` once, whoever asks; return its sha256."""
        digest = digest or hashlib.sha256(data).hexdigest()
        cls.objects.get_or_create(sha256=digest, defaults={"size": len(data), "data": data})
        return digest

    @classmethod
    def store_for_audit(cls, items: dict[str, bytes]) -> None:
        """Store {sha256: bytes} for the run record: bytes already stored are neither read nor
        sent again (their rows are only marked as kept for the audit, if they were not yet);
        three queries at most, one when every part is already stored and kept."""
        if not items:
            return
        stored = dict(cls.objects.filter(sha256__in=list(items)).values_list("sha256", "kept_for_audit"))
        new = [cls(sha256=digest, size=len(data), data=data, kept_for_audit=True)
               for digest, data in items.items() if digest not in stored]
        if new:
            cls.objects.bulk_create(new, ignore_conflicts=True)
        not_kept = [digest for digest, kept in stored.items() if not kept]
        if not_kept:
            cls.objects.filter(sha256__in=not_kept, kept_for_audit=False).update(kept_for_audit=True)



class DocumentChunk(models.Model):
    """A stable slice of a document's text (paragraphs up to ~1,500 tokens), indexed for full-text
    search so the context assembly can let the database rank a large workspace's text.

    The search index lives outside the ORM: an FTS5 table kept in sync by triggers on SQLite, a
    stored tsvector column with a GIN index on PostgreSQL (migration 0002).
    """

    document = models.ForeignKey(Document, models.CASCADE, related_name="chunks")
    ordinal = models.PositiveIntegerField()
    text = models.TextField()
    tokens = models.PositiveIntegerField()

    class Meta:
        ordering = ["document_id", "ordinal"]
        constraints = [models.UniqueConstraint(fields=["document", "ordinal"], name="one_chunk_per_ordinal")]

    def __str__(self) -> str:
        return f"{self.document} #{self.ordinal}"


class FrameworkPack(models.Model):
    """A framework pack imported by an operator (e.g. from an OSCAL catalogue), beside the shipped
    ones; `data` is the pack JSON format of pipeline/frameworks/data."""

    key = models.SlugField(max_length=60, unique=True)
    name = models.CharField(max_length=200)
    data = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return f"{self.name} ({self.key})"


class AppendOnlyChangeError(Exception):
    """Raised on any attempt to change or delete a row of a workspace's change log."""


class AppendOnlyQuerySet(models.QuerySet):
    """Bulk writes would bypass the row checks below: refused too."""

    def update(self, **kwargs):
        raise AppendOnlyChangeError("the workspace change log is append-only")

    def delete(self):
        raise AppendOnlyChangeError("the workspace change log is append-only")


class WorkspaceEvent(models.Model):
    """The workspace's change log: who changed what, and when (members and roles, invitations, the
    models per role, frameworks, budgets, settings; memories edited or deleted, files removed).
    The rows themselves may be gone, the record of the change stays.

    Append-only and hash-chained (docs/audit.md, "Admin change log"): `seq` counts 1, 2, 3... per
    workspace and `hash` links each row to the one before it (workspaces/changelog.py writes and
    verifies them). Who acted is copied at the time (`actor_id`, `actor_name`) so that the chain
    still verifies after the user is deleted (`user` then becomes null)."""

    APP, ADMIN_SITE, COMMAND = "app", "admin", "command"
    VIA = [(APP, "the app"), (ADMIN_SITE, "the Django admin"), (COMMAND, "a command on the server")]

    workspace = models.ForeignKey(Workspace, models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField()
    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    actor_id = models.PositiveIntegerField(null=True, blank=True)
    actor_name = models.CharField(max_length=150, blank=True)
    via = models.CharField(max_length=10, choices=VIA, default=APP)
    action = models.CharField(max_length=40)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    detail = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField(default=timezone.now)
    hash = models.CharField(max_length=64)

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        ordering = ["-at", "-id"]
        constraints = [models.UniqueConstraint(fields=["workspace", "seq"], name="one_change_per_seq")]
        indexes = [models.Index(fields=["workspace", "-seq"], name="change_log_newest")]

    def __str__(self) -> str:
        return f"{self.action} in {self.workspace} by {self.actor_name or self.via}"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise AppendOnlyChangeError("the workspace change log is append-only")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnlyChangeError("the workspace change log is append-only")


class VisibleConversations(models.Manager):
    def get_queryset(self):
        return super().get_queryset().filter(deleted_at=None)


class Conversation(models.Model):
    """A thread of tasks in a workspace. Deleting one hides it from the chat; the runs it holds stay
    on the audit record, which is append-only."""

    workspace = models.ForeignKey(Workspace, models.CASCADE, related_name="conversations")
    title = models.CharField(max_length=200)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    #: The chat's web-research toggle, remembered per conversation.
    research = models.BooleanField(default=False)
    deleted_at = models.DateTimeField(null=True, blank=True)
    deleted_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    #: The version of the conversation's document a member marked final (runs/versions.py numbers
    #: them): null while every version is a draft. Each mark is also on the change log.
    final_version = models.PositiveIntegerField(null=True, blank=True)
    #: The document's name when a member renamed it (the exports' title page, headers and file
    #: names); empty: the brief's title (exports/document.py).
    document_title = models.CharField(max_length=120, blank=True, default="")

    objects = models.Manager()
    visible = VisibleConversations()

    class Meta:
        ordering = ["-updated_at", "-id"]
        indexes = [models.Index(fields=["workspace", "-updated_at", "-id"], name="conversation_recent")]

    def __str__(self) -> str:
        return self.title


class Message(models.Model):
    """What a member typed in a conversation. The run it started points back here (Run.message)."""

    conversation = models.ForeignKey(Conversation, models.CASCADE, related_name="messages")
    text = models.TextField()
    #: An account that wrote in a conversation cannot be deleted (deactivate it instead): what a run
    #: was asked stays attributed (runs/provenance.py).
    author = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return self.text[:80]


class SavedTask(WrittenText):
    """A task kept for reuse (docs/saved-tasks.md): the workspace's (`owner` null, curated by its
    admins) or one member's own (`owner` set, seen by that member alone). Its text may hold
    placeholders (`{theme}`) filled in when it is used; workspaces/saved_tasks.py checks and parses
    them, and logs every change."""

    workspace = models.ForeignKey(Workspace, models.CASCADE, related_name="saved_tasks")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, null=True, blank=True, related_name="+")
    name = models.CharField(max_length=120)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            # Names are told apart without regard to case (the picker filters that way): one
            # "SoA" per workspace library, and per member among their own.
            models.UniqueConstraint(Lower("name"), "workspace", condition=models.Q(owner__isnull=True),
                                    name="one_workspace_task_per_name"),
            models.UniqueConstraint(Lower("name"), "workspace", "owner", condition=models.Q(owner__isnull=False),
                                    name="one_own_task_per_name"),
        ]

    def __str__(self) -> str:
        return self.name
