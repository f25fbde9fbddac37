from __future__ import annotations

from django import forms

from beyond_site.calibration.labels import NOTE_MAX
from beyond_site.calibration.models import IssueLabel


class StartForm(forms.Form):
    contract = forms.ChoiceField(choices=[("both", "both"), ("narrow", "narrow"), ("widened", "widened")],
                                 initial="both")
    drafts = forms.IntegerField(required=False, min_value=2, max_value=5000,
                                help_text="A sample of this many drafts, half of them clean; empty: the whole corpus.")
    max_calls = forms.IntegerField(required=False, min_value=1, max_value=100_000, label="Max calls")
    max_cost = forms.DecimalField(required=False, min_value=0.0001, max_digits=10, decimal_places=4,
                                  label="Max cost (USD)")


class LabelForm(forms.Form):
    verdict = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    issue = forms.IntegerField(min_value=0, widget=forms.HiddenInput)
    label = forms.ChoiceField(choices=IssueLabel.LABELS, widget=forms.RadioSelect)
    note = forms.CharField(required=False, max_length=NOTE_MAX)
