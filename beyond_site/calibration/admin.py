"""Django admin for calibration: read-only, like the run record it sits beside."""
from __future__ import annotations

from django.contrib import admin

from beyond_site.calibration.models import CalibrationReport, CalibrationResult, IssueLabel
from beyond_site.lib.admin import ReadOnlyAdmin


@admin.register(CalibrationReport)
class CalibrationReportAdmin(ReadOnlyAdmin):
    list_display = ["id", "workspace", "verifier", "status", "created_at", "finished_at"]
    list_filter = ["status", "workspace"]


@admin.register(CalibrationResult)
class CalibrationResultAdmin(ReadOnlyAdmin):
    list_display = ["id", "report", "draft_id", "contract", "kind", "status"]
    list_filter = ["contract", "kind", "status"]


@admin.register(IssueLabel)
class IssueLabelAdmin(ReadOnlyAdmin):
    list_display = ["id", "workspace", "run", "verdict", "issue_index", "issue_type", "verifier", "label",
                    "labelled_by", "created_at"]
    list_filter = ["label", "issue_type", "workspace"]
