"""Labelling the issues of a run's verifier: a POST from the labels section of the run's audit page.

Auditors and admins may label (403 for members); a non-member, or a run of another workspace, is a
404 as everywhere else. Every label is a new row (labels.py).
"""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from beyond_site.calibration.forms import LabelForm
from beyond_site.calibration.labels import LabelRefused, label_issue
from beyond_site.runs.models import Run
from beyond_site.workspaces.access import AUDIT, READ, allows, require_membership


@require_POST
@login_required
def label(request, slug: str, run_id: int):
    membership = require_membership(request, slug, READ)
    run = get_object_or_404(Run.objects.select_related("workspace"), pk=run_id, workspace=membership.workspace)
    if not allows(membership, AUDIT):
        raise PermissionDenied("Only the workspace's auditors and admins label issues")
    back = reverse("audit:run", args=[slug, run.pk])
    form = LabelForm(request.POST)
    if not form.is_valid():
        messages.error(request, "The label was not saved: choose real or false (a note is optional, "
                                "at most 2000 characters).")
        return redirect(f"{back}#issue-labels")
    data = form.cleaned_data
    try:
        label_issue(run, data["verdict"], data["issue"], data["label"], data["note"], request.user)
    except LabelRefused as exc:
        messages.error(request, f"The label was not saved: {exc}.")
        return redirect(f"{back}#issue-labels")
    messages.success(request, f"Issue labelled {data['label']}.")
    return redirect(f"{back}#issue-{data['verdict']}-{data['issue']}")
