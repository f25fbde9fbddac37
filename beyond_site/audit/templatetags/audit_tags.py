"""What the audit pages' top bar needs to know about the viewer."""
from django import template

from beyond_site.workspaces.access import AUDIT, allows, membership_for

register = template.Library()


@register.simple_tag(takes_context=True)
def may_audit(context, workspace) -> bool:
    """Whether the viewer may read the admin-and-auditor pages (change log, usage), so that a
    member is not shown links that would only answer 403. Uses the page's membership if it has one."""
    membership = context.get("membership")
    if membership is None or membership.workspace_id != workspace.pk:
        membership = membership_for(context["request"].user, workspace.slug)
    return allows(membership, AUDIT)
