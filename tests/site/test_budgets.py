"""Budgets (docs/operations.md, "Budgets"): set per workspace by the operator or its admins, logged;
a submission over a cap is refused before a run exists; a run that reaches its token or cost limit
halts with a `budget:` reason, releases nothing more, and its page, trace and export say so."""
from __future__ import annotations

import asyncio
import io
import json
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from beyond_site.chat.presenting import run_view
from beyond_site.exports import md
from beyond_site.exports.editions import build
from beyond_site.runs.budgets import BudgetRefused
from beyond_site.runs.models import Run
from beyond_site.runs.selectors import run_trace
from beyond_site.runs.queue import claim_run, start_run
from beyond_site.runs.runner import execute_run
from beyond_site.workspaces import configuration
from beyond_site.workspaces.models import Conversation, Message, WorkspaceBudget, WorkspaceEvent
from pipeline.topology import parse_shorthand
from tests import scripting
from tests.scripting import PASS
from tests.site.chat_support import client_for, workspace_with

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("queued_runs_stay_queued")]
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def acme(alice, bob, carol):
    return workspace_with("acme", admin=alice, member=bob, auditor=carol)


def send(user, task="Draft an access policy", key=None):
    return client_for(user).post("/w/acme/send/", {"message": task, "idempotency_key": key or task}, **HTMX)


# ---------------------------------------------------------------------------- setting a budget

def test_set_budget_sets_changes_and_clears_limits_and_logs_each_change(acme):
    out = io.StringIO()
    call_command("beyond_workspace", "set-budget", "acme", "--max-tokens-per-run", "50000",
                 "--max-cost-per-run", "0.75", "--max-runs-per-user-per-day", "20", stdout=out)
    assert "max-tokens-per-run=50000" in out.getvalue() and "max-cost-per-run=0.7500" in out.getvalue()
    call_command("beyond_workspace", "set-budget", "acme", "--max-tokens-per-run", "none",
                 "--max-runs-in-flight-per-user", "2", "--max-runs-in-flight-per-workspace", "5", stdout=io.StringIO())
    budget = WorkspaceBudget.objects.get(workspace=acme)
    assert budget.limits() == {"max_tokens_per_run": None, "max_cost_per_run": "0.7500",
                               "max_runs_per_user_per_day": 20, "max_runs_in_flight_per_user": 2,
                               "max_runs_in_flight_per_workspace": 5}
    changes = list(WorkspaceEvent.objects.filter(workspace=acme, action="budget_changed").order_by("id"))
    assert len(changes) == 2
    assert changes[1].before["max_tokens_per_run"] == 50000
    assert changes[1].after["max_tokens_per_run"] is None
    call_command("beyond_workspace", "set-budget", "acme", stdout=io.StringIO())  # nothing named: nothing changes
    assert WorkspaceEvent.objects.filter(action="budget_changed").count() == 2


@pytest.mark.parametrize("option, value", [("--max-tokens-per-run", "0"), ("--max-tokens-per-run", "many"),
                                           ("--max-cost-per-run", "-1"), ("--max-runs-per-user-per-day", "-2")])
def test_set_budget_refuses_a_bad_value_and_changes_nothing(acme, option, value):
    with pytest.raises(CommandError):
        call_command("beyond_workspace", "set-budget", "acme", option, value, stdout=io.StringIO())
    assert not WorkspaceBudget.objects.filter(workspace=acme).exists()


def test_the_settings_page_has_a_budgets_form_for_admins(acme, alice, bob):
    client = client_for(alice)
    page = client.get("/w/acme/settings/").content.decode()
    assert 'id="budgets"' in page and 'name="max_tokens_per_run"' in page
    response = client.post("/w/acme/settings/budgets/", {"max_tokens_per_run": "40000", "max_cost_per_run": "",
                                                         "max_runs_per_user_per_day": "10",
                                                         "max_runs_in_flight_per_user": "",
                                                         "max_runs_in_flight_per_workspace": "3"}, follow=True)
    assert response.redirect_chain[-1][0] == "/w/acme/settings/#budgets" and "Budget saved" in response.content.decode()
    budget = WorkspaceBudget.objects.get(workspace=acme)
    assert (budget.max_tokens_per_run, budget.max_runs_per_user_per_day, budget.max_runs_in_flight_per_workspace) == (
        40000, 10, 3)
    assert WorkspaceEvent.objects.get(action="budget_changed").user == alice
    assert 'value="40000"' in client.get("/w/acme/settings/").content.decode()
    refused = client.post("/w/acme/settings/budgets/", {"max_tokens_per_run": "-5"})
    assert refused.status_code == 400 and "greater than or equal to 1" in refused.content.decode()
    assert WorkspaceBudget.objects.get(workspace=acme).max_tokens_per_run == 40000
    assert client_for(bob).post("/w/acme/settings/budgets/", {"max_tokens_per_run": "1"}).status_code == 403


# ---------------------------------------------------------------------------- caps on submissions

def test_a_submission_over_the_daily_cap_is_refused_before_a_run_exists(acme, bob):
    configuration.set_budget(acme, {"max_runs_per_user_per_day": 2})
    assert send(bob, "one").status_code == send(bob, "two").status_code == 200
    Run.objects.update(status=Run.COMPLETED)  # finished: only the daily cap is in the way
    response = send(bob, "three")
    assert response.status_code == 429 and response["HX-Reswap"] == "none"
    html = response.content.decode()
    assert "Not started: this workspace allows 2 runs per member in 24 hours" in html
    assert Run.objects.count() == 2 and Message.objects.count() == 2 and Conversation.objects.count() == 2


def test_the_daily_cap_is_a_rolling_24_hours(acme, bob):
    configuration.set_budget(acme, {"max_runs_per_user_per_day": 1})
    send(bob, "yesterday")
    Run.objects.update(status=Run.COMPLETED, created_at=timezone.now() - timedelta(hours=25))
    assert send(bob, "today").status_code == 200 and Run.objects.count() == 2


def test_a_replayed_submission_is_not_a_new_one(acme, bob):
    configuration.set_budget(acme, {"max_runs_per_user_per_day": 1})
    send(bob, "one", key="k1")
    assert send(bob, "one", key="k1").status_code == 200 and Run.objects.count() == 1


def test_the_in_flight_caps_count_queued_and_running_runs(acme, alice, bob):
    configuration.set_budget(acme, {"max_runs_in_flight_per_user": 1, "max_runs_in_flight_per_workspace": 2})
    assert send(bob, "one").status_code == 200
    refused = send(bob, "two")
    assert refused.status_code == 429 and "at most 1 run queued or running at once" in refused.content.decode()
    assert send(alice, "three").status_code == 200  # another member's place
    Run.objects.filter(task="one").update(status=Run.RUNNING)
    refused = send(alice, "four")
    assert "this workspace runs at most 2 runs at once" in refused.content.decode()
    Run.objects.filter(task="one").update(status=Run.HALTED)
    assert send(bob, "five").status_code == 200
    assert sorted(Run.objects.values_list("task", flat=True)) == ["five", "one", "three"]


def test_submissions_take_turns_on_the_workspace_only_when_it_caps_them(acme, bob):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def workspace_reads(task):
        with CaptureQueriesContext(connection) as seen:
            start_run(acme, task, user=bob)
        return sum('FROM "workspaces_workspace"' in q["sql"] for q in seen.captured_queries)

    assert workspace_reads("no cap: nothing to count, no turn to take") == 0
    configuration.set_budget(acme, {"max_runs_per_user_per_day": 5})
    assert workspace_reads("capped: counted under the workspace's lock") == 1
    configuration.set_budget(acme, {"max_runs_per_user_per_day": None, "max_tokens_per_run": 1000})
    assert workspace_reads("a per-run limit caps no submission") == 0


def test_an_uncapped_submission_reads_the_budget_once(acme, bob):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    configuration.set_budget(acme, {"max_tokens_per_run": 1000})  # a budget, capping no submission
    with CaptureQueriesContext(connection) as seen:
        start_run(acme, "one read of the budget", user=bob)
    assert sum('FROM "workspaces_workspacebudget"' in q["sql"] for q in seen.captured_queries) == 1


def test_beyond_run_over_the_workspace_cap_is_a_command_error_and_no_run(acme, bob, tmp_path):
    configuration.set_budget(acme, {"max_runs_in_flight_per_workspace": 1})
    send(bob, "queued")
    with pytest.raises(CommandError, match="^budget: this workspace runs at most 1 run at once"):
        call_command("beyond_run", "--workspace", "acme", "--task", "x", "--provider", "offline",
                     stdout=io.StringIO())
    assert Run.objects.count() == 1


def test_start_run_refuses_with_a_budget_reason(acme, bob):
    configuration.set_budget(acme, {"max_runs_per_user_per_day": 0})
    with pytest.raises(BudgetRefused) as caught:
        start_run(acme, "x", user=bob)
    assert str(caught.value).startswith("budget: ") and Run.objects.count() == 0


# ---------------------------------------------------------------------------- the run's own budget

def used(content: str, tokens: int) -> dict:
    return {"content": content, "usage": {"input": tokens, "output": 0}}


def test_a_run_over_its_token_budget_halts_and_its_page_trace_and_export_say_so(acme, bob, tmp_path, settings):
    settings.BEYOND_STEP_CONCURRENCY = 1  # step by step: step 1 is released before step 2 goes over
    configuration.set_budget(acme, {"max_tokens_per_run": 1000})
    path = scripting.write(tmp_path, scripting.script({
        1: {"executor": [used("Part one.", 100)], "verifier": [used(PASS, 100)]},
        2: {"executor": [used("Part two.", 5000)], "verifier": [used(PASS, 100)]},
    }, planner=[used(json.dumps(scripting.brief(2)), 100)]))
    run, _ = start_run(acme, "Draft an access-control note", user=bob, topology=parse_shorthand(f"scripted:{path}"))
    claim_run(run.pk, "runner")
    asyncio.run(execute_run(run.pk, "runner"))
    run.refresh_from_db()
    assert run.status == Run.HALTED and run.halt_reason.startswith("budget: ")
    trace = run_trace(run)
    assert [s["status"] for s in trace["steps"]] == ["released", "halted"]
    # Step 2's draft went over the budget: it is neither inspected nor released.
    assert trace["steps"][1]["content"] is None and trace["steps"][1]["attempts"] == []
    assert next(e for e in trace["events"] if e["type"] == "run_started")["budget"] == {"max_tokens": 1000,
                                                                                       "max_cost": None}
    view = run_view(run.pk)
    assert "reached a budget limit" in view.outcome and "over the limit of 1,000" in view.run.halt_reason
    assert "budget:" in md.write(build(run))
