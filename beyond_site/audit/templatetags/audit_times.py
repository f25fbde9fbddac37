"""Times on the audit pages: the viewer's zone to the second, the exact UTC instant on hover.

`{% moment value %}` writes `<time datetime="<UTC ISO>" title="<UTC ISO>">2026-03-01 14:05:09 CET</time>`:
the record's own timestamp (UTC, microseconds, as the trace writes it) stays in the page, machine-
and human-readable, while the text is what the reader's clock said.
"""
from __future__ import annotations

from datetime import datetime, timezone as dt_timezone

from django import template
from django.utils import timezone
from django.utils.dateformat import format as date_format
from django.utils.html import format_html

from beyond_site.lib.instants import parse_instant

register = template.Library()

SHOWN = "Y-m-d H:i:s T"


def utc_iso(value: datetime) -> str:
    return value.astimezone(dt_timezone.utc).isoformat(timespec="microseconds")


@register.simple_tag
def moment(value: datetime | None, empty: str = ""):
    if value is None:
        return empty
    exact = utc_iso(value)
    return format_html('<time datetime="{}" title="{} (UTC)">{}</time>', exact, exact,
                       date_format(timezone.localtime(value), SHOWN))


@register.simple_tag
def viewer_zone() -> str:
    """The zone the page's times are shown in, by name ("UTC" unless the browser told us another)."""
    return str(timezone.get_current_timezone_name())


@register.filter
def instant(value):
    """An instant recorded as ISO text (a page's `fetched_at`) as a datetime for `{% moment %}`."""
    return parse_instant(value)
