from django import template

from beyond_site.runs.wording import OFFLINE_TIP

register = template.Library()

STATUS_LABELS = {"running": "Working", "completed": "Completed", "halted": "Halted", "failed": "Failed",
                 "cancelled": "Stopped"}


@register.filter
def run_status_label(status: str) -> str:
    return STATUS_LABELS.get(status, status)


@register.simple_tag
def offline_tip() -> str:
    return OFFLINE_TIP
