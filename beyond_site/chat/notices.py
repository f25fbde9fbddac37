"""The chat's answer to a refused action: nothing changed, so the page keeps what it shows (the
typed text included) and only the notice comes, swapped out of band into its slot."""
from __future__ import annotations

from django.shortcuts import render
from django.urls import reverse


def notice_only(request, message: str, **extra):
    response = render(request, "chat/_notice.html", {"notice": message, **extra})
    response["HX-Reswap"] = "none"
    return response


def calibration_required(request, slug: str, message: str, **extra):
    """A run refused before it started because the workspace requires a calibration its verifier
    lacks (runs/trust.py): the reason, and the way to the Calibration page."""
    response = notice_only(request, f"Not started: {message}", notice_link=reverse("calibration:reports", args=[slug]),
                           notice_link_text="An admin can calibrate it on the Calibration page.", **extra)
    response.status_code = 409
    return response
