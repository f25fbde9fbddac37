"""`{% calibration_requirement_section %}`: the Calibration requirement section of the settings
page, with its own form."""
from django import template

from beyond_site.workspace_settings.calibration_requirement import section_context

register = template.Library()


@register.inclusion_tag("workspace_settings/_calibration_requirement.html", takes_context=True)
def calibration_requirement_section(context):
    return {**section_context(context["workspace"]), "csrf_token": context.get("csrf_token")}
