"""The Django admin's users: an account added there follows the sign-up's rule on usernames."""
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin

from beyond_site.accounts.forms import AdminAddUserForm

User = get_user_model()


class BeyondUserAdmin(UserAdmin):
    add_form = AdminAddUserForm


admin.site.unregister(User)
admin.site.register(User, BeyondUserAdmin)
