"""The labels section of a run's audit page (templates/calibration/_run_labels.html includes it)."""
from __future__ import annotations

from django import template

from beyond_site.calibration.forms import LabelForm
from beyond_site.calibration.labels import raised_issues
from beyond_site.workspaces.access import ADMIN, AUDIT, allows, membership_for

register = template.Library()


@register.inclusion_tag("calibration/_issue_labels.html", takes_context=True)
def issue_labels(context):
    run, request = context["run"], context["request"]
    membership = membership_for(request.user, run.workspace.slug)
    return {"run": run, "workspace": run.workspace, "issues": raised_issues(run), "may_label": allows(membership, AUDIT),
            "sees_reports": allows(membership, ADMIN), "choices": LabelForm.base_fields["label"].choices,
            "csrf_token": context.get("csrf_token")}
