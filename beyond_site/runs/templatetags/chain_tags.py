"""The record's integrity on the pages: a banner when the workspace's last periodic check failed
(`{% chain_alert %}`, for its admins and auditors), and a run's own chain on its audit page
(`{% run_chain_status run as chain %}`, verified as the page is rendered)."""
from django import template

from beyond_site.runs import chain
from beyond_site.workspaces.models import Membership

register = template.Library()

#: Who is told that the record failed its check: those who answer for it.
TOLD = (Membership.ADMIN, Membership.AUDITOR)
#: Problems listed in the banner; the rest are counted (`beyond_audit verify` lists them all).
SHOWN = 5


@register.inclusion_tag("runs/_chain_alert.html", takes_context=True)
def chain_alert(context):
    workspace, request = context.get("workspace"), context.get("request")
    user = getattr(request, "user", None)
    if workspace is None or not getattr(user, "is_authenticated", False):
        return {}
    role = Membership.objects.filter(user=user, workspace=workspace).values_list("role", flat=True).first()
    check = chain.failed_check(workspace) if role in TOLD else None
    if check is None:
        return {}
    return {"check": check, "workspace": workspace, "shown": check.problems[:SHOWN],
            "more": max(0, len(check.problems) - SHOWN)}


@register.simple_tag
def run_chain_status(run):
    return chain.chain_status(run)
