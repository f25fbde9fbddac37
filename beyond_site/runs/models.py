"""The run record: every brief, draft, verdict, model call and event of every run.

The run record is append-only (docs/audit.md). Events, attempts, verdicts, model calls and context
records are written once and never changed; a run and its steps change only while the run is in
progress, and nothing about a finished run can be saved again or deleted, by anyone.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models

from pipeline import badges, events as ev


class AppendOnlyError(Exception):
    """Raised on any attempt to change or delete a row of the run record once written."""


class AppendOnly(models.Model):
    """A row that may be inserted once and never updated or deleted."""

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise AppendOnlyError(f"{type(self).__name__} rows are append-only")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnlyError(f"{type(self).__name__} rows are append-only")


class Run(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        COMPLETED = "completed", "completed"
        HALTED = "halted", "halted"
        FAILED = "failed", "failed"
        CANCELLED = "cancelled", "cancelled"
        DECLINED = "declined", "declined"

    QUEUED, RUNNING, COMPLETED, HALTED, FAILED = Status.QUEUED, Status.RUNNING, Status.COMPLETED, Status.HALTED, \
        Status.FAILED
    CANCELLED, DECLINED = Status.CANCELLED, Status.DECLINED
    STATUSES = Status.choices
    FINISHED = (COMPLETED, HALTED, FAILED, CANCELLED, DECLINED)
    #: What a member may run again ("Run again"): what did not complete. Not a declined run: the
    #: planner's answer to that task in that context is its considered one, not a fault, and the
    #: same task would be declined again; its reason says what to change instead.
    RETRYABLE = (HALTED, FAILED, CANCELLED)
    VERIFICATIONS = [(kind, kind) for kind in (badges.BY_MODEL, badges.MECHANICAL, badges.MIXED)]

    workspace = models.ForeignKey("workspaces.Workspace", models.PROTECT, related_name="runs")
    conversation = models.ForeignKey("workspaces.Conversation", models.PROTECT, null=True, blank=True,
                                     related_name="runs")
    #: The member's message that asked for this run (null for runs started without one).
    message = models.OneToOneField("workspaces.Message", models.PROTECT, null=True, blank=True, related_name="run")
    #: "Run again": the earlier run of the same task that this one retries (it stays on record).
    retry_of = models.ForeignKey("self", models.PROTECT, null=True, blank=True, related_name="retries")
    # The lineage of a document's versions (docs/working-loop.md); every earlier run stays on record.
    #: "Redo a step": the finished run whose step `redo_step` this run rendered and inspected anew,
    #: carrying its other steps over; `redo_instruction` is what the member told that step's
    #: executor ("" for nothing; the verifier never sees it).
    redo_of = models.ForeignKey("self", models.PROTECT, null=True, blank=True, related_name="redos")
    redo_step = models.PositiveIntegerField(null=True, blank=True)
    redo_instruction = models.TextField(blank=True, default="")
    #: "Regenerate": the completed run whose task this run drafts anew.
    regenerates = models.ForeignKey("self", models.PROTECT, null=True, blank=True, related_name="regenerations")
    #: "Edit and resend": the run whose task (the conversation's last) this run's edited task replaces.
    edited_from = models.ForeignKey("self", models.PROTECT, null=True, blank=True, related_name="edits")
    task = models.TextField()
    status = models.CharField(max_length=12, choices=STATUSES, default=QUEUED, db_index=True)
    halt_reason = models.TextField(null=True, blank=True)
    #: A declined run's reason, from its planner: what it cannot do and what would make it possible.
    decline_reason = models.TextField(null=True, blank=True)
    topology = models.JSONField()
    offline = models.BooleanField(default=False)
    #: Who checked the released steps (runs/verification.py): `model`, `mechanical` or `mixed`;
    #: null while none is released (and for a run that released nothing).
    verification = models.CharField(max_length=12, choices=VERIFICATIONS, null=True, blank=True)
    #: Web research before the brief (the chat's toggle, `beyond_run --research`, the workspace default).
    research = models.BooleanField(default=False)
    #: What was known of the verifier when the run was created (runs/trust.py): the latest matching
    #: calibration report and its figures, "never calibrated", or no model to calibrate. A snapshot,
    #: held to the run_requested event; null for runs recorded before it existed.
    verifier_trust = models.JSONField(null=True, blank=True)
    brief = models.JSONField(null=True, blank=True)
    summary = models.TextField(null=True, blank=True)
    #: The mechanical checks' findings on the recap (issues as dicts): shown beside it, never hidden.
    summary_findings = models.JSONField(default=list, blank=True)
    warnings = models.JSONField(default=list, blank=True)
    #: Unsourced specifics (docs/verifier-contract.md): how many the released steps and the recap
    #: hold, for the run list and its filter; and the recap's own list and sources (null: not read).
    unsourced_count = models.PositiveIntegerField(default=0)
    summary_unsourced = models.JSONField(null=True, blank=True)
    summary_sources = models.JSONField(null=True, blank=True)
    #: The requirement trace (docs/verifier-contract.md): each requirement of the task with its
    #: status, how many are met of how many (null: not traced, as before it existed), and the line
    #: that names the gaps ("" when every requirement is met).
    requirements = models.JSONField(default=list, blank=True)
    requirements_met = models.PositiveIntegerField(null=True, blank=True)
    requirements_total = models.PositiveIntegerField(null=True, blank=True)
    requirements_gaps = models.TextField(blank=True, default="")
    idempotency_key = models.CharField(max_length=80, null=True, blank=True)
    # Authorship outlives the account: an account that started or stopped a run cannot be deleted
    # (deactivate it instead), and the username it had then is kept beside it, as in the run's
    # first event (runs/provenance.py), so a later rename does not re-attribute the run.
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, null=True, blank=True, related_name="+")
    created_by_name = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Work claiming: a runner takes a queued run with a conditional UPDATE; `lease_owner` is the
    # identity of the runner executing it (runs/runners.py), and only that runner may add to its
    # record. Runners outside the job engine (the embedded server, beyond_run) also hold a lease.
    lease_owner = models.CharField(max_length=100, null=True, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    #: A member asked to stop the run (the Stop button): from then on nothing more is released,
    #: and the runner stops it as soon as it learns of it.
    stop_requested_at = models.DateTimeField(null=True, blank=True)
    stopped_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, null=True, blank=True, related_name="+")

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "idempotency_key"], name="one_run_per_idempotency_key"),
        ]
        indexes = [
            # The auditors' run history: a workspace's runs newest first, read a page at a time
            # (audit/filters.py). Scanned backwards, it gives the page without sorting the history.
            models.Index(fields=["workspace", "created_at", "id"], name="run_history_idx"),
        ]

    def __str__(self) -> str:
        return f"Run {self.pk} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED

    @property
    def started_by(self) -> str:
        """Who started the run, by the username they had then (and the account's name now, if it
        was renamed since); "" for a run started by a command on the server."""
        if self.created_by_id is None:
            return ""
        now = self.created_by.get_username()
        then = self.created_by_name or now
        return then if then == now else f"{then} (now {now})"

    def save(self, *args, **kwargs):
        if not self._state.adding and self.pk:
            stored = Run.objects.filter(pk=self.pk).values_list("status", flat=True).first()
            if stored in self.FINISHED:
                raise AppendOnlyError("a finished run's record cannot be changed")
        if self._state.adding and self.created_by_id is not None and not self.created_by_name:
            self.created_by_name = self.created_by.get_username()
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnlyError("runs are kept for the audit trail")


class Step(models.Model):
    PENDING, RELEASED, HALTED, NOT_RELEASED = "pending", "released", "halted", "not_released"

    run = models.ForeignKey(Run, models.PROTECT, related_name="steps")
    index = models.PositiveIntegerField()
    title = models.CharField(max_length=300)
    content_spec = models.TextField()
    status = models.CharField(max_length=14, default=PENDING)
    badge = models.CharField(max_length=24, null=True, blank=True)
    warnings = models.JSONField(default=list, blank=True)
    content = models.TextField(null=True, blank=True)
    released_at = models.DateTimeField(null=True, blank=True)
    #: The released content's specifics found in none of the executor's sources ([{"text", "kind"}]),
    #: and the passages the others came from ([{"kind", "ref", "text", "specifics"}]); null: not read
    #: (a run from before the reading, or a reading that failed). Advisory: never a verdict.
    unsourced = models.JSONField(null=True, blank=True)
    sources = models.JSONField(null=True, blank=True)
    #: A redo's step released as the earlier run (`run.redo_of`) released it, not inspected again.
    carried_over = models.BooleanField(default=False)

    class Meta:
        ordering = ["run_id", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="one_step_per_index")]
        indexes = [
            # The run history's badge filter ("runs with a warning step"): found from the steps,
            # without reading every step of the workspace (audit/filters.py).
            models.Index(fields=["status", "badge", "run"], name="step_badge_idx"),
        ]

    def save(self, *args, **kwargs):
        if not self._state.adding and Run.objects.filter(pk=self.run_id, status__in=Run.FINISHED).exists():
            raise AppendOnlyError("a finished run's steps cannot be changed")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnlyError("steps are kept for the audit trail")


class Attempt(AppendOnly):
    step = models.ForeignKey(Step, models.PROTECT, related_name="attempts")
    attempt = models.PositiveSmallIntegerField()
    draft = models.TextField()
    #: True: the output limit cut it off; null: nothing can tell (streamed through a gateway that
    #: masks cut streams, docs/model-servers.md).
    truncated = models.BooleanField(default=False, null=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["step_id", "attempt"]
        constraints = [models.UniqueConstraint(fields=["step", "attempt"], name="one_attempt_per_number")]


class Verdict(AppendOnly):
    MODEL, MECHANICAL = "model", "mechanical"

    attempt = models.ForeignKey(Attempt, models.PROTECT, related_name="verdicts")
    source = models.CharField(max_length=12, choices=[(MODEL, "model"), (MECHANICAL, "mechanical")])
    raw = models.TextField(null=True, blank=True)
    parsed = models.JSONField(null=True, blank=True)
    error = models.TextField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["attempt", "id"]


class ModelCall(AppendOnly):
    run = models.ForeignKey(Run, models.PROTECT, related_name="model_calls")
    role = models.CharField(max_length=12)
    step_index = models.PositiveIntegerField(null=True, blank=True)
    attempt = models.PositiveSmallIntegerField(null=True, blank=True)
    provider = models.CharField(max_length=20)
    model = models.CharField(max_length=200)
    model_served = models.CharField(max_length=200, null=True, blank=True)
    #: The reasoning effort sent; null when the endpoint's profile sends none.
    effort = models.CharField(max_length=10, null=True, blank=True)
    latency_s = models.FloatField(default=0)
    # Null token counts: the endpoint did not report usage ("not reported", which is not zero).
    input_tokens = models.IntegerField(null=True, blank=True)
    cache_read_tokens = models.IntegerField(null=True, blank=True)
    cache_write_tokens = models.IntegerField(null=True, blank=True)
    output_tokens = models.IntegerField(null=True, blank=True)
    reasoning_tokens = models.IntegerField(null=True, blank=True)
    cost = models.FloatField(null=True, blank=True)
    #: "reported" by the endpoint as its charge, or "estimated" (a gateway's figure).
    cost_source = models.CharField(max_length=10, null=True, blank=True)
    transport_retries = models.IntegerField(default=0)
    finish_reason = models.CharField(max_length=40, null=True, blank=True)
    error = models.TextField(null=True, blank=True)
    #: What this call was given, content-addressed (see ContextRecord).
    context = models.ForeignKey("runs.ContextRecord", models.PROTECT, null=True, blank=True, related_name="calls")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run_id", "id"]


class ContextRecord(AppendOnly):
    """Exactly what one model call was given: its messages, stored by content hash.

    `parts` lists the sha256 of each message's text (Blobs), so a long document that a hundred
    runs used is stored once; `sha256` addresses the whole record.
    """

    sha256 = models.CharField(max_length=64, unique=True)
    parts = models.JSONField()  # [{"role": "system"|"user"|..., "blob": "<sha256>", "size": n}]
    created_at = models.DateTimeField(auto_now_add=True)


class RunEvent(AppendOnly):
    """The run's event log: the truth that the page and the audit trail are replayed from."""

    run = models.ForeignKey(Run, models.PROTECT, related_name="events")
    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=40)
    data = models.JSONField(default=dict)
    at = models.DateTimeField()
    #: The link of the run's hash chain (runs/chain.py): covers this event and, through the
    #: previous event's hash, every event before it.
    hash = models.CharField(max_length=64, )

    class Meta:
        ordering = ["run_id", "seq"]
        constraints = [models.UniqueConstraint(fields=["run", "seq"], name="one_event_per_seq")]

    @property
    def payload(self) -> ev.Payload:
        """The event's typed payload (pipeline.events), read back from its stored JSON."""
        return ev.load(self.type, self.data)


class WorkspaceLedger(AppendOnly):
    """The workspace's chain of finished runs: each row holds one run's final event hash and links
    to the row before it, so a run's record cannot be rewritten, or a run removed, unseen."""

    workspace = models.ForeignKey("workspaces.Workspace", models.PROTECT, related_name="ledger")
    seq = models.PositiveIntegerField()
    run = models.OneToOneField(Run, models.PROTECT, related_name="ledger_entry")
    run_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)
    at = models.DateTimeField()

    class Meta:
        ordering = ["workspace_id", "seq"]
        # With the workspace row locked while appending, two runs finishing at once cannot fork the
        # chain; the constraint makes sure of it whatever the database does with the lock.
        constraints = [models.UniqueConstraint(fields=["workspace", "seq"], name="one_ledger_row_per_seq")]


class LedgerAnchor(AppendOnly):
    """A copy of every workspace's ledger head at one moment (`beyond_audit anchor`), also kept
    outside the database: a chain recomputed after an edit no longer matches it."""

    at = models.DateTimeField()
    document = models.JSONField()

    class Meta:
        ordering = ["-at", "-id"]


class ChainCheck(AppendOnly):
    """One periodic verification of a workspace's record (runs/chain.py); a failure is shown to its
    admins and auditors until a later check passes."""

    workspace = models.ForeignKey("workspaces.Workspace", models.PROTECT, related_name="chain_checks")
    at = models.DateTimeField()
    ok = models.BooleanField()
    problems = models.JSONField(default=list)
    #: A keyed hash of this check and the workspace's check before it (runs/chain.py, `check_mac`):
    #: a row put in by hand (an "ok" hiding a failure, a date in the future holding the checks
    #: off) cannot carry a valid one without the server's secret.
    mac = models.CharField(max_length=64, default="")

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["workspace", "-at"], name="chain_check_latest")]
