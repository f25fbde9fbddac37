"""The Budgets section of the workspace settings page: what a run may spend, and how many runs a
member, or the whole workspace, may start.

A form of its own with its own view and template (`workspace_settings/_budgets.html`, placed on
the page by the `budgets_section` tag). Changes go through `configuration.set_budget`, which logs them.
"""
from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.views.decorators.http import require_POST

from beyond_site.workspace_settings.sections import save_section
from beyond_site.workspaces import access, configuration
from beyond_site.workspaces.models import WorkspaceBudget


class BudgetForm(forms.Form):
    """Every limit is optional: empty means no limit."""

    max_tokens_per_run = forms.IntegerField(
        required=False, min_value=1, max_value=configuration.BUDGET_MAXIMA["max_tokens_per_run"], label="Tokens per run",
        help_text="A run that reaches it halts; what was released stays.")
    max_cost_per_run = forms.DecimalField(
        required=False, min_value=configuration.BUDGET_MINIMUMS["max_cost_per_run"], max_digits=12, decimal_places=4,
        label="Cost per run (USD)",
        help_text="Counted from the costs endpoints report; a run on an endpoint that reports none halts.")
    max_runs_per_user_per_day = forms.IntegerField(
        required=False, min_value=0, max_value=configuration.BUDGET_MAXIMA["max_runs_per_user_per_day"],
        label="Runs per member in 24 hours")
    max_runs_in_flight_per_user = forms.IntegerField(
        required=False, min_value=0, max_value=configuration.BUDGET_MAXIMA["max_runs_in_flight_per_user"],
        label="Runs at once per member")
    max_runs_in_flight_per_workspace = forms.IntegerField(
        required=False, min_value=0, max_value=configuration.BUDGET_MAXIMA["max_runs_in_flight_per_workspace"],
        label="Runs at once in the workspace")

    @classmethod
    def for_workspace(cls, workspace) -> BudgetForm:
        budget = WorkspaceBudget.of(workspace)
        return cls(initial={name: getattr(budget, name) for name in WorkspaceBudget.LIMITS})


def section_context(workspace, form: BudgetForm | None = None) -> dict:
    return {"workspace": workspace, "budget_form": form or BudgetForm.for_workspace(workspace)}


@login_required
@require_POST
def budgets(request, slug):
    membership = access.require_membership(request, slug, access.ADMIN)
    workspace = membership.workspace
    form = BudgetForm(request.POST)

    def save() -> str:
        configuration.set_budget(workspace, form.cleaned_data, user=request.user)
        return "Budget saved: it applies to the next run submitted."

    return save_section(request, membership, form, save, anchor="budgets", page="workspace_settings/budgets.html",
                        context=section_context(workspace, form))
