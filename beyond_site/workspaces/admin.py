"""Django admin for workspaces and what they know; usable by a staff user with the model permissions."""
from __future__ import annotations

from django.contrib import admin
from django.db import transaction

from beyond_site.lib.admin import NoAddOrChange, NoWrites, ReadOnlyAdmin, ReadOnlyInline
from beyond_site.workspaces import knowledge
from beyond_site.workspaces.changelog import changes_via, record_change
from beyond_site.workspaces.models import (
    Conversation, Document, FrameworkPack, Membership, Memory, Message, Workspace, WorkspaceEvent,
)


class DeleteEachOne:
    """A bulk deletion deletes each row through `delete_model`, which records it, in one transaction."""

    @transaction.atomic
    def delete_queryset(self, request, queryset):
        for obj in queryset:
            self.delete_model(request, obj)


class DeleteThroughService(DeleteEachOne):
    """Deletions go through the workspace's knowledge services, which record who deleted what."""

    delete_service = ""

    def delete_model(self, request, obj):
        getattr(knowledge, self.delete_service)(obj, request.user)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


# The admin writes workspaces and memberships directly; each change is recorded in the workspace's
# change log like one made on the settings page, as made through the Django admin. The admin's
# change and delete views run in one transaction, so the change and its record commit together.
WORKSPACE_FIELD_ACTIONS = {"name": "workspace_renamed", "slug": "workspace_slug_changed",
                           "topology": "topology_changed", "enabled_frameworks": "frameworks_changed",
                           "research_default": "research_default_changed"}


def _record_membership_change(request, before: Membership | None, after: Membership | None) -> None:
    """Log one membership added (before None), changed, or removed (after None)."""
    workspace = (after or before).workspace
    with changes_via("admin"):
        if before is None:
            record_change(workspace, request.user, "member_added", after=after.role,
                          username=after.user.get_username())
        elif after is None:
            record_change(workspace, request.user, "member_removed", before=before.role,
                          username=before.user.get_username())
        elif before.user_id != after.user_id or before.workspace_id != after.workspace_id:
            _record_membership_change(request, before, None)
            _record_membership_change(request, None, after)
        elif before.role != after.role:
            record_change(workspace, request.user, "member_role_changed", before=before.role, after=after.role,
                          username=after.user.get_username())


def _stored_membership(pk) -> Membership | None:
    return Membership.objects.select_related("user", "workspace").filter(pk=pk).first() if pk else None


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]
    # The deliverables' settings are changed on the Settings page or with `beyond_workspace
    # set-export`, which log them as one change (workspaces/export_settings.py); the calibration
    # requirement on the Settings page or with `beyond_workspace require-calibration`, which
    # validate its thresholds (workspaces/configuration.py).
    exclude = ["export_paper", "export_classification", "export_organisation", "calibration_requirement"]

    def save_model(self, request, obj, form, change):
        stored = Workspace.objects.select_for_update().filter(pk=obj.pk).first() if change else None
        super().save_model(request, obj, form, change)
        with changes_via("admin"):
            if stored is None:
                record_change(obj, request.user, "workspace_created", after={"name": obj.name, "slug": obj.slug})
                return
            for field, action in WORKSPACE_FIELD_ACTIONS.items():
                if getattr(stored, field) != getattr(obj, field):
                    record_change(obj, request.user, action, before=getattr(stored, field),
                                  after=getattr(obj, field))

    def save_formset(self, request, form, formset, change):
        if formset.model is not Membership:
            return super().save_formset(request, form, formset, change)
        removed = [_stored_membership(f.instance.pk) for f in formset.deleted_forms]
        changed = [(_stored_membership(f.instance.pk), f) for f in formset.forms
                   if f not in formset.deleted_forms and f.has_changed()]
        super().save_formset(request, form, formset, change)
        for before in filter(None, removed):
            _record_membership_change(request, before, None)
        for before, f in changed:
            if f.instance.pk:
                _record_membership_change(request, before, _stored_membership(f.instance.pk))


@admin.register(Membership)
class MembershipAdmin(DeleteEachOne, admin.ModelAdmin):
    list_display = ["user", "workspace", "role", "created_at"]
    list_filter = ["role", "workspace"]
    search_fields = ["user__username", "workspace__slug"]
    autocomplete_fields = ["user", "workspace"]

    def save_model(self, request, obj, form, change):
        before = _stored_membership(obj.pk) if change else None
        super().save_model(request, obj, form, change)
        _record_membership_change(request, before, _stored_membership(obj.pk))

    def delete_model(self, request, obj):
        before = _stored_membership(obj.pk)
        super().delete_model(request, obj)
        _record_membership_change(request, before, None)


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
            knowledge.edit_memory(Memory.objects.get(pk=obj.pk), obj.text, request.user)
            obj.refresh_from_db()
            return
        if not change:
            obj.created_by = request.user
        obj.updated_by = request.user
        super().save_model(request, obj, form, change)


@admin.register(Document)
class DocumentAdmin(NoAddOrChange, DeleteThroughService, admin.ModelAdmin):
    """Files come in through add_document (extraction, limits, indexing), never through a form."""

    delete_service = "delete_document"
    list_display = ["name", "workspace", "conversation", "kind", "size", "created_at"]
    list_filter = ["kind", "workspace"]
    search_fields = ["name", "sha256"]
    fields = ["workspace", "conversation", "name", "kind", "mime", "size", "sha256", "uploaded_by", "created_at",
              "text"]
    readonly_fields = fields


@admin.register(FrameworkPack)
class FrameworkPackAdmin(NoAddOrChange, admin.ModelAdmin):
    """Imported packs: added with `beyond_frameworks import-oscal` (and changed by a new import,
    which is logged), browsable and removable here."""

    list_display = ["key", "name", "updated_at"]
    readonly_fields = ["key", "name", "data", "created_at", "updated_at"]

    # A removal is logged in the change log of every workspace that enabled the pack.
    def delete_model(self, request, obj):
        with changes_via("admin"):
            knowledge.delete_framework_pack(obj, user=request.user)

    @transaction.atomic
    def delete_queryset(self, request, queryset):
        with changes_via("admin"):
            for row in queryset.order_by("key"):
                knowledge.delete_framework_pack(row, user=request.user)


@admin.register(WorkspaceEvent)
class WorkspaceEventAdmin(NoWrites, admin.ModelAdmin):
    """The workspace's change log: written by the services only, never edited."""

    list_display = ["at", "workspace", "seq", "actor_name", "via", "action"]
    list_filter = ["action", "via", "workspace"]
    readonly_fields = ["workspace", "seq", "user", "actor_id", "actor_name", "via", "action", "before", "after",
                       "detail", "at", "hash"]


class MessageInline(ReadOnlyInline):
    model = Message
    fields = ["text", "author", "created_at"]


@admin.register(Conversation)
class ConversationAdmin(ReadOnlyAdmin):
    list_display = ["title", "workspace", "created_by", "updated_at"]
    list_filter = ["workspace"]
    search_fields = ["title"]
    inlines = [MessageInline]
