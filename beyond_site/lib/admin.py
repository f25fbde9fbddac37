"""Read-only Django admin classes for append-only records: no add, change or delete for anyone,
superusers included; staff with the view permission can browse and filter everything."""
from __future__ import annotations

from django.contrib import admin


class NoAddOrChange:
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class NoWrites(NoAddOrChange):
    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyAdmin(NoWrites, admin.ModelAdmin):
    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]


class ReadOnlyInline(NoWrites, admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = True
