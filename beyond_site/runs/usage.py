"""Usage at a glance: tokens and cost of a workspace's model calls, and its runs by status and badge.

Read from the run record only (ModelCall, Run, Step), with a fixed number of grouped queries
whatever the number of calls: one for the calls (grouped by month, role and model; every coarser
total is added up from those groups here), one for the runs by status, one for the steps by badge.

A NULL token count or cost means the endpoint did not report it, which is not zero. So every
figure here is a pair: the sum over the calls that reported it, and how many calls did not. A
figure no call reported is None ("not reported"), never 0.

Cost: `cost_source` says where a figure came from: "reported" is the endpoint's own charge,
"estimated" a gateway's price-table figure that may differ from the bill. The total adds both
and keeps the estimated part apart, so a page can say how much of it is an estimate.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

from django.db.models import Case, CharField, Count, Exists, F, OuterRef, Q, QuerySet, Sum, Value, When
from django.db.models.functions import TruncMonth

from beyond_site.runs.models import ModelCall, Run, Step

#: The token columns, in the order pages and exports show them (disjoint buckets: docs/audit.md).
TOKEN_FIELDS = ("input_tokens", "output_tokens", "reasoning_tokens", "cache_read_tokens", "cache_write_tokens")
TOKEN_LABELS = {"input_tokens": "input", "output_tokens": "output", "reasoning_tokens": "reasoning",
                "cache_read_tokens": "cache read", "cache_write_tokens": "cache write"}
ESTIMATED = "estimated"


@dataclass
class Tally:
    """What a group of calls used: per token column the reported sum and the calls that did not
    report it; the cost likewise, with its estimated part."""

    calls: int = 0
    sums: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOKEN_FIELDS, 0))
    missing: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOKEN_FIELDS, 0))
    cost_sum: float = 0.0
    cost_estimated_sum: float = 0.0
    cost_missing: int = 0
    cost_estimated_calls: int = 0

    def add(self, other: Tally) -> None:
        self.calls += other.calls
        for name in TOKEN_FIELDS:
            self.sums[name] += other.sums[name]
            self.missing[name] += other.missing[name]
        self.cost_sum += other.cost_sum
        self.cost_estimated_sum += other.cost_estimated_sum
        self.cost_missing += other.cost_missing
        self.cost_estimated_calls += other.cost_estimated_calls

    def tokens(self, name: str) -> int | None:
        """The reported sum of column `name`, or None when no call of the group reported it."""
        return self.sums[name] if self.missing[name] < self.calls else None

    @property
    def cost(self) -> float | None:
        return self.cost_sum if self.cost_missing < self.calls else None

    @property
    def cost_estimated(self) -> float | None:
        return self.cost_estimated_sum if self.cost_estimated_calls else None

    @property
    def total_tokens(self) -> int:
        """All reported tokens of the group, every column (the buckets are disjoint)."""
        return sum(self.sums.values())


@dataclass
class Group:
    month: date
    role: str
    model: str
    tally: Tally


@dataclass
class UsageReport:
    groups: list[Group]                      # one per (month, role, model), oldest month first
    total: Tally
    by_month: dict[date, Tally]
    by_role: dict[str, Tally]
    by_model: dict[str, Tally]
    by_month_role: dict[tuple[date, str], Tally]
    runs_by_status: dict[str, int]           # Run.status -> runs
    steps_by_badge: dict[str, dict]          # badge or step status -> {"steps": n, "runs": n}
    runs_total: int = 0


def _aggregates() -> dict:
    found = {"calls": Count("id"), "cost_sum": Sum("cost"), "cost_missing": Count("id", filter=Q(cost__isnull=True)),
             "cost_estimated_sum": Sum("cost", filter=Q(cost__isnull=False, cost_source=ESTIMATED)),
             "cost_estimated_calls": Count("id", filter=Q(cost__isnull=False, cost_source=ESTIMATED))}
    for name in TOKEN_FIELDS:
        found[f"{name}__sum"] = Sum(name)
        found[f"{name}__missing"] = Count("id", filter=Q(**{f"{name}__isnull": True}))
    return found


def _tally(row: dict) -> Tally:
    return Tally(
        calls=row["calls"],
        sums={name: row[f"{name}__sum"] or 0 for name in TOKEN_FIELDS},
        missing={name: row[f"{name}__missing"] for name in TOKEN_FIELDS},
        cost_sum=row["cost_sum"] or 0.0, cost_estimated_sum=row["cost_estimated_sum"] or 0.0,
        cost_missing=row["cost_missing"], cost_estimated_calls=row["cost_estimated_calls"])


def _month(value) -> date:
    return value.date() if isinstance(value, datetime) else value


def workspace_calls(workspace, start: datetime, end: datetime, *, role: str = "", model: str = "") -> QuerySet:
    """The workspace's model calls made in [start, end), of `role` and `model` when given."""
    calls = ModelCall.objects.filter(run__workspace=workspace, created_at__gte=start, created_at__lt=end)
    if role:
        calls = calls.filter(role=role)
    if model:
        calls = calls.filter(model=model)
    return calls


def workspace_runs(workspace, start: datetime, end: datetime, *, role: str = "", model: str = "") -> QuerySet:
    """The workspace's runs created in [start, end); with a role or model, only the runs that made
    at least one such call."""
    runs = Run.objects.filter(workspace=workspace, created_at__gte=start, created_at__lt=end)
    if role or model:
        matching = ModelCall.objects.filter(run=OuterRef("pk"))
        if role:
            matching = matching.filter(role=role)
        if model:
            matching = matching.filter(model=model)
        runs = runs.filter(Exists(matching))
    return runs


def _step_key() -> Case:
    """A step as the badge counts see it: its badge once released, else its status (a pending
    step of a finished run was not released either)."""
    return Case(When(status=Step.RELEASED, badge__gt="", then=F("badge")),
                When(status=Step.PENDING, then=Value(Step.NOT_RELEASED)),
                default=F("status"), output_field=CharField())


def usage_report(workspace, start: datetime, end: datetime, *, role: str = "", model: str = "") -> UsageReport:
    """Three queries, whatever the number of calls, runs and steps."""
    rows = (workspace_calls(workspace, start, end, role=role, model=model)
            .annotate(month=TruncMonth("created_at")).values("month", "role", "model")
            .annotate(**_aggregates()).order_by("month", "role", "model"))
    groups = [Group(_month(r["month"]), r["role"], r["model"], _tally(r)) for r in rows]

    total, by_month, by_role, by_model, by_month_role = Tally(), {}, {}, {}, {}
    for g in groups:
        total.add(g.tally)
        for table, key in ((by_month, g.month), (by_role, g.role), (by_model, g.model),
                           (by_month_role, (g.month, g.role))):
            table.setdefault(key, Tally()).add(g.tally)

    runs = workspace_runs(workspace, start, end, role=role, model=model)
    runs_by_status = {r["status"]: r["n"] for r in runs.values("status").annotate(n=Count("id")).order_by("status")}

    steps = (Step.objects.filter(run__in=runs.values("pk")).annotate(key=_step_key()).values("key")
             .annotate(steps=Count("id"), runs=Count("run", distinct=True)).order_by("key"))
    steps_by_badge = {s["key"]: {"steps": s["steps"], "runs": s["runs"]} for s in steps}

    return UsageReport(groups=groups, total=total, by_month=by_month, by_role=by_role, by_model=by_model,
                       by_month_role=by_month_role, runs_by_status=runs_by_status, steps_by_badge=steps_by_badge,
                       runs_total=sum(runs_by_status.values()))


def workspace_models(workspace) -> list[str]:
    """Every model the workspace's calls used (the filter's choices)."""
    return list(ModelCall.objects.filter(run__workspace=workspace).values_list("model", flat=True)
                .distinct().order_by("model"))
