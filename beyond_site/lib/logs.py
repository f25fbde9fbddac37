"""Logging filters.

Secrets in addresses never reach a log (`NoSecretsInPaths`, on the one handler): an invitation's
token and a password reset's are in their links' paths, which Django's request log writes for a
404 or a 403 ("Not Found: /invitations/<token>/"); an API token may be pasted into a query string.
Each is replaced by a marker before the line is written.

A refused request (403: a member without the role, a non-member, a failed CSRF check) is a normal
event on a multi-tenant site, not a crash: Django logs it with the exception's traceback, which
buried the real errors. `OneLineForbidden` keeps one line, with the reason, and no traceback.
"""
from __future__ import annotations

import logging
import re

#: (what, its replacement): the invitation links, the reset links, API tokens anywhere.
_SECRETS = (
    (re.compile(r"(/invitations/)[^/\s\"'?#]+"), r"\1[token]"),
    (re.compile(r"(/reset/)[^/\s\"'?#]+/[^/\s\"'?#]+"), r"\1[token]"),
    (re.compile(r"\bbyd_[A-Za-z0-9_-]{8,}"), "byd_[token]"),
)


def without_secrets(text: str) -> str:
    """`text` with the tokens of invitation and reset links, and API tokens, replaced by markers."""
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text


class NoSecretsInPaths(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = without_secrets(message)
        if cleaned != message:
            record.msg, record.args = cleaned, ()
        return True


class OneLineForbidden(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) == 403 and record.exc_info:
            reason = next(iter(str(record.exc_info[1] or "").splitlines()), "")
            if reason:
                record.msg = f"{record.msg} (%s)"
                record.args = (*(record.args or ()), reason[:200])
            record.exc_info = None
            record.exc_text = None
        return True
