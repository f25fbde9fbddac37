"""Django admin for the run record: read-only, because the record is append-only (docs/audit.md).

No add, change or delete permission for anyone, superusers included; staff with the view
permission can browse and filter everything.
"""
from __future__ import annotations

from django.contrib import admin
from django.utils.html import format_html_join

from beyond_site.lib.admin import ReadOnlyAdmin, ReadOnlyInline
from beyond_site.runs.models import (Attempt, ChainCheck, ContextRecord, LedgerAnchor, ModelCall, Run, RunEvent, Step,
                                     Verdict, WorkspaceLedger)
from beyond_site.runs.contexts import context_messages


class StepInline(ReadOnlyInline):
    model = Step
    fields = ["index", "title", "status", "badge"]


class ModelCallInline(ReadOnlyInline):
    model = ModelCall
    fields = ["role", "step_index", "attempt", "model", "effort", "latency_s", "input_tokens", "output_tokens",
              "error"]


@admin.register(Run)
class RunAdmin(ReadOnlyAdmin):
    list_display = ["id", "workspace", "status", "task_start", "created_by", "created_at", "finished_at"]
    list_filter = ["status", "workspace", "offline"]
    search_fields = ["task", "halt_reason"]
    date_hierarchy = "created_at"
    inlines = [StepInline, ModelCallInline]

    @admin.display(description="task")
    def task_start(self, run: Run) -> str:
        return run.task[:80]


@admin.register(Step)
class StepAdmin(ReadOnlyAdmin):
    list_display = ["run", "index", "title", "status", "badge"]
    list_filter = ["status", "badge"]


@admin.register(Attempt)
class AttemptAdmin(ReadOnlyAdmin):
    list_display = ["step", "attempt", "truncated", "created_at"]


@admin.register(Verdict)
class VerdictAdmin(ReadOnlyAdmin):
    list_display = ["attempt", "source", "error", "created_at"]
    list_filter = ["source"]


@admin.register(ModelCall)
class ModelCallAdmin(ReadOnlyAdmin):
    list_display = ["run", "role", "step_index", "attempt", "model", "latency_s", "input_tokens", "output_tokens",
                    "cost", "error"]
    list_filter = ["role", "provider"]


@admin.register(RunEvent)
class RunEventAdmin(ReadOnlyAdmin):
    list_display = ["run", "seq", "type", "at", "hash"]
    list_filter = ["type"]


@admin.register(WorkspaceLedger)
class WorkspaceLedgerAdmin(ReadOnlyAdmin):
    list_display = ["workspace", "seq", "run", "run_hash", "hash", "at"]
    list_filter = ["workspace"]


@admin.register(LedgerAnchor)
class LedgerAnchorAdmin(ReadOnlyAdmin):
    list_display = ["at"]


@admin.register(ChainCheck)
class ChainCheckAdmin(ReadOnlyAdmin):
    list_display = ["workspace", "at", "ok"]
    list_filter = ["ok", "workspace"]


@admin.register(ContextRecord)
class ContextRecordAdmin(ReadOnlyAdmin):
    list_display = ["sha256", "created_at"]
    search_fields = ["sha256"]

    def get_readonly_fields(self, request, obj=None):
        return [*super().get_readonly_fields(request, obj), "messages"]

    # A plain <pre>, no style attribute: the Content-Security-Policy forbids inline style.
    @admin.display(description="messages as given")
    def messages(self, record: ContextRecord):
        return format_html_join("", "<h4>{}</h4><pre>{}</pre>",
                                ((m["role"], m["content"]) for m in context_messages(record)))
