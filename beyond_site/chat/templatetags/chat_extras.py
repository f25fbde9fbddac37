from django import template

from beyond_site.lib.export_formats import DOCUMENT_FORMATS
from beyond_site.lib.instants import instant_words as _instant_words
from beyond_site.runs.wording import OFFLINE_TIP
from beyond_site.workspaces.models import CLASSIFICATIONS

register = template.Library()

STATUS_LABELS = {"running": "Working", "completed": "Completed", "halted": "Halted", "failed": "Failed",
                 "cancelled": "Stopped", "declined": "Declined"}

@register.filter
def run_status_label(status: str) -> str:
    return STATUS_LABELS.get(status, status)


@register.filter
def instant_words(value) -> str:
    return _instant_words(value)


@register.simple_tag
def offline_tip() -> str:
    return OFFLINE_TIP


@register.simple_tag
def document_formats() -> tuple:
    return tuple(DOCUMENT_FORMATS.items())


@register.simple_tag
def classifications() -> tuple:
    return CLASSIFICATIONS
