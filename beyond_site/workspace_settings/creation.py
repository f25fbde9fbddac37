"""A new workspace, made from the home page by a user with the site's staff flag, who becomes its
first admin (and invites the others from its settings page)."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from beyond_site.workspace_settings.forms import NewWorkspaceForm
from beyond_site.workspace_settings.views import settings_url
from beyond_site.workspaces import configuration


@login_required
@require_http_methods(["GET", "POST"])
def new_workspace(request):
    if not request.user.is_staff:
        raise PermissionDenied("Only the site's staff can create workspaces")
    form = NewWorkspaceForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            workspace = configuration.new_workspace(form.cleaned_data["name"], form.cleaned_data["slug"],
                                               user=request.user)
        except ValueError as exc:
            form.add_error("slug" if "address" in str(exc) else "name", str(exc))
        else:
            # The page opens at its top, where this confirmation is (a jump to #members hid it).
            messages.success(request, f"Workspace {workspace.name} created at the address {workspace.slug}: you "
                                      "are its admin. Invite its members in the Members section below.")
            return redirect(settings_url(workspace.slug))
    return render(request, "workspace_settings/new_workspace.html", {"form": form},
                  status=400 if form.errors else 200)
