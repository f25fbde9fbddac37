"""Django admin for the run record: read-only, because the record is append-only (SPEC 8).

No add, change or delete permission for anyone, superusers included; staff with the view
permission can browse and filter everything.
"""
from __future__ import annotations

from django.contrib import admin
from django.utils.html import format_html_join

from beyond_site.runs.models import (
    Attempt, ContextRecord, Conversation, Message, ModelCall, Run, RunEvent, Step, Verdict,
)


class NoWrites:
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyAdmin(NoWrites, admin.ModelAdmin):
    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]


class ReadOnlyInline(NoWrites, admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = True


class StepInline(ReadOnlyInline):
    model = Step
    fields = ["index", "title", "status", "badge"]


class ModelCallInline(ReadOnlyInline):
    model = ModelCall
    fields = ["role", "step_index", "attempt", "model", "effort", "latency_s", "input_tokens", "output_tokens",
              "error"]


class MessageInline(ReadOnlyInline):
    model = Message
    fields = ["role", "text", "author", "run", "created_at"]


@admin.register(Conversation)
class ConversationAdmin(ReadOnlyAdmin):
    list_display = ["title", "workspace", "created_by", "updated_at"]
    list_filter = ["workspace"]
    search_fields = ["title"]
    inlines = [MessageInline]


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
    list_display = ["run", "seq", "type", "at"]
    list_filter = ["type"]


@admin.register(ContextRecord)
class ContextRecordAdmin(ReadOnlyAdmin):
    list_display = ["sha256", "created_at"]
    search_fields = ["sha256"]

    def get_readonly_fields(self, request, obj=None):
        return [*super().get_readonly_fields(request, obj), "messages"]

    # A plain <pre>, no style attribute: the Content-Security-Policy forbids inline style.
    @admin.display(description="messages as given")
    def messages(self, record: ContextRecord):
        from beyond_site.runs.recorder import context_messages

        return format_html_join("", "<h4>{}</h4><pre>{}</pre>",
                                ((m["role"], m["content"]) for m in context_messages(record)))
