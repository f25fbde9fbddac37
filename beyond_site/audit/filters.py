"""The run list's filters: one GET form, read by the list page and the list export alike.

Both read the same form so that "export what I am looking at" is true by construction.

Built for a long history (docs/audit.md, "History at scale"): every filter narrows the runs table
itself, and a filter on the steps is an `EXISTS` subquery, not a join. A join to a to-many relation
repeats a run once per matching step and would need `DISTINCT`, which makes the paginator count
distinct wide rows and stops PostgreSQL from walking the (workspace, created_at, id) index in order.
Dates are ranges on `created_at` (not `created_at__date`), so the index serves them too.
"""
from __future__ import annotations

from datetime import date, datetime, time, timedelta

from django import forms
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.utils import timezone

from pipeline import badges
from beyond_site.runs.models import Run, Step
from pipeline.topology import ROLES

# A step's "badge" as an auditor means it: the released badges plus the halted step.
BADGE_CHOICES = [("", "any"), *((badge, badges.label(badge).lower())
                                 for badge in (badges.WARNING, badges.PASSED_AFTER_RERENDER, badges.CHECKED,
                                               badges.HALTED))]
WITH, WITHOUT = "with", "without"
#: A run's warnings, as the list's Warnings column counts them: its steps', its own and its recap's findings.
WARNING_CHOICES = [("", "any"), (WITH, "with warnings"), (WITHOUT, "without warnings")]
GAPS, ALL_MET = "gaps", "met"
#: The requirement trace (docs/verifier-contract.md): runs whose document misses a requirement of the task.
REQUIREMENT_CHOICES = [("", "any"), (GAPS, "with gaps"), (ALL_MET, "every requirement met")]
VERIFICATION_CHOICES = [("", "any"), (badges.BY_MODEL, "by a language model"), (badges.MECHANICAL, "mechanically"),
                        (badges.MIXED, "mixed")]


def refuse_end_before_start(form: forms.Form, data: dict) -> None:
    """A date range whose end comes before its start: the end is refused, with the error shown
    (the start still filters), rather than a page that silently matches nothing."""
    if data.get("date_from") and data.get("date_to") and data["date_from"] > data["date_to"]:
        form.add_error("date_to", "The end comes before the start")  # and drops it from cleaned_data


class RunFilterForm(forms.Form):
    status = forms.ChoiceField(required=False, choices=[("", "any"), *Run.STATUSES])
    badge = forms.ChoiceField(required=False, choices=BADGE_CHOICES, label="Badge present")
    warnings = forms.ChoiceField(required=False, choices=WARNING_CHOICES, label="Warnings")
    verification = forms.ChoiceField(required=False, choices=VERIFICATION_CHOICES, label="Checked")
    date_from = forms.DateField(required=False, label="Created from", widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(required=False, label="to", widget=forms.DateInput(attrs={"type": "date"}))
    model = forms.CharField(required=False, max_length=200, label="Model (any role)",
                            widget=forms.TextInput(attrs={"placeholder": "e.g. glm"}))
    q = forms.CharField(required=False, max_length=500, label="Task contains")
    unsourced = forms.BooleanField(required=False, label="With unsourced specifics")
    requirements = forms.ChoiceField(required=False, choices=REQUIREMENT_CHOICES, label="Requirements of the task")

    def clean(self):
        data = super().clean()
        refuse_end_before_start(self, data)
        return data


#: Days at the ends of the calendar bound nothing: from the first (or to the last) is every run,
#: and their midnights in another time zone would fall outside the dates Python can hold.
EARLIEST, LATEST = date.min + timedelta(days=1), date.max - timedelta(days=1)


def day_start(day) -> datetime:
    """Midnight at the start of `day` in the viewer's time zone (UTC unless they told us theirs)."""
    return timezone.make_aware(datetime.combine(day, time.min), timezone.get_current_timezone())


def with_step(**step_filter) -> Exists:
    """Runs having at least one step matching `step_filter`, without joining (so without repeats)."""
    return Exists(Step.objects.filter(run=OuterRef("pk"), **step_filter))


def filtered_runs(workspace, params) -> tuple[QuerySet[Run], RunFilterForm]:
    """The workspace's runs, newest first, narrowed by whichever filters in `params` are valid.

    An invalid value (a malformed date) is dropped with the form's error shown, rather than
    failing the page: an auditor's bookmark should still open. Each run appears once: no filter
    joins a to-many relation, so no `DISTINCT` is needed.
    """
    form = RunFilterForm(params)
    form.is_valid()
    f = form.cleaned_data
    runs = Run.objects.filter(workspace=workspace)
    if f.get("status"):
        runs = runs.filter(status=f["status"])
    if f.get("badge") == "halted":
        runs = runs.filter(with_step(status=Step.HALTED))
    elif f.get("badge"):
        runs = runs.filter(with_step(status=Step.RELEASED, badge=f["badge"]))
    if f.get("warnings"):
        warned = (~Q(warnings=[]) | ~Q(summary_findings=[])
                  | Exists(Step.objects.filter(run=OuterRef("pk")).exclude(warnings=[])))
        runs = runs.filter(warned if f["warnings"] == WITH else ~warned)
    if f.get("verification"):
        runs = runs.filter(verification=f["verification"])
    if f.get("date_from") and f["date_from"] > EARLIEST:
        runs = runs.filter(created_at__gte=day_start(f["date_from"]))
    if f.get("date_to") and f["date_to"] < LATEST:
        runs = runs.filter(created_at__lt=day_start(f["date_to"] + timedelta(days=1)))
    if f.get("model"):
        # The topology is the run's own record of its models, so a queued run matches too.
        match = Q()
        for role in ROLES:
            match |= Q(**{f"topology__{role}__model__icontains": f["model"]})
        runs = runs.filter(match)
    if f.get("q"):
        runs = runs.filter(task__icontains=f["q"])
    if f.get("unsourced"):
        runs = runs.filter(unsourced_count__gt=0)
    if f.get("requirements") == GAPS:
        runs = runs.filter(requirements_total__isnull=False, requirements_met__lt=F("requirements_total"))
    elif f.get("requirements") == ALL_MET:
        runs = runs.filter(requirements_total__isnull=False, requirements_met=F("requirements_total"))
    return runs.order_by("-created_at", "-id"), form
