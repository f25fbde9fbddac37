"""Usage at a glance, for the workspace's admins and auditors: tokens and cost by role, model and
month, runs by status and steps by badge, as charts with their tables, and a CSV export.

The figures come from `runs/usage.py`. A member gets a 403 (like the other pages kept for admins
and auditors), a non-member a 404. "Not reported" stays visible everywhere: a sum is always shown
with the number of calls that did not report it, and a figure no call reported reads "not
reported", never 0.
"""
from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_safe

from pipeline import badges
from pipeline.topology import ROLES
from beyond_site.lib.downloads import attachment
from beyond_site.audit.filters import refuse_end_before_start
from beyond_site.audit.usage_charts import Bar, bar_chart
from beyond_site.lib.csv_guard import guarded_csv
from beyond_site.runs.models import Run, Step
from beyond_site.runs.usage import TOKEN_FIELDS, TOKEN_LABELS, Tally, usage_report, workspace_models
from beyond_site.workspaces.access import READ, require_membership
from beyond_site.workspaces.models import Membership

DEFAULT_MONTHS = 12
#: A longer range shows only the months that had calls, so the month chart stays readable.
MONTHS_DRAWN_MAX = 36
BADGE_ORDER = (badges.PASSED, badges.PASSED_AFTER_RERENDER, badges.CHECKED, badges.WARNING, badges.HALTED, Step.NOT_RELEASED)
#: Dates outside these are refused (the range's end is the day after `date_to`, which must exist).
FIRST_DAY, LAST_DAY = date(1970, 1, 1), date(9998, 12, 31)


def require_usage_reader(request, slug: str) -> Membership:
    membership = require_membership(request, slug, READ)  # 404 for a non-member
    if membership.role not in (Membership.ADMIN, Membership.AUDITOR):
        raise PermissionDenied("Usage is for the workspace's admins and auditors")
    return membership


# ---- the filters -----------------------------------------------------------------------------

def _month_start(day: date, months_back: int = 0) -> date:
    index = day.year * 12 + day.month - 1 - months_back
    return date(index // 12, index % 12 + 1, 1)


def default_range(today: date) -> tuple[date, date]:
    """The last 12 months: from the first day of the month 11 months ago, to today."""
    return _month_start(today, DEFAULT_MONTHS - 1), today


class UsageFilterForm(forms.Form):
    date_from = forms.DateField(required=False, label="From", widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(required=False, label="To", widget=forms.DateInput(attrs={"type": "date"}))
    role = forms.ChoiceField(required=False, choices=[("", "any"), *((r, r) for r in ROLES)])
    model = forms.ChoiceField(required=False, choices=[("", "any")])

    def __init__(self, *args, models: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["model"].choices = [("", "any"), *((m, m) for m in models)]

    def clean(self):
        data = super().clean()
        for name in ("date_from", "date_to"):
            if data.get(name) and not FIRST_DAY <= data[name] <= LAST_DAY:
                self.add_error(name, f"Choose a day between {FIRST_DAY} and {LAST_DAY}")
                data.pop(name, None)
        refuse_end_before_start(self, data)
        return data


def read_filters(workspace, params) -> tuple[UsageFilterForm, dict]:
    """The form and the filters it yields: an invalid value is dropped with its error shown (the
    default takes its place), so a stale bookmark still opens."""
    form = UsageFilterForm(params, models=workspace_models(workspace))
    form.is_valid()
    data = form.cleaned_data
    first, last = default_range(timezone.now().astimezone(UTC).date())
    start_day = data.get("date_from") or first
    end_day = data.get("date_to") or max(last, start_day)
    return form, {"start_day": start_day, "end_day": end_day,
                  "start": datetime.combine(start_day, time.min, tzinfo=UTC),
                  "end": datetime.combine(end_day + timedelta(days=1), time.min, tzinfo=UTC),
                  "role": data.get("role") or "", "model": data.get("model") or ""}


def _report(workspace, filters: dict):
    return usage_report(workspace, filters["start"], filters["end"], role=filters["role"], model=filters["model"])


# ---- words and numbers -----------------------------------------------------------------------

def _calls(n: int) -> str:
    return f"{n} call" if n == 1 else f"{n} calls"


def money(value: float | None) -> str:
    return "not reported" if value is None else f"${value:,.4f}"


def compact(value: float) -> str:
    """12345 -> 12.3k: for chart notes and ticks (the tables give exact numbers)."""
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            return f"{value / size:.3g}{suffix}"
    return f"{value:g}"


def money_tick(value: float) -> str:
    return "$" + (compact(value) if value >= 1000 else f"{value:.3g}")


def token_cell(tally: Tally, name: str) -> dict:
    value = tally.tokens(name)
    missing = tally.missing[name]
    return {"text": "not reported" if value is None else f"{value:,}", "reported": value is not None,
            "note": f"{_calls(missing)} not reported" if missing and value is not None else
                    (f"by {_calls(missing)}" if missing else "")}


def cost_cell(tally: Tally) -> dict:
    cost = tally.cost
    notes = []
    if tally.cost_estimated is not None:
        notes.append(f"{money(tally.cost_estimated)} of it estimated by a gateway")
    if tally.cost_missing and cost is not None:
        notes.append(f"{_calls(tally.cost_missing)} not reported")
    elif tally.cost_missing:
        notes.append(f"by {_calls(tally.cost_missing)}")
    return {"text": money(cost), "reported": cost is not None, "note": "; ".join(notes)}


def tally_row(label: str, tally: Tally) -> dict:
    return {"label": label, "calls": tally.calls, "tokens": [token_cell(tally, f) for f in TOKEN_FIELDS],
            "cost": cost_cell(tally)}


def _roles_in(report) -> list[str]:
    return [r for r in ROLES if r in report.by_role] + sorted(r for r in report.by_role if r not in ROLES)


def months_shown(report, start_day: date, end_day: date, since: date | None = None) -> list[date]:
    """The months of the chart, from `start_day`'s, or from `since`'s when later (the workspace's
    creation: no month before it can have a call) unless a call is on record earlier."""
    first = start_day
    if since is not None:
        first = max(start_day, min([since, *report.by_month]))
    months, month = [], _month_start(first)
    while month <= end_day and len(months) <= MONTHS_DRAWN_MAX:
        months.append(month)
        month = _month_start(month + timedelta(days=31))
    if len(months) > MONTHS_DRAWN_MAX:
        return sorted(report.by_month)
    return months


# ---- the charts and their tables ---------------------------------------------------------------

def cost_by_month(report, months: list[date]) -> dict:
    roles = _roles_in(report)
    bars, table = [], []
    for month in months:
        tally = report.by_month.get(month, Tally())
        per_role = [report.by_month_role.get((month, role), Tally()) for role in roles]
        note = money(tally.cost) if tally.calls else "no calls"
        if tally.cost_missing:
            note += f", {tally.cost_missing} not reported"
        bars.append(Bar(f"{month:%Y-%m}", tuple((role, t.cost_sum) for role, t in zip(roles, per_role)), note))
        table.append({"label": f"{month:%Y-%m}", "cells": [cost_cell(t) if t.calls else None for t in per_role],
                      "total": cost_cell(tally) if tally.calls else None})
    return {"id": "chart-cost-month", "headers": roles, "rows": table,
            "chart": bar_chart("Cost per month, by role (USD)", bars, [(r, r) for r in roles],
                               tick_label=money_tick)}


def tokens_by_model(report) -> dict:
    kinds = [(f, TOKEN_LABELS[f]) for f in TOKEN_FIELDS]
    bars = []
    for model, tally in sorted(report.by_model.items()):
        missing = max(tally.missing.values())
        # Per column counts differ; the largest is how many calls at least left a figure out.
        note = compact(tally.total_tokens) + (f", at least {_calls(missing)} not reported" if missing else "")
        bars.append(Bar(model, tuple((f, tally.sums[f]) for f in TOKEN_FIELDS), note))
    return {"id": "chart-tokens-model", "chart": bar_chart("Tokens per model, by kind", bars, kinds, tick_label=compact)}


def runs_by_status(report) -> dict:
    statuses = [s for s, _ in Run.STATUSES]
    rows = [{"label": s, "count": report.runs_by_status.get(s, 0)} for s in statuses]
    extra = sorted(s for s in report.runs_by_status if s not in statuses)
    rows += [{"label": s, "count": report.runs_by_status[s]} for s in extra]
    bars = [Bar(r["label"], (("runs", r["count"]),), str(r["count"])) for r in rows]
    return {"id": "chart-runs-status", "rows": rows,
            "chart": bar_chart("Runs by status", bars, [("runs", "runs")], whole=True)}


def _badge_label(key: str) -> str:
    return "not released" if key == Step.NOT_RELEASED else badges.label(key).lower()


def steps_by_badge(report) -> dict:
    keys = [k for k in BADGE_ORDER] + sorted(k for k in report.steps_by_badge if k not in BADGE_ORDER)
    rows = [{"label": _badge_label(k), "key": k, **report.steps_by_badge.get(k, {"steps": 0, "runs": 0})}
            for k in keys]
    bars = [Bar(r["label"], (("steps", r["steps"]),), f"{r['steps']} in {r['runs']} runs") for r in rows]
    return {"id": "chart-steps-badge", "rows": rows,
            "chart": bar_chart("Steps by badge", bars, [("steps", "steps")], whole=True)}


# ---- the views -------------------------------------------------------------------------------

@require_safe
@login_required
def usage_page(request, slug: str):
    membership = require_usage_reader(request, slug)
    workspace = membership.workspace
    form, filters = read_filters(workspace, request.GET)
    report = _report(workspace, filters)
    return render(request, "audit/usage.html", {
        "workspace": workspace, "membership": membership, "form": form, "filters": filters, "report": report,
        "token_labels": [TOKEN_LABELS[f] for f in TOKEN_FIELDS],
        "total_rows": [tally_row("All calls", report.total)],
        "by_role": [tally_row(role, report.by_role[role]) for role in _roles_in(report)],
        "by_model": [tally_row(model, tally) for model, tally in sorted(report.by_model.items())],
        "cost_month": cost_by_month(report, months_shown(report, filters["start_day"], filters["end_day"],
                                                         since=timezone.localdate(workspace.created_at))),
        "tokens_model": tokens_by_model(report), "runs_status": runs_by_status(report),
        "steps_badge": steps_by_badge(report),
    })


CSV_FIELDS = ("month", "role", "model", "calls",
              *(c for f in TOKEN_FIELDS for c in (f, f"{f}_not_reported")),
              "cost_usd", "cost_estimated_usd", "cost_not_reported")


def _number(value) -> str:
    if value is None:
        return ""  # not reported: an empty cell, never 0
    return f"{value:.6f}" if isinstance(value, float) else str(value)


def usage_csv_text(report) -> str:
    """One row per (month, role, model); an empty sum means no call of the row reported it."""
    rows = []
    for g in report.groups:
        t = g.tally
        tokens = [c for f in TOKEN_FIELDS for c in (_number(t.tokens(f)), str(t.missing[f]))]
        # Model names come from the providers: every cell goes through the one CSV guard.
        rows.append([f"{g.month:%Y-%m}", g.role, g.model, t.calls, *tokens, _number(t.cost),
                     _number(t.cost_estimated), t.cost_missing])
    return guarded_csv(CSV_FIELDS, rows)


@require_safe
@login_required
def usage_csv(request, slug: str):
    membership = require_usage_reader(request, slug)
    _, filters = read_filters(membership.workspace, request.GET)
    report = _report(membership.workspace, filters)
    return attachment(usage_csv_text(report), "text/csv; charset=utf-8",
                      f'beyond-usage-{membership.workspace.slug}-{filters["start_day"]:%Y%m%d}-'
                      f'{filters["end_day"]:%Y%m%d}.csv')
