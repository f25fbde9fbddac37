"""Calibrations started from the reports page: run in a thread of the web process, through the same
code as `beyond_calibrate`. A report whose process died meanwhile shows as interrupted on the page
and can be resumed there or with `beyond_calibrate --resume`."""
from __future__ import annotations

import asyncio
import logging
import threading

from django.db import connections

from beyond_site.calibration.calibrating import calibrate, claim_report
from beyond_site.runs.runners import runner_identity

log = logging.getLogger("beyond.calibration")


def page_owner() -> str:
    return f"{runner_identity()}/page"


def start(report_id: int) -> bool:
    """Claim the report and run it in the background; False when another runner holds it."""
    owner = page_owner()
    if not claim_report(report_id, owner):
        return False
    threading.Thread(target=_run, args=(report_id, owner), name=f"calibration-{report_id}", daemon=True).start()
    return True


def _run(report_id: int, owner: str) -> None:
    try:
        asyncio.run(calibrate(report_id, owner))
    except Exception:  # calibrate records its own failures; this is a last resort for the log
        log.exception("calibration %s failed in the background", report_id)
    finally:
        connections.close_all()
