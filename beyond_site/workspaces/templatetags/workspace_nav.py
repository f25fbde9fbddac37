"""`{% workspace_nav "runs" %}`: the workspace's pages in every page's top bar, each shown only to
the roles that may open it (workspaces/access.py), the current one marked. On a wide screen the
links sit in the bar; on a narrow one they fold into a Menu (static/beyond.css), so the bar never
pushes "Log out" off the screen."""
from __future__ import annotations

from django import template
from django.urls import reverse

from beyond_site.workspaces.access import ADMIN, AUDIT, READ, allows, membership_for

register = template.Library()

#: (key, label, URL name, what the role needs, tooltip), in the bar's order.
PAGES = (
    ("chat", "Chat", "chat:workspace", READ, "The workspace's conversations"),
    ("files", "Files", "files:library", READ,
     "The workspace's files and each conversation's: preview, download, add, remove"),
    ("tasks", "Saved tasks", "chat:saved_tasks", READ,
     "Tasks kept for reuse: the workspace's library and your own (type / in the chat's box to use one)"),
    ("runs", "Run history", "audit:runs", READ,
     "Every run of this workspace: briefs, drafts, verdicts, model calls and the context each role saw"),
    ("changes", "Admin changes", "audit:changes", AUDIT, "What the workspace's admins changed, and when"),
    ("usage", "Usage", "audit:usage", AUDIT, "Tokens and cost by role, model and month"),
    ("calibration", "Calibration", "calibration:reports", ADMIN, "How often the verifier is right, measured"),
    ("settings", "Settings", "workspace_settings:settings", ADMIN, "Members, models per role and enabled frameworks"),
)


def pages_for(membership, current: str = "", conversation=None) -> list[dict]:
    """The links `membership` may follow; the Files link keeps the conversation in view."""
    if membership is None:
        return []
    slug = membership.workspace.slug
    links = []
    for key, label, name, need, tip in PAGES:
        if not allows(membership, need):
            continue
        url = reverse(name, args=[slug])
        if key == "files" and conversation is not None and getattr(conversation, "pk", None):
            url += f"?conversation={conversation.pk}"
        links.append({"key": key, "label": label, "url": url, "tip": tip, "current": key == current})
    return links


@register.inclusion_tag("workspaces/_nav.html", takes_context=True)
def workspace_nav(context, current: str = ""):
    membership, workspace = context.get("membership"), context.get("workspace")
    if workspace is not None and (membership is None or membership.workspace_id != workspace.pk):
        membership = membership_for(context["request"].user, workspace.slug)
    return {"links": pages_for(membership, current, context.get("conversation"))}
