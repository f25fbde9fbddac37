"""Django admin for workspaces and what they know; usable by a staff user with the model permissions."""
from __future__ import annotations

from django.contrib import admin

from beyond_site.lib.admin import NoWrites, ReadOnlyAdmin, ReadOnlyInline
from beyond_site.workspaces import services
from beyond_site.workspaces.models import (
    Conversation, Document, FrameworkPack, Membership, Memory, Message, Workspace, WorkspaceEvent,
)


class DeleteThroughService:
    """Deletions go through the workspace services, which record who deleted what."""

    delete_service = ""

    def delete_model(self, request, obj):
        getattr(services, self.delete_service)(obj, request.user)

    def delete_queryset(self, request, queryset):
        for obj in queryset:
            self.delete_model(request, obj)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "workspace", "role", "created_at"]
    list_filter = ["role", "workspace"]
    search_fields = ["user__username", "workspace__slug"]
    autocomplete_fields = ["user", "workspace"]


@admin.register(Memory)
class MemoryAdmin(DeleteThroughService, admin.ModelAdmin):
    delete_service = "delete_memory"
    list_display = ["__str__", "workspace", "updated_by", "updated_at"]
    list_filter = ["workspace"]
    search_fields = ["text"]
    readonly_fields = ["created_by", "created_at", "updated_by", "updated_at"]

    # Who changed a memory, and when, is recorded whichever door they came through: the admin goes
    # through the same services as the chat.
    def save_model(self, request, obj, form, change):
        if change and "workspace" not in form.changed_data:
            services.edit_memory(Memory.objects.get(pk=obj.pk), obj.text, request.user)
            obj.refresh_from_db()
            return
        if not change:
            obj.created_by = request.user
        obj.updated_by = request.user
        super().save_model(request, obj, form, change)


@admin.register(Document)
class DocumentAdmin(DeleteThroughService, admin.ModelAdmin):
    """Files come in through add_document (extraction, limits, indexing), never through a form."""

    delete_service = "delete_document"
    list_display = ["name", "workspace", "conversation", "kind", "size", "created_at"]
    list_filter = ["kind", "workspace"]
    search_fields = ["name", "sha256"]
    fields = ["workspace", "conversation", "name", "kind", "mime", "size", "sha256", "uploaded_by", "created_at",
              "text"]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(FrameworkPack)
class FrameworkPackAdmin(admin.ModelAdmin):
    """Imported packs: added with `beyond_frameworks import-oscal`, browsable and removable here."""

    list_display = ["key", "name", "updated_at"]
    readonly_fields = ["key", "name", "data", "created_at", "updated_at"]

    def has_add_permission(self, request):
        return False


@admin.register(WorkspaceEvent)
class WorkspaceEventAdmin(NoWrites, admin.ModelAdmin):
    """The workspace's change log: written by the services only, never edited."""

    list_display = ["at", "workspace", "user", "action"]
    list_filter = ["action", "workspace"]
    readonly_fields = ["workspace", "user", "action", "detail", "at"]


class MessageInline(ReadOnlyInline):
    model = Message
    fields = ["text", "author", "created_at"]


@admin.register(Conversation)
class ConversationAdmin(ReadOnlyAdmin):
    list_display = ["title", "workspace", "created_by", "updated_at"]
    list_filter = ["workspace"]
    search_fields = ["title"]
    inlines = [MessageInline]
