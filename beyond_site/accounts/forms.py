"""The forms that make accounts: the sign-up of an invited person, and the Django admin's "add
user". Both refuse a username that reads as someone else's (lib/usernames.py)."""
from __future__ import annotations

from django import forms
from django.contrib.auth.forms import AdminUserCreationForm, UserCreationForm

from beyond_site.lib.usernames import username_refusal


class _NoLookAlikes:
    def clean_username(self):
        username = super().clean_username()  # None when Django found the name taken in another case
        refused = username_refusal(username) if username else None
        if refused:
            raise forms.ValidationError(refused, code="look_alike")
        return username


class SignupForm(_NoLookAlikes, UserCreationForm):
    pass


class AdminAddUserForm(_NoLookAlikes, AdminUserCreationForm):
    pass
