"""What calibration keeps: reports of a verifier measured on the corpus, each call's result as it
came, and the labels auditors put on the issues verifiers raised in real runs (docs/calibration.md).

Results and labels are append-only like the run record. A report changes while it runs (progress,
status) and is sealed once completed; a report stopped by its budget or interrupted can be resumed.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models

from beyond_site.runs.models import AppendOnly, AppendOnlyError


def verifier_name(topology: dict | None) -> str:
    """The verifier of a stored topology as "provider:model" (the model alone when it names its provider)."""
    cfg = (topology or {}).get("verifier") or {}
    provider, model = cfg.get("provider") or "?", cfg.get("model") or ""
    return f"{provider}:{model}" if model else provider


class CalibrationReport(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        COMPLETED = "completed", "completed"
        STOPPED = "stopped", "stopped"
        FAILED = "failed", "failed"

    QUEUED, RUNNING, COMPLETED, STOPPED, FAILED = Status.QUEUED, Status.RUNNING, Status.COMPLETED, Status.STOPPED, \
        Status.FAILED
    STATUSES = Status.choices

    workspace = models.ForeignKey("workspaces.Workspace", models.PROTECT, related_name="calibration_reports")
    #: The whole topology as resolved when the report was created; only its verifier is called.
    topology = models.JSONField()
    #: contracts, drafts, workspace_drafts, seed (the corpus, with the runs completed by
    #: `created_at`), concurrency, max_calls, max_cost_usd (the last invocation's limits).
    options = models.JSONField(default=dict)
    status = models.CharField(max_length=10, choices=STATUSES, default=QUEUED, db_index=True)
    #: Why it stopped or failed, in words.
    message = models.TextField(blank=True, default="")
    #: {"done", "total", "calls", "cost_usd"}, updated as results come.
    progress = models.JSONField(default=dict, blank=True)
    #: The figures (pipeline.calibration.calibration_report), written when a run of it ends.
    report = models.JSONField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    #: Who is running it (lib/runners.py) and until when its claim lasts unless renewed
    #: (lib/leases.py): a report left running by a process that is gone can be resumed.
    lease_owner = models.CharField(max_length=120, null=True, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Calibration {self.pk} ({self.status})"

    @property
    def verifier(self) -> str:
        return verifier_name(self.topology)

    @property
    def contracts(self) -> list[str]:
        return list(self.options.get("contracts") or [])

    def save(self, *args, **kwargs):
        if not self._state.adding and self.pk:
            stored = CalibrationReport.objects.filter(pk=self.pk).values_list("status", flat=True).first()
            if stored == self.COMPLETED:
                raise AppendOnlyError("a completed calibration report cannot be changed")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnlyError("calibration reports are kept")


class CalibrationResult(AppendOnly):
    """One verifier call on one corpus draft under one contract, stored as soon as it came."""

    report = models.ForeignKey(CalibrationReport, models.PROTECT, related_name="results")
    draft_id = models.CharField(max_length=40)
    contract = models.CharField(max_length=12)
    #: The draft's ground truth ("clean" or the planted violation) and where it came from.
    kind = models.CharField(max_length=40)
    source = models.CharField(max_length=12)
    status = models.CharField(max_length=12)
    #: pipeline.calibration.CallResult as JSON: verdict, raw reply, error, latency, usage, cost.
    result = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["report_id", "id"]
        constraints = [models.UniqueConstraint(fields=["report", "draft_id", "contract"],
                                               name="one_result_per_draft_and_contract")]


class IssueLabel(AppendOnly):
    """An auditor's judgement of one issue a verifier model raised in a run: real or false.

    An issue is item `issue_index` of a model verdict's parsed issues. A later label of the same
    issue supersedes an earlier one; both stay. The issue's type, the verifier and when it was
    raised are copied from the (append-only) record, so the summaries need no join through it.
    """

    REAL, FALSE = "real", "false"
    LABELS = [(REAL, "real"), (FALSE, "false")]

    workspace = models.ForeignKey("workspaces.Workspace", models.PROTECT, related_name="issue_labels")
    run = models.ForeignKey("runs.Run", models.PROTECT, related_name="issue_labels")
    verdict = models.ForeignKey("runs.Verdict", models.PROTECT, related_name="issue_labels")
    issue_index = models.PositiveSmallIntegerField()
    issue_type = models.CharField(max_length=40)
    verifier = models.CharField(max_length=250)
    raised_at = models.DateTimeField()
    label = models.CharField(max_length=5, choices=LABELS)
    note = models.TextField(blank=True, default="")
    labelled_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["verdict", "issue_index", "id"]
        indexes = [models.Index(fields=["workspace", "verdict", "issue_index"])]
