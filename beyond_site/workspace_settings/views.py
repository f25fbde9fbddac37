"""The workspace settings page, for the workspace's admins: enabled frameworks, the model per role
(topology), members and invitations (the invitation views are in invitations.py).

Every view starts from `require_membership(..., ADMIN)`: 404 for non-members, 403 for members and
auditors. Changes go through the workspaces app's services (members.py, configuration.py: they log them); a valid POST
redirects with a message, an invalid one renders the page again with the errors by the fields.
API keys are never shown or accepted: the page says only whether each is set in the environment.
"""
from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from beyond_site.workspaces import access, configuration, consent, members
from beyond_site.workspaces.admin_rights import note_admin_news
from beyond_site.workspace_settings.deliverables import DeliverablesForm
from beyond_site.workspace_settings.research import research_context
from beyond_site.workspace_settings.forms import AddMemberForm, FrameworksForm, InviteForm, RoleForm, TopologyForm
from beyond_site.workspaces.frameworks import available_packs
from beyond_site.workspaces.models import Membership
from pipeline.topology import ROLES, TopologyError, parse_shorthand

KEY_VARIABLES = ("OPENROUTER_API_KEY", "OPENAI_API_KEY")


def settings_url(slug: str) -> str:
    return reverse("workspace_settings:settings", args=[slug])


def _server_default() -> dict:
    """What BEYOND_PROVIDER gives each role: provider and model only (no path, no URL)."""
    try:
        topology = parse_shorthand(settings.BEYOND_PROVIDER)
    except TopologyError:
        return {"error": "BEYOND_PROVIDER is not a valid provider shorthand: runs will fail until it is fixed."}
    return {"roles": [(role, topology.role(role).provider, topology.role(role).model) for role in ROLES]}


def render_settings(request, membership, *, status=200, packs=None, **forms):
    workspace = membership.workspace
    packs = packs if packs is not None else available_packs()
    current = workspace.topology if isinstance(workspace.topology, dict) else None
    members = workspace.memberships.select_related("user").order_by("user__username")
    env = settings.BEYOND_ENVIRONMENT
    ctx = {
        "workspace": workspace,
        "membership": membership,
        **research_context(),
        "deliverables_form": DeliverablesForm.for_workspace(workspace),
        "frameworks_form": forms.get("frameworks_form") or FrameworksForm(
            packs=packs, initial={"frameworks": [k for k in workspace.enabled_frameworks or [] if k in packs]}),
        "topology_form": forms.get("topology_form") or TopologyForm(current=current),
        "add_member_form": forms.get("add_member_form") or AddMemberForm(),
        "invite_form": forms.get("invite_form") or InviteForm(),
        "invitations": _invitations(workspace),
        "members": [(m, RoleForm(initial={"role": m.role}, auto_id=f"id_member{m.pk}_%s")) for m in members],
        "admin_count": sum(m.role == Membership.ADMIN for m in members),
        "server_default": _server_default(),
        "beyond_provider_set": bool(env.get("BEYOND_PROVIDER", "").strip()),
        "keys": [(name, bool(env.get(name, "").strip())) for name in KEY_VARIABLES],
        "scripted_roles": [role for role in ROLES
                           if isinstance((current or {}).get(role), dict)
                           and current[role].get("provider") == "scripted"],
        "profiled_roles": [role for role in ROLES
                           if isinstance((current or {}).get(role), dict)
                           and isinstance(current[role].get("profile"), dict)],
    }
    return render(request, "workspace_settings/settings.html", ctx, status=status)


def _invitations(workspace) -> list[tuple]:
    """(invitation, state) for the pending invitations and the 20 latest others."""
    now = timezone.now()
    rows = [(i, i.state(now)) for i in workspace.invitations.select_related("created_by", "accepted_by", "invitee")[:100]]
    pending = [row for row in rows if row[1] == "pending"]
    return pending + [row for row in rows if row[1] != "pending"][:20]


@login_required
@require_GET
def settings_page(request, slug):
    membership = access.require_membership(request, slug, access.ADMIN)
    return render_settings(request, membership)


@login_required
@require_POST
def frameworks(request, slug):
    membership = access.require_membership(request, slug, access.ADMIN)
    packs = available_packs()
    form = FrameworksForm(request.POST, packs=packs)
    if not form.is_valid():
        return render_settings(request, membership, status=400, packs=packs, frameworks_form=form)
    enabled = configuration.set_enabled_frameworks(membership.workspace, form.cleaned_data["frameworks"],
                                              user=request.user)
    if enabled:
        names = ", ".join(packs[key].name for key in enabled)
        messages.success(request, f"Enabled frameworks saved: {names}.")
    else:
        messages.warning(request, "No framework is enabled now: the planner will cite no framework.")
    return redirect(settings_url(slug))


@login_required
@require_POST
def topology(request, slug):
    membership = access.require_membership(request, slug, access.ADMIN)
    workspace = membership.workspace
    form = TopologyForm(request.POST, current=workspace.topology)
    if not form.is_valid():
        return render_settings(request, membership, status=400, topology_form=form)
    try:
        stored = configuration.set_topology(workspace, form.cleaned_data["topology"], user=request.user)
    except TopologyError as exc:
        form.add_error(None, str(exc))
        return render_settings(request, membership, status=400, topology_form=form)
    messages.success(request, "Models saved: the next run uses " +
                     ("a model per role as set here." if stored else "the server default (BEYOND_PROVIDER)."))
    return redirect(settings_url(slug))


@login_required
@require_POST
def member_add(request, slug):
    membership = access.require_membership(request, slug, access.ADMIN)
    form = AddMemberForm(request.POST)
    if form.is_valid():
        username, role = form.cleaned_data["username"], form.cleaned_data["role"]
        try:
            if role == Membership.ADMIN:  # offered, never given (workspaces/consent.py)
                consent.offer_role(membership.workspace, username, role, user=request.user)
            else:
                added = members.add_existing_member(membership.workspace, username, role, user=request.user)
        except ValueError as exc:
            form.add_error("username", str(exc))
        else:
            messages.success(request, _offered(username) if role == Membership.ADMIN else
                             f"{added.user.get_username()} added as {added.get_role_display().lower()}.")
            return redirect(settings_url(slug))
    return render_settings(request, membership, status=400, add_member_form=form)


def _offered(username: str) -> str:
    return (f"{username} is invited to be an admin: they become one when they accept, from their Beyond "
            "home page.")


def _member(membership, membership_id) -> Membership:
    return get_object_or_404(Membership.objects.select_related("user"), pk=membership_id,
                             workspace=membership.workspace)


def _after_change(request, slug):
    """Back to the settings page, or to the chat if the caller is no longer an admin here."""
    mine = access.membership_for(request.user, slug)
    if mine is None:
        return redirect("chat:home")
    if not access.allows(mine, access.ADMIN):
        return redirect("chat:workspace", slug)
    return redirect(settings_url(slug))


@login_required
@require_POST
def member_role(request, slug, membership_id):
    membership = access.require_membership(request, slug, access.ADMIN)
    target = _member(membership, membership_id)
    form = RoleForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose admin, member or auditor.")
        return redirect(settings_url(slug))
    role = form.cleaned_data["role"]
    if role == Membership.ADMIN and target.role != Membership.ADMIN:  # offered, never given
        consent.offer_role(membership.workspace, target.user.get_username(), role, user=request.user)
        messages.success(request, _offered(target.user.get_username()))
        return redirect(settings_url(slug))
    try:
        changed = members.change_role(target, role, user=request.user)
    except members.LastAdminError as exc:
        messages.error(request, str(exc))
        return redirect(settings_url(slug))
    messages.success(request, f"{changed.user.get_username()} is now {changed.get_role_display().lower()}.")
    return _after_change(request, slug)


@login_required
@require_POST
def member_remove(request, slug, membership_id):
    membership = access.require_membership(request, slug, access.ADMIN)
    target = _member(membership, membership_id)
    try:
        members.remove_member(target, user=request.user)
    except members.LastAdminError as exc:
        messages.error(request, str(exc))
        return redirect(settings_url(slug))
    messages.success(request, f"{target.user.get_username()} removed from the workspace.")
    return _after_change(request, slug)


@login_required
@require_POST
def admin_news_seen(request, slug):
    """An admin noted who became an admin lately (the notice on the workspace and settings pages)."""
    membership = access.require_membership(request, slug, access.ADMIN)
    note_admin_news(membership)
    return redirect("chat:workspace", slug)
