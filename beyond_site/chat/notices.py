"""The chat's answer to a refused action: nothing changed, so the page keeps what it shows (the
typed text included) and only the notice comes, swapped out of band into its slot."""
from __future__ import annotations

from django.shortcuts import render
from django.urls import reverse

from beyond_site.workspaces.access import ADMIN, allows


def notice_only(request, message: str, **extra):
    response = render(request, "chat/_notice.html", {"notice": message, **extra})
    response["HX-Reswap"] = "none"
    return response


def calibration_required(request, membership, message: str, **extra):
    """A run refused before it started because the workspace requires a calibration its verifier
    lacks (runs/trust.py): the reason, and the way to the Calibration page for an admin, who may
    open it; anyone else is told to ask one rather than sent to a page that refuses them."""
    text = f"Not started: {message}"
    if allows(membership, ADMIN):
        extra.update(notice_link=reverse("calibration:reports", args=[membership.workspace.slug]),
                     notice_link_text="Calibrate it on the Calibration page.")
    else:
        text += " Ask an admin of this workspace to calibrate its verifier on the Calibration page."
    response = notice_only(request, text, **extra)
    response.status_code = 409
    return response
