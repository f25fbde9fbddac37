"""Accepting an invitation link: as the user already logged in, after logging in, or with a new
account made on the spot. The link is the only way in for someone who has no login yet, so the
account form lives here and nowhere else: there is no open sign-up.

A link that cannot be used (unknown, used, withdrawn, expired) gets a page saying which, with
status 410, and changes nothing. The workspace's name is shown to whoever holds a valid link: the
admin chose to send it to them.
"""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from beyond_site.accounts.forms import SignupForm
from beyond_site.workspaces import members

#: The backend a just-created account is logged in with (axes' backend only guards passwords typed in).
LOGIN_BACKEND = "django.contrib.auth.backends.ModelBackend"


def _refused(request, reason: str):
    return render(request, "accounts/invitation_refused.html", {"reason": reason}, status=410)


def _page(request, token, invitation, *, signup_form=None, status=200):
    return render(request, "accounts/invitation.html", {
        "token": token, "invitation": invitation, "workspace": invitation.workspace,
        "signup_form": signup_form or SignupForm(),
        "login_url": f"{reverse('login')}?next={reverse('accounts:invitation', args=[token])}",
    }, status=status)


def _joined(request, membership):
    role = membership.get_role_display().lower()
    article = "an" if role[:1] in "aeiou" else "a"  # an admin, an auditor, a member
    messages.success(request, f"Welcome to {membership.workspace.name}: you are {article} {role} here.")
    return redirect("chat:workspace", membership.workspace.slug)


@require_GET
def invitation(request, token):
    try:
        found = members.check_invitation(members.invitation_for(token))
    except members.InvitationRefused as exc:
        return _refused(request, str(exc))
    return _page(request, token, found)


@login_required
@require_POST
def accept(request, token):
    try:
        membership = members.accept_invitation(token, request.user)
    except members.InvitationRefused as exc:
        return _refused(request, str(exc))
    return _joined(request, membership)


@require_POST
def signup(request, token):
    """A new account and the invitation accepted with it, in one transaction: a link that turns
    out to be used meanwhile leaves no account behind."""
    if request.user.is_authenticated:
        return redirect("accounts:invitation", token)
    try:
        found = members.check_invitation(members.invitation_for(token))
    except members.InvitationRefused as exc:
        return _refused(request, str(exc))
    form = SignupForm(request.POST)
    if not form.is_valid():
        return _page(request, token, found, signup_form=form, status=400)
    try:
        with transaction.atomic():
            user = form.save()
            membership = members.accept_invitation(token, user)
    except members.InvitationRefused as exc:
        return _refused(request, str(exc))
    login(request, user, backend=LOGIN_BACKEND)
    return _joined(request, membership)
