"""A workspace's budget applied to runs: caps checked before a run exists, limits given to the
pipeline for the run itself (pipeline/budget.py counts and halts).

The daily cap counts the runs a member started in the workspace in the last 24 hours (a rolling
window, so there is no midnight rush); the in-flight caps count runs queued or running.
"""
from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from pipeline.budget import PREFIX, Budget
from beyond_site.lib.queries import one_or_none
from beyond_site.runs.models import Run
from beyond_site.workspaces.models import Workspace, WorkspaceBudget

DAY = timedelta(hours=24)
IN_FLIGHT = (Run.QUEUED, Run.RUNNING)


class BudgetRefused(Exception):
    """A submission over a cap: no run was created. `message` is for the member; str() starts with
    "budget:", like the reason of a run halted over its budget."""

    def __init__(self, message: str):
        super().__init__(f"{PREFIX} {message}")
        self.message = message


def run_budget(workspace: Workspace) -> Budget:
    """The per-run limits the pipeline enforces: the workspace's budget row (read with the workspace
    when the caller selected it, as a run's start does: runner.py `starting`), or no limit."""
    budget = getattr(workspace, "budget", None) or WorkspaceBudget(workspace=workspace)
    cost = budget.max_cost_per_run
    return Budget(max_tokens=budget.max_tokens_per_run, max_cost=float(cost) if cost is not None else None)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


SUBMISSION_CAPS = ("max_runs_in_flight_per_workspace", "max_runs_in_flight_per_user", "max_runs_per_user_per_day")


def check_submission(workspace: Workspace, user) -> None:
    """BudgetRefused when starting one more run now would go over a cap. Call it inside the
    transaction that creates the run: when the workspace caps submissions, the runs are counted
    under a lock on the workspace row, so that two submissions at once cannot both take the last
    place. Without a cap there is nothing to count, and submissions do not take turns on the row
    (under a burst they queued there one behind the other)."""
    budget = WorkspaceBudget.of(workspace)
    if all(getattr(budget, cap) is None for cap in SUBMISSION_CAPS):
        return
    one_or_none(Workspace.objects.select_for_update().filter(pk=workspace.pk).values_list("pk"))
    budget = WorkspaceBudget.of(workspace)  # read again under the lock, which budget changes take too
    runs = Run.objects.filter(workspace=workspace)
    cap = budget.max_runs_in_flight_per_workspace
    if cap is not None and runs.filter(status__in=IN_FLIGHT).count() >= cap:
        busy = "that many are" if cap != 1 else "one is"
        raise BudgetRefused(f"this workspace runs at most {_plural(cap, 'run')} at once, and {busy} queued or "
                            "running; try again when one has finished.")
    if getattr(user, "pk", None) is None:
        return  # the per-member caps count a member's runs; a command-line run has no member
    mine = runs.filter(created_by=user)
    cap = budget.max_runs_in_flight_per_user
    if cap is not None and mine.filter(status__in=IN_FLIGHT).count() >= cap:
        raise BudgetRefused(f"you may have at most {_plural(cap, 'run')} queued or running at once in this "
                            "workspace; stop one or wait until it has finished.")
    cap = budget.max_runs_per_user_per_day
    if cap is not None:
        since = timezone.now() - DAY
        recent = list(mine.filter(created_at__gte=since).order_by("created_at").values_list("created_at", flat=True))
        if len(recent) >= cap:
            if cap == 0:
                raise BudgetRefused("this workspace allows no new runs at the moment (its daily cap is 0).")
            next_at = recent[len(recent) - cap] + DAY
            raise BudgetRefused(f"this workspace allows {_plural(cap, 'run')} per member in 24 hours, and you "
                                f"have started {len(recent)}; the next can start after "
                                f"{next_at:%Y-%m-%d %H:%M} UTC.")
