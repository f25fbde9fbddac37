"""A document export written off the request (exports/jobs.py), kept as the cache of that exact
document: the run, the format, the edition, the options and a fingerprint of what the document says
(its title, status, sections and settings), so a rename or a final mark makes a new file."""
from __future__ import annotations

from django.conf import settings
from django.db import models

from beyond_site.runs.models import Run


class ExportFile(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        READY = "ready"
        FAILED = "failed"

    run = models.ForeignKey(Run, models.CASCADE, related_name="+")
    #: SHA-256 of everything the file is made from (exports/jobs.py `export_key`).
    key = models.CharField(max_length=64, unique=True)
    ext = models.CharField(max_length=8)
    edition = models.CharField(max_length=10)
    options = models.JSONField(default=dict)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    body = models.BinaryField(null=True, blank=True)
    #: Why it could not be written, in words (a failed export).
    reason = models.TextField(blank=True, default="")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    lease_owner = models.CharField(max_length=120, null=True, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["run", "ext", "edition"])]
