from django import template
from django.template import engines
from django.utils.safestring import mark_safe

from beyond_site.runs.wording import OFFLINE_TIP

register = template.Library()

STATUS_LABELS = {"running": "Working", "completed": "Completed", "halted": "Halted", "failed": "Failed",
                 "cancelled": "Stopped", "declined": "Declined"}


@register.filter
def run_status_label(status: str) -> str:
    return STATUS_LABELS.get(status, status)


@register.simple_tag
def offline_tip() -> str:
    return OFFLINE_TIP


@register.simple_tag(takes_context=True)
def run_article(context, rv):
    """The run's article in a page drawn by Django's templates: the fragment the live page is
    sent at the run's end (templates/jinja2/chat/_run.html, see chat/jinja.py), with this page's
    reader (who may stop the run)."""
    article = engines["fragments"].get_template("chat/_run.html")
    return mark_safe(article.render({"rv": rv, "oob": False, "can_write": context.get("can_write"),  # noqa: S308
                                     "membership": context.get("membership"), "request": context.get("request")}))
