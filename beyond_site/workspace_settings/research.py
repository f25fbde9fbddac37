"""The settings page's web-research section: whether new conversations start with research on."""
from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from beyond_site.workspaces import access, configuration
from pipeline.research import search_setting


def research_context() -> dict:
    """What the section shows: whether this server can search at all, and why not."""
    setting = search_setting(settings.BEYOND_ENVIRONMENT)
    return {"research_available": setting.configured, "research_message": setting.message}


@login_required
@require_POST
def research_default(request, slug):
    membership = access.require_membership(request, slug, access.ADMIN)
    on = configuration.set_research_default(membership.workspace, request.POST.get("research_default") == "on",
                                       user=request.user)
    messages.success(request, "New conversations start with web research "
                     + ("on." if on else "off; members can still turn it on beside Send."))
    return redirect(reverse("workspace_settings:settings", args=[slug]) + "#research")
