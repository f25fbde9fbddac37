"""Logging filters.

A refused request (403: a member without the role, a non-member, a failed CSRF check) is a normal
event on a multi-tenant site, not a crash: Django logs it with the exception's traceback, which
buried the real errors. `OneLineForbidden` keeps one line, with the reason, and no traceback.
"""
from __future__ import annotations

import logging


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
