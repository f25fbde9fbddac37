"""Invitations, for a workspace's admins: make a single-use link for a role, see the pending
ones, withdraw one. The link is shown once, on the page that answers its creation: only its hash
is stored. Accepting a link is the accounts app's business."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from beyond_site.workspace_settings.forms import InviteForm
from beyond_site.workspace_settings.views import render_settings, settings_url
from beyond_site.workspaces import access, members
from beyond_site.workspaces.models import Invitation


@login_required
@require_POST
def create(request, slug):
    membership = access.require_membership(request, slug, access.ADMIN)
    form = InviteForm(request.POST)
    if not form.is_valid():
        return render_settings(request, membership, status=400, invite_form=form)
    data = form.cleaned_data
    invitation, token = members.create_invitation(membership.workspace, data["role"], user=request.user,
                                                   days=data["days"], note=data["note"])
    link = request.build_absolute_uri(reverse("accounts:invitation", args=[token]))
    # Rendered, not redirected: the link exists only in this answer (the database keeps its hash).
    return render(request, "workspace_settings/invitation_created.html",
                  {"workspace": membership.workspace, "invitation": invitation, "link": link})


@login_required
@require_POST
def revoke(request, slug, invitation_id):
    membership = access.require_membership(request, slug, access.ADMIN)
    invitation = get_object_or_404(Invitation, pk=invitation_id, workspace=membership.workspace)
    members.revoke_invitation(invitation, user=request.user)
    messages.success(request, "Invitation withdrawn: its link no longer lets anyone in.")
    return redirect(settings_url(slug) + "#members")
