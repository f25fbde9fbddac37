"""Daphne's access log without secrets: each line's request (method and path) goes through the
site's log cleaner (lib/logs.py) before daphne writes it, so an invitation link's token, a password
reset's or an API token in a query string never reaches stdout. Daphne writes its access log to a
stream of its own, not through Python's logging, so the logging filter cannot see it."""
from __future__ import annotations

import sys

from beyond_site.lib.logs import without_secrets


def install() -> bool:
    """Clean daphne's access log lines; False when daphne is not the server."""
    if "daphne.server" not in sys.modules:
        return False
    from daphne.access import AccessLogGenerator  # daphne is the server here: it is loaded already

    if getattr(AccessLogGenerator, "_beyond_clean", False):
        return True
    write = AccessLogGenerator.write_entry

    def write_entry(self, host, date, request, *args, **kwargs):
        return write(self, host, date, without_secrets(request), *args, **kwargs)

    AccessLogGenerator.write_entry = write_entry
    AccessLogGenerator._beyond_clean = True
    return True
