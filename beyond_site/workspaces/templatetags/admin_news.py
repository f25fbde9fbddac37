"""`{% admin_news %}`: on the workspace page and the settings page, an admin is told who became an
admin by an invitation since they last noted it (workspaces/admin_rights.py)."""
from django import template

from beyond_site.workspaces.admin_rights import admin_news as news_for

register = template.Library()


@register.inclusion_tag("workspaces/_admin_news.html", takes_context=True)
def admin_news(context):
    membership, workspace = context.get("membership"), context.get("workspace")
    news = news_for(membership) if membership is not None and workspace is not None else []
    return {"news": news, "workspace": workspace, "csrf_token": context.get("csrf_token")}
