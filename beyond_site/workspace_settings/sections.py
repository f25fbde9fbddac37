"""What every settings section with a form of its own does on submission (the Budgets and the
Calibration requirement sections): save through the configuration setter, which logs the change,
and return to the section on the settings page; or show the section alone again, with its errors,
as a 400 (a setter's ValueError is shown as the form's own error)."""
from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import reverse


def save_section(request, membership, form, save: Callable[[], str], *, anchor: str, page: str,
                 context: dict):
    """`save()` stores the form's cleaned values and returns the message to show once saved."""
    if form.is_valid():
        try:
            saved = save()
        except ValueError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, saved)
            return redirect(reverse("workspace_settings:settings", args=[membership.workspace.slug]) + f"#{anchor}")
    return render(request, page, {**context, "membership": membership}, status=400)
