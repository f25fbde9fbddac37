"""A person's own memberships: answering an offer of a role (workspaces/consent.py) and leaving a
workspace. Whoever it concerns acts here, nobody else: an offer for someone else is a 404, like one
that does not exist."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from beyond_site.accounts.views import _joined, _refused
from beyond_site.workspaces import access, consent, members


def _answered(answer, offer_id, user):
    """`answer` (consent.accept_offer or decline_offer) for `user`; 404 for an offer not theirs."""
    try:
        return answer(offer_id, user)
    except consent.NoSuchOffer:
        raise Http404("No such invitation for you") from None


@login_required
@require_POST
def accept_offer(request, offer_id):
    try:
        membership = _answered(consent.accept_offer, offer_id, request.user)
    except members.InvitationRefused as exc:
        return _refused(request, str(exc))
    return _joined(request, membership)


@login_required
@require_POST
def decline_offer(request, offer_id):
    offer = _answered(consent.decline_offer, offer_id, request.user)
    messages.info(request, f"You declined the invitation to {offer.workspace.name}.")
    return redirect("chat:home")


@login_required
@require_http_methods(["GET", "POST"])
def leave(request, slug):
    """GET: what leaving means, and the button (none for the last admin); POST: leave."""
    membership = access.require_membership(request, slug, access.READ)
    workspace = membership.workspace
    if request.method == "POST":
        try:
            consent.leave(membership)
        except members.LastAdminError as exc:
            messages.error(request, str(exc))
            return redirect("leave_workspace", slug)
        messages.success(request, f"You left {workspace.name}.")
        return redirect("chat:home")
    last_admin = (membership.role == membership.ADMIN
                  and not workspace.memberships.filter(role=membership.ADMIN).exclude(pk=membership.pk).exists())
    return render(request, "accounts/leave.html", {"workspace": workspace, "membership": membership,
                                                   "last_admin": last_admin})
