"""What a workspace's auditors and admins read over the API (docs/api.md, "For auditors"): the run
history with the run list's filters, the change log, usage, and the tamper evidence recomputed.

The filters are the pages' own forms (audit/filters.py, audit/usage.py), so a query means here what
it means on the run list; where a page drops an invalid value to keep a bookmark opening, the API
answers 400 and says which (a program should learn of its mistake).
"""
from __future__ import annotations

from datetime import date
from typing import Literal

from django import forms
from ninja import Field, Query, Schema
from ninja.errors import HttpError

from beyond_site.api.base import api, membership
from beyond_site.api.schemas import NO_NUL, ChangeOut, RunRow, UsageOut, Verified, answers
from beyond_site.audit.filters import (BADGE_CHOICES, REQUIREMENT_CHOICES, VERIFICATION_CHOICES, WARNING_CHOICES,
                                       RunFilterForm, filtered_runs)
from beyond_site.audit.usage import FIRST_DAY, LAST_DAY, read_filters
from beyond_site.runs.chain import summary_line, verify_workspace
from beyond_site.runs.models import Run
from beyond_site.runs.usage import TOKEN_FIELDS, Tally, usage_report
from beyond_site.workspaces.access import AUDIT
from pipeline.topology import ROLES
from beyond_site.workspaces.models import WorkspaceEvent

RUNS_PAGE = 50
CHANGES_PAGE = 100


def _checked(form: forms.Form) -> None:
    """400 naming each invalid filter, in the form's own words."""
    if not form.is_valid():
        errors = [f"{name}: {' '.join(messages)}" for name, messages in form.errors.items()]
        raise HttpError(400, "Invalid filter: " + "; ".join(errors))


def _present(filters: Schema) -> dict:
    return {k: ("on" if v is True else str(v)) for k, v in filters.dict().items() if v not in (None, "", False)}


def _one_of(choices) -> object:
    """The non-empty values of a form's choices, as a type the OpenAPI document lists."""
    return Literal[tuple(value for value, _ in choices if value)]


Status = _one_of(Run.STATUSES)
Badge = _one_of(BADGE_CHOICES)
Warnings = _one_of(WARNING_CHOICES)
Verification = _one_of(VERIFICATION_CHOICES)
Requirements = _one_of(REQUIREMENT_CHOICES)
Role = Literal[ROLES]

#: A day of the calendar, as the pages' date fields take it.
DAY = Field(None, pattern=r"^\d{4}-\d{2}-\d{2}$", json_schema_extra={"format": "date"},
            description="A day, YYYY-MM-DD.")


def _days(filters: Schema) -> tuple[date | None, date | None]:
    """The filters' range, each end a day of the calendar or None; 400 for one that is not."""
    days = []
    for name in ("date_from", "date_to"):
        value = getattr(filters, name)
        try:
            days.append(date.fromisoformat(value) if value else None)
        except ValueError:
            raise HttpError(400, f"Invalid filter: {name}: {value} is not a day of the calendar.") from None
    return days[0], days[1]


def _reversed(start: date | None, end: date | None) -> bool:
    """A range that ends before it starts: nothing is in it (the pages say so and drop the end;
    a program asked for that range and gets what is in it)."""
    return start is not None and end is not None and start > end


class RunFilters(Schema):
    """The run list's filters (docs/audit.md): each narrows the history; none given, every run."""

    status: Status | None = None
    badge: Badge | None = None
    warnings: Warnings | None = None
    verification: Verification | None = None
    date_from: str | None = DAY
    date_to: str | None = DAY
    model: str | None = Field(None, max_length=200, pattern=NO_NUL,
                              description="Part of a model's name, in any role.")
    q: str | None = Field(None, max_length=500, pattern=NO_NUL, description="Words of the task.")
    unsourced: bool = Field(False, description="Only runs with unsourced specifics.")
    requirements: Requirements | None = None
    page: int = Field(1, ge=1, le=100_000)


def _run_row(run) -> dict:
    return {"id": run.pk, "status": run.status, "task": run.task, "created_at": run.created_at,
            "finished_at": run.finished_at, "created_by": run.created_by_name or None,
            "verification": run.verification,
            "requirements": {"met": run.requirements_met, "total": run.requirements_total}
            if run.requirements_total is not None else None}


@api.get("/workspaces/{slug}/runs", response=answers({200: list[RunRow]}), tags=["audit"])
def run_history(request, slug: str, filters: Query[RunFilters]):
    """The run history, newest first, 50 a page, with the run list's filters."""
    found = membership(request, slug, AUDIT)
    if _reversed(*_days(filters)):
        return []
    params = _present(filters)
    params.pop("page", None)
    _checked(RunFilterForm(params))
    runs, _ = filtered_runs(found.workspace, params)
    first = (filters.page - 1) * RUNS_PAGE
    return [_run_row(r) for r in runs[first:first + RUNS_PAGE]]


@api.get("/workspaces/{slug}/changes", response=answers({200: list[ChangeOut]}), tags=["audit"])
def change_log(request, slug: str, page: int = Query(1, ge=1, le=100_000)):
    """The admin change log, newest first, 100 a page."""
    found = membership(request, slug, AUDIT)
    first = (page - 1) * CHANGES_PAGE
    rows = WorkspaceEvent.objects.filter(workspace=found.workspace).order_by("-seq")[first:first + CHANGES_PAGE]
    return [{"seq": r.seq, "at": r.at, "action": r.action, "actor": r.actor_name or None, "detail": r.detail or {}}
            for r in rows]


class UsageFilters(Schema):
    """The usage page's filters: a date range (the last 12 months unless given), a role, a model."""

    date_from: str | None = DAY
    date_to: str | None = DAY
    role: Role | None = None
    model: str | None = Field(None, max_length=200, pattern=NO_NUL,
                              description="A model's name, exactly; another matches nothing.")


def _tally(tally) -> dict:
    return {"calls": tally.calls,
            "tokens": {name: tally.tokens(name) for name in TOKEN_FIELDS},
            "tokens_not_reported": {name: tally.missing[name] for name in TOKEN_FIELDS},
            "cost_usd": tally.cost, "cost_estimated_usd": tally.cost_estimated,
            "cost_not_reported": tally.cost_missing}


@api.get("/workspaces/{slug}/usage", response=answers({200: UsageOut}), tags=["audit"])
def usage(request, slug: str, filters: Query[UsageFilters]):
    """Tokens and cost by month, role and model, as the usage page and its CSV give them. A figure
    no call reported is null, never 0."""
    found = membership(request, slug, AUDIT)
    start, end = _days(filters)
    params = _present(filters)
    model = params.pop("model", "")  # any name: one the workspace never called matches no call
    for name, day in (("date_from", start), ("date_to", end)):
        if day is not None:  # the usage page's calendar is narrower than Python's: its ends hold it all
            params[name] = min(max(day, FIRST_DAY), LAST_DAY).isoformat()
    if _reversed(start, end):
        return {"date_from": start, "date_to": end, "total": _tally(Tally()), "groups": [], "runs_by_status": {}}
    form, chosen = read_filters(found.workspace, params)
    _checked(form)
    report = usage_report(found.workspace, chosen["start"], chosen["end"], role=chosen["role"], model=model)
    return {"date_from": chosen["start_day"], "date_to": chosen["end_day"], "total": _tally(report.total),
            "groups": [{"month": f"{g.month:%Y-%m}", "role": g.role, "model": g.model, **_tally(g.tally)}
                       for g in report.groups],
            "runs_by_status": report.runs_by_status}


@api.post("/workspaces/{slug}/verify", response=answers({200: Verified}), tags=["audit"])
def verify_record(request, slug: str):
    """Recompute the workspace's tamper evidence, as `beyond_audit verify` does."""
    found = membership(request, slug, AUDIT)
    report = verify_workspace(found.workspace)
    return {"intact": not report.broken and not report.other_problems, "summary": summary_line([report]),
            "broken_runs": [r.run_id for r in report.broken]}
