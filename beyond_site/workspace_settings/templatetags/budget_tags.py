"""`{% budgets_section %}`: the Budgets section of the settings page, with its own form."""
from django import template

from beyond_site.workspace_settings.budgets import section_context

register = template.Library()


@register.inclusion_tag("workspace_settings/_budgets.html", takes_context=True)
def budgets_section(context):
    return {**section_context(context["workspace"]), "csrf_token": context.get("csrf_token")}
