"""The Calibration requirement section of the workspace settings page: whether a run's verifier
must have a calibration report meeting the admins' thresholds before the run may start
(docs/calibration.md, "Trust status").

A form of its own with its own view and template (`workspace_settings/_calibration_requirement.html`,
placed on the page by the `calibration_requirement_section` tag). Rates are typed as percentages
and stored as fractions; changes go through `configuration.set_calibration_requirement`, which logs
them.
"""
from __future__ import annotations

from decimal import Decimal

from django import forms
from django.contrib.auth.decorators import login_required
from django.views.decorators.http import require_POST

from beyond_site.workspace_settings.sections import save_section
from beyond_site.workspaces import access, configuration

HUNDRED = Decimal(100)


def _percent(label: str, help_text: str) -> forms.DecimalField:
    return forms.DecimalField(
        required=False, min_value=0, max_value=100, max_digits=4, decimal_places=1, label=label, help_text=help_text,
        error_messages={"min_value": "Give a percentage from 0 to 100.", "max_value": "Give a percentage from 0 to 100.",
                        "invalid": "Give a percentage from 0 to 100 (a number, e.g. 20 or 12.5).",
                        "max_decimal_places": "At most one decimal place.",
                        "max_digits": "Give a percentage from 0 to 100."})


def _as_percent(rate: float) -> Decimal:
    """A stored fraction as the percentage typed (20, not 20.0 or 2E+1; 12.5)."""
    value = (Decimal(str(rate)) * HUNDRED).quantize(Decimal("0.1"))
    return value.quantize(Decimal("1")) if value == value.to_integral_value() else value


class CalibrationRequirementForm(forms.Form):
    """Empty threshold: no bound on that figure (a completed report is still required)."""

    required = forms.BooleanField(required=False, label="Require a calibrated verifier")
    max_clean_flagged = _percent("At most this % of faithful drafts flagged",
                                 "Clean drafts the verifier failed, under the narrow contract (the one runs use).")
    max_unparseable = _percent("At most this % of verdicts unparseable",
                               "Replies that gave no verdict; in a run each costs a retry, two halt it.")
    min_caught = _percent("At least this % of planted violations caught",
                          "By the model alone, every violation type together (the citation gate's catches not counted).")

    BOUNDS = configuration.CALIBRATION_BOUNDS

    @classmethod
    def for_workspace(cls, workspace) -> CalibrationRequirementForm:
        stored = workspace.calibration_requirement
        initial = {"required": stored is not None}
        for name in cls.BOUNDS:
            rate = (stored or {}).get(name)
            initial[name] = None if rate is None else _as_percent(rate)
        return cls(initial=initial)

    def requirement(self) -> dict | None:
        """The bounds as fractions, or None when no calibration is required (cleaned data only)."""
        if not self.cleaned_data["required"]:
            return None
        return {name: (None if self.cleaned_data[name] is None else float(self.cleaned_data[name] / HUNDRED))
                for name in self.BOUNDS}


def section_context(workspace, form: CalibrationRequirementForm | None = None) -> dict:
    return {"workspace": workspace,
            "requirement_form": form or CalibrationRequirementForm.for_workspace(workspace)}


@login_required
@require_POST
def calibration_requirement(request, slug):
    membership = access.require_membership(request, slug, access.ADMIN)
    workspace = membership.workspace
    form = CalibrationRequirementForm(request.POST)

    def save() -> str:
        requirement = form.requirement()
        configuration.set_calibration_requirement(workspace, requirement, user=request.user)
        return ("Calibration requirement saved: it applies to the next run submitted."
                if requirement is not None else "No calibration is required any more.")

    return save_section(request, membership, form, save, anchor="calibration-requirement",
                        page="workspace_settings/calibration_requirement.html", context=section_context(workspace, form))
