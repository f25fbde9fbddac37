"""Who checked (docs/verifier-contract.md, "Who checked"), end to end on the site: the run records
`verification`, the record's chain covers it, and the trace, `beyond_run`, the chat, the audit
pages, the exports and the Calibration page say it in words."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client

from pipeline import badges
from pipeline import events as ev
from pipeline.calibration.offline import sentence
from pipeline.events import Event
from beyond_site.runs.models import Run
from beyond_site.workspaces.models import Membership
from tests import scripting
from tests.scripting import PASS, fail
from tests.site.audit_support import run_task
from tests.site.chat_support import new_run, record, workspace_with
from tests.site.test_tamper_evidence import assert_caught, sql, verify

pytestmark = pytest.mark.django_db(transaction=True)

TASK = "Draft our ISO/IEC 27001:2022 access control policy"


def offline_run(*args: str) -> tuple[dict, str]:
    """An offline run through beyond_run: (its trace, what the text form printed)."""
    out, text = io.StringIO(), io.StringIO()
    call_command("beyond_run", "--workspace", "acme", "--task", TASK, "--provider", "offline", "--json", stdout=out)
    trace = json.loads(out.getvalue())
    from beyond_site.runs.management.commands.beyond_run import format_trace
    text.write(format_trace(trace))
    return trace, text.getvalue()


def page(user, path: str) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(path)
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def test_an_offline_run_is_checked_mechanically_never_passed(acme):
    trace, printed = offline_run()
    assert trace["run"]["status"] == "completed" and trace["run"]["verification"] == badges.MECHANICAL
    assert {s["badge"] for s in trace["steps"]} == {badges.CHECKED}
    assert {e["checked_by"] for e in trace["events"] if e["type"] == "step_released"} == {badges.MECHANICAL}
    assert "Checked mechanically: no language model read these steps." in printed
    assert verify()[0] == 0


def test_a_scripted_model_verifier_s_run_is_checked_by_a_model(acme, tmp_path):
    trace = run_task(tmp_path, {1: {"executor": ["One."], "verifier": [PASS]},
                                2: {"executor": ["Two.", "Two again."], "verifier": [fail(), PASS]}})
    assert trace["run"]["verification"] == badges.BY_MODEL
    assert [s["badge"] for s in trace["steps"]] == [badges.PASSED, badges.PASSED_AFTER_RERENDER]


def test_a_run_that_released_nothing_records_no_verification(acme, tmp_path):
    trace = run_task(tmp_path, {1: {"executor": ["One."], "verifier": [{"error": "timeout"}, {"error": "crash"}]}})
    assert trace["run"]["status"] == "halted" and trace["run"]["verification"] is None


def test_a_changed_verification_is_caught_by_the_chain(acme):
    trace, _ = offline_run()
    sql("UPDATE runs_run SET verification = %s WHERE id = %s", [badges.BY_MODEL, trace["run"]["id"]])
    assert_caught(Run.objects.get(pk=trace["run"]["id"]), "who checked its steps does not match")


def test_an_older_offline_run_recorded_as_passed_is_shown_checked_and_verifies_clean(alice):
    """A run recorded before the checked badge: its release events say `passed` and not who
    checked. Its verifier (the offline engine) is not a model, so it reads as checked mechanically."""
    workspace = workspace_with(member=alice)  # the default topology: offline
    run = new_run(workspace, alice)
    legacy = Event(ev.StepReleased(step=1, title="Part 1", badge=badges.PASSED, content="Part one."))
    record(run, Event(ev.RunStarted(topology=run.topology, offline=True)),
           Event(ev.BriefReady(brief=scripting.brief(1))), legacy, Event(ev.RunCompleted()))
    run.refresh_from_db()
    assert run.verification == badges.MECHANICAL
    html = page(alice, f"/w/{workspace.slug}/c/{run.conversation_id}/")
    assert 'data-badge="checked"' in html and ">Checked mechanically<" in html and ">Passed<" not in html
    assert verify()[0] == 0


def test_the_migration_gives_older_runs_their_verification(acme, tmp_path):
    offline, _ = offline_run()
    model = run_task(tmp_path, {1: {"executor": ["One."], "verifier": [PASS]}})
    executor = MigrationExecutor(connection)
    executor.migrate([("runs", "0005_order_by_key_columns")])  # as before who-checked existed
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())  # every app, those built on the runs' included
    assert Run.objects.get(pk=offline["run"]["id"]).verification == badges.MECHANICAL
    assert Run.objects.get(pk=model["run"]["id"]).verification == badges.BY_MODEL
    assert verify()[0] == 0


def test_the_chat_says_who_checked_with_the_offline_figures_beside_the_badge(acme, alice):
    Membership.objects.create(user=alice, workspace=acme, role=Membership.MEMBER)
    trace, _ = offline_run()
    html = page(alice, f"/w/acme/c/{trace['run']['conversation']}/")
    assert 'data-verification="mechanical"' in html and "Checked mechanically: no language model read" in html
    figures = sentence().replace("'", "&#x27;")
    assert html.count(figures) >= len(trace["steps"])  # every badge's tooltip, and the run's line
    assert "No language model read this step." in html


def test_the_audit_pages_say_who_checked_and_filter_by_it(acme, alice, tmp_path):
    Membership.objects.create(user=alice, workspace=acme, role=Membership.AUDITOR)
    offline, _ = offline_run()
    model = run_task(tmp_path, {1: {"executor": ["One."], "verifier": [PASS]}})
    listing = page(alice, "/w/acme/audit/")
    assert "audit-checked-mechanical" in listing and "audit-checked-model" in listing
    assert f'/runs/{offline["run"]["id"]}/' in page(alice, "/w/acme/audit/?verification=mechanical")
    assert f'/runs/{model["run"]["id"]}/' not in page(alice, "/w/acme/audit/?verification=mechanical")
    detail = page(alice, f"/w/acme/audit/runs/{offline['run']['id']}/")
    assert 'data-verification="mechanical"' in detail and "checked mechanically</span>" in detail
    assert "verifier (no language model) verdict:" in detail and "model verdict:" not in detail


def test_the_exports_say_who_checked_and_what_the_badges_mean(acme, tmp_path):
    from beyond_site.exports.editions import CHECKED_MEANING, PASS_MEANING

    trace, _ = offline_run()
    path = tmp_path / "out.md"
    call_command("beyond_export", str(trace["run"]["id"]), "--format", "md", "--out", str(path))
    summary = path.read_text().split("## Verification")[1].split("\n---\n")[0]
    assert "released after mechanical checks only (no language model read them)" in summary
    assert "Checked mechanically: no language model read these steps." in summary
    assert f"Sections: {len(trace['steps'])} checked mechanically." in summary
    assert CHECKED_MEANING[:60] in summary and PASS_MEANING[:40] not in summary


def test_the_calibration_page_says_the_offline_verifier_is_no_model_with_its_figures(acme, alice):
    Membership.objects.create(user=alice, workspace=acme, role=Membership.ADMIN)
    html = page(alice, "/w/acme/calibration/")
    assert 'id="mechanical-verifier"' in html and sentence().replace("'", "&#x27;") in html


def test_a_calibration_takes_workspace_drafts_only_from_steps_a_model_passed(acme, tmp_path):
    from django.utils import timezone

    from beyond_site.calibration.calibrating import workspace_runs

    offline_run()
    model = run_task(tmp_path, {1: {"executor": ["Model-checked text."], "verifier": [PASS]}})
    legacy = Run.objects.exclude(pk=model["run"]["id"]).get()
    legacy.steps.update(badge=badges.PASSED)  # as an offline run recorded before `checked` reads
    taken = workspace_runs(acme, finished_by=timezone.now(), limit=50)
    assert [text for _, _, text in taken] == ["Model-checked text."]


def test_the_run_s_verification_combines_its_steps_checkers():
    from beyond_site.runs.verification import combined, shown_badge

    M, X, MIX = badges.BY_MODEL, badges.MECHANICAL, badges.MIXED
    assert [combined(k) for k in ([], [None], [M, M], [X], [M, X], [MIX, M], [None, X])] == [
        None, None, M, X, MIX, MIX, X]
    # Only a pass no model read is shown as checked; a warning stays a warning, a model's pass a pass.
    assert shown_badge(badges.PASSED, X) == shown_badge(badges.PASSED_AFTER_RERENDER, X) == badges.CHECKED
    assert shown_badge(badges.WARNING, X) == badges.WARNING and shown_badge(badges.PASSED, MIX) == badges.PASSED
    assert shown_badge(badges.PASSED, M) == badges.PASSED and shown_badge(None, X) is None
