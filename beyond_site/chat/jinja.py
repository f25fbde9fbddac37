"""The Jinja2 environment of the run fragments (templates/jinja2/chat/): what a live page is sent at
every doorbell, and what the chat draws of each run.

Those fragments are rendered far more often than any page: at every event a page sees, for every
page that follows the run, and again at the run's end. Jinja2 compiles a template to Python and
rendered them about four times faster than Django's template language (bench/load.py, and
bench/README.md "Throughput"); every other template stays in Django's. The environment gives
them what Django's tags gave: `url()` for `{% url %}`, and the few filters they use. Escaping is
on and is Django's, and Django's safe strings (sanitised Markdown) pass through as they are.
"""
from __future__ import annotations

import functools
import html

from django.template.defaultfilters import pluralize
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils.text import Truncator
from jinja2 import ChainableUndefined, Environment
from markupsafe import Markup

from beyond_site.chat.templatetags.chat_extras import run_status_label
from beyond_site.lib.instants import instant_words
from beyond_site.runs.wording import OFFLINE_TIP


def url(name: str, *args) -> str:
    return _reversed(get_script_prefix(), get_urlconf(), name, args)


@functools.lru_cache(maxsize=4096)
def _reversed(prefix: str, urlconf, name: str, args: tuple) -> str:
    """A fragment's links, reversed once per run: a run's article is drawn at every event of every
    page that follows it, and `reverse` was most of a redraw's cost (bench/README.md). The key
    holds what `reverse` reads besides its arguments (the script prefix and the request's urlconf);
    the URL patterns themselves do not change while the process runs."""
    return reverse(name, args=args, urlconf=urlconf)


def truncatechars(value, length: int) -> str:
    """Django's `truncatechars`: at most `length` characters, an ellipsis included."""
    return Truncator(value).chars(length)


def escaped(value):
    """Every printed value escaped as Django's own `escape` escapes it (`&#x27;`, `&quot;`: that
    function is `html.escape(str(value))`, called here without its lazy-string wrapper, which cost
    more than the escaping at every printed value), so a fragment reads the same whichever engine
    drew it; a safe string (sanitised Markdown) as it is."""
    return value if hasattr(value, "__html__") else Markup(html.escape(str(value)))


def environment(**options) -> Environment:
    # Undefined names render as nothing and chain (`membership.role` with no membership), as a
    # missing variable does in Django's templates; the websocket's fragments have no request.
    env = Environment(**{**options, "undefined": ChainableUndefined, "keep_trailing_newline": True,
                         "finalize": escaped})
    env.globals.update(url=url, offline_tip=OFFLINE_TIP)
    env.filters.update(run_status_label=run_status_label, pluralize=pluralize, truncatechars=truncatechars,
                       instant_words=instant_words)
    return env
