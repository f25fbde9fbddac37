"""The chat's answer to a refused action: nothing changed, so the page keeps what it shows (the
typed text included) and only the notice comes, swapped out of band into its slot."""
from __future__ import annotations

from django.shortcuts import render


def notice_only(request, message: str, **extra):
    response = render(request, "chat/_notice.html", {"notice": message, **extra})
    response["HX-Reswap"] = "none"
    return response
