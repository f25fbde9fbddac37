"""The tamper-evident record: every change made behind the application's back is found and named."""
from __future__ import annotations

import asyncio
import io
import json
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import connection, connections
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from beyond_site.lib.chaining import GENESIS
from channels.db import database_sync_to_async
from beyond_site.runs import chain, jobs
from beyond_site.runs.jobs import ENGINE_APP
from beyond_site.runs.models import (Attempt, ChainCheck, LedgerAnchor, ModelCall, Run, RunEvent, Verdict,
                                     WorkspaceLedger)
from beyond_site.runs.recorder import EventRecorder
from beyond_site.runs.reaping import reap_stale_runs
from beyond_site.runs.queue import claim_run, request_stop, start_run
from beyond_site.runtime.process import start_background, stop_background
from pipeline import events as ev
from pipeline.events import Event
from pipeline.topology import parse_shorthand
from tests.scripting import PASS, fail
from tests.site.audit_support import run_task, sql, verify

pytestmark = pytest.mark.django_db(transaction=True)


def two_step_run(tmp_path, **kwargs) -> Run:
    trace = run_task(tmp_path, {1: {"executor": ["Draft one.", "Draft one, fixed."], "verifier": [fail(), PASS]},
                                2: {"executor": ["Draft two."], "verifier": [PASS]}}, **kwargs)
    return Run.objects.get(pk=trace["run"]["id"])


@pytest.fixture
def runs(acme, tmp_path):
    """Two finished runs of acme, recorded by the real pipeline."""
    return [two_step_run(tmp_path), two_step_run(tmp_path, task="Draft a backup note")]


def test_an_untouched_record_verifies_clean(runs):
    code, out = verify()
    assert code == 0, out
    assert out.strip().splitlines()[-1].startswith("record intact: 1 workspace, 2 runs")
    assert WorkspaceLedger.objects.filter(workspace__slug="acme").count() == 2


def broken_runs(out: str) -> set[int]:
    return {int(line.split(":")[0].split()[1]) for line in out.splitlines() if line.startswith("run ")}


def assert_caught(run: Run, *words: str) -> str:
    code, out = verify()
    assert code == 1, out
    assert broken_runs(out) == {run.pk}, out
    line = next(line for line in out.splitlines() if line.startswith(f"run {run.pk}:"))
    for word in words:
        assert word in line, line
    assert out.strip().splitlines()[-1].startswith("record BROKEN: 1 run")
    return line


def event(run: Run, type_: str, n: int = 0) -> RunEvent:
    return run.events.filter(type=type_).order_by("seq")[n]


def test_an_edited_event_is_named_by_run_and_seq(runs):
    target = event(runs[1], "attempt_drafted")
    data = {**target.data, "draft": "Something else."}
    sql("UPDATE runs_runevent SET data = %s WHERE id = %s", [json.dumps(data), target.pk])
    line = assert_caught(runs[1], f"event {target.seq} does not match its hash")
    # The event no longer matches the attempt row either (which was left alone).
    assert "the attempt (step 1, attempt 1) does not match" in line


def test_an_edited_verdict_is_caught(runs):
    verdict = Verdict.objects.filter(attempt__step__run=runs[0]).order_by("id").first()
    sql("UPDATE runs_verdict SET parsed = %s WHERE id = %s", [json.dumps({"pass": True, "issues": []}), verdict.pk])
    assert_caught(runs[0], "the verdict (step 1, attempt 1, #1) does not match event")


def test_an_edited_attempt_is_caught(runs):
    attempt = Attempt.objects.filter(step__run=runs[0]).order_by("id").first()
    sql("UPDATE runs_attempt SET draft = %s WHERE id = %s", ["Rewritten.", attempt.pk])
    assert_caught(runs[0], "the attempt (step 1, attempt 1) does not match event")


def test_an_edited_model_call_is_caught(runs):
    call = ModelCall.objects.filter(run=runs[0]).order_by("id")[1]
    sql("UPDATE runs_modelcall SET model = %s WHERE id = %s", ["another-model", call.pk])
    assert_caught(runs[0], "model call #2 does not match event")


def test_a_context_record_whose_parts_changed_is_caught(runs):
    call = ModelCall.objects.filter(run=runs[1], context__isnull=False).order_by("id").first()
    record = call.context
    parts = [dict(part) for part in record.parts]
    parts[0]["role"] = "assistant" if parts[0]["role"] != "assistant" else "user"
    sql("UPDATE runs_contextrecord SET parts = %s WHERE id = %s", [json.dumps(parts), record.pk])
    code, out = verify()
    assert code == 1
    assert f"the context record {record.sha256[:12]} no longer matches its parts" in out
    # Context records are shared; the run that used it first in the pass names it.
    assert broken_runs(out) & {r.pk for r in runs}


def test_a_deleted_event_is_caught(runs):
    target = event(runs[0], "step_verifying")
    sql("DELETE FROM runs_runevent WHERE id = %s", [target.pk])
    assert_caught(runs[0], f"event {target.seq} missing", f"event {target.seq + 1} does not match its hash")


def test_swapped_events_are_caught(runs):
    first, second = event(runs[0], "step_rendering"), event(runs[0], "attempt_drafted")
    sql("UPDATE runs_runevent SET seq = 0 WHERE id = %s", [first.pk])
    sql("UPDATE runs_runevent SET seq = %s WHERE id = %s", [first.seq, second.pk])
    sql("UPDATE runs_runevent SET seq = %s WHERE id = %s", [second.seq, first.pk])
    assert_caught(runs[0], f"event {first.seq} does not match its hash", f"event {second.seq} does not match its hash")


def test_a_deleted_last_event_breaks_the_ledger(runs):
    last = runs[1].events.order_by("-seq").first()
    assert last.type == "run_completed"
    sql("DELETE FROM runs_runevent WHERE id = %s", [last.pk])
    assert_caught(runs[1], "is not the one in ledger row 2", "no event finished it")


def test_a_run_without_its_ledger_row_is_reported(runs):
    sql("DELETE FROM runs_workspaceledger WHERE run_id = %s", [runs[0].pk])
    code, out = verify()
    assert code == 1
    assert f"run {runs[0].pk}: the run finished but its workspace's ledger has no row for it" in out
    assert "acme ledger: row 1 is missing" in out


def test_a_changed_release_and_run_fields_are_caught(runs):
    sql("UPDATE runs_step SET content = %s WHERE run_id = %s AND \"index\" = 2", ["Edited.", runs[0].pk])
    sql("UPDATE runs_run SET summary = %s, status = %s WHERE id = %s", ["Other recap.", "halted", runs[1].pk])
    code, out = verify()
    assert code == 1 and broken_runs(out) == {runs[0].pk, runs[1].pk}
    assert f"run {runs[0].pk}: the release of step 2 does not match event" in out
    assert "the run's status, halt reason or end does not match event" in out
    assert "the run's recap does not match event" in out


def test_verify_can_be_limited_to_one_workspace(runs, globex, tmp_path):
    other = two_step_run(tmp_path, slug="globex")
    sql("UPDATE runs_attempt SET draft = %s WHERE step_id IN (SELECT id FROM runs_step WHERE run_id = %s)",
        ["x", other.pk])
    assert verify("--workspace", "acme")[0] == 0
    code, out = verify("--workspace", "globex")
    assert code == 1 and broken_runs(out) == {other.pk}


def rewrite_run_chain(run: Run) -> None:
    """What a careful forger does: edit an event, then recompute every hash after it (the run's and
    the ledger's) with the very chain functions the application uses."""
    target = event(run, "step_released")
    sql("UPDATE runs_runevent SET data = %s WHERE id = %s", [json.dumps({**target.data, "badge": "PASS"}), target.pk])
    prev = GENESIS
    for e in run.events.order_by("seq"):
        prev = chain.event_hash(prev, run.pk, e.seq, e.type, e.data, e.at)
        sql("UPDATE runs_runevent SET hash = %s WHERE id = %s", [prev, e.pk])
    final_hash, prev = prev, GENESIS
    for row in WorkspaceLedger.objects.filter(workspace=run.workspace).order_by("seq"):
        run_hash = final_hash if row.run_id == run.pk else row.run_hash
        prev = chain.ledger_hash(prev, row.workspace_id, row.seq, row.run_id, run_hash, row.at)
        sql("UPDATE runs_workspaceledger SET run_hash = %s, hash = %s WHERE id = %s", [run_hash, prev, row.pk])


def test_a_rewritten_chain_passes_plain_verify_but_not_a_kept_anchor(runs, tmp_path):
    out = io.StringIO()
    call_command("beyond_audit", "anchor", stdout=out)
    anchor = json.loads(out.getvalue())
    assert anchor["heads"]["acme"]["seq"] == 2
    path = tmp_path / "anchor.json"
    path.write_text(out.getvalue())
    code, out = verify("--against", str(path))
    assert code == 0 and out.strip().endswith("the anchor matches")
    assert LedgerAnchor.objects.get().document == anchor

    # The forger also fixes the release row the event implies, so everything agrees again.
    assert runs[0].steps.get(index=1).badge != "PASS"
    sql("UPDATE runs_step SET badge = %s WHERE run_id = %s AND \"index\" = 1", ["PASS", runs[0].pk])
    rewrite_run_chain(runs[0])
    code, out = verify()
    assert code == 0, out

    code, out = verify("--against", str(path))
    assert code == 1
    assert "acme ledger: row 2 (run" in out and "no longer has the hash anchored" in out


def test_runs_finished_by_the_reaper_or_a_stop_and_unfinished_runs_verify_clean(acme, alice):
    stopped, _ = start_run(acme, "stopped while queued", topology=parse_shorthand("offline"))
    assert request_stop(stopped.pk, alice)
    reaped, _ = start_run(acme, "its runner died", topology=parse_shorthand("offline"))
    claim_run(reaped.pk, "dead-runner")
    EventRecorder(reaped, owner="dead-runner").record(Event(ev.RunStarted(topology={}, offline=True)))
    Run.objects.filter(pk=reaped.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert reap_stale_runs() == [reaped.pk]  # a second recorder continues the chain
    running, _ = start_run(acme, "still running", topology=parse_shorthand("offline"))
    claim_run(running.pk, "alive")
    EventRecorder(running, owner="alive").record(Event(ev.RunStarted(topology={}, offline=True)))
    code, out = verify()
    assert code == 0, out
    assert list(WorkspaceLedger.objects.order_by("seq").values_list("run_id", flat=True)) == [stopped.pk, reaped.pk]


def test_what_json_columns_give_back_is_what_was_hashed(acme):
    """Floats, large numbers, key order and text survive the database exactly as hashed."""
    run, _ = start_run(acme, "numbers", topology=parse_shorthand("offline"))
    claim_run(run.pk, "me")
    recorder = EventRecorder(run, owner="me")
    recorder.record(Event(ev.ResearchDone(pages=3, usable=2, failed=1, refused=0, elapsed_s=1e16,
                                          notes=["é ✓ \u2028", "0.1"])))
    recorder.record(Event(ev.ResearchDone(pages=0, usable=0, failed=0, refused=0, elapsed_s=0.1 + 0.2)))
    recorder.record(Event(ev.EvidenceCollected(items=[{"z": 1.5e-7, "a": -0.0, "m": 12345678.9}])))
    assert chain.verify_run(run).ok
    assert [e.hash for e in run.events.order_by("seq")][-1] == recorder.head


def test_the_periodic_check_records_a_failure_that_admins_and_auditors_see(runs, people, client, settings):
    settings.BEYOND_CHAIN_CHECK_EVERY_S = 3600
    assert chain.check_if_due() is True
    assert ChainCheck.objects.get().ok is True
    assert chain.check_if_due() is False  # the last check is recent
    client.force_login(people["auditor"])
    assert "chain-alert" not in client.get("/w/acme/audit/").content.decode()

    sql("UPDATE runs_attempt SET draft = %s WHERE id = %s",
        ["<script>alert(1)</script>", Attempt.objects.filter(step__run=runs[0]).first().pk])
    settings.BEYOND_CHAIN_CHECK_EVERY_S = 0
    assert chain.check_if_due() is True
    check = ChainCheck.objects.order_by("-at", "-id").first()
    assert check.ok is False and check.problems[0].startswith(f"run {runs[0].pk}: the attempt")

    for role in ("admin", "auditor"):
        client.force_login(people[role])
        for page in ("/w/acme/audit/", f"/w/acme/audit/runs/{runs[1].pk}/", "/w/acme/"):
            body = client.get(page).content.decode()
            assert 'id="chain-alert"' in body, (role, page)
            assert f"run {runs[0].pk}: the attempt (step 1, attempt 1) does not match event" in body
    client.force_login(people["member"])
    assert 'id="chain-alert"' not in client.get("/w/acme/").content.decode()

    # A passing check clears it.
    sql("UPDATE runs_attempt SET draft = %s WHERE id = %s",
        ["Draft one.", Attempt.objects.filter(step__run=runs[0]).first().pk])
    chain.check_all()
    client.force_login(people["auditor"])
    assert 'id="chain-alert"' not in client.get("/w/acme/audit/").content.decode()


def test_the_run_page_shows_the_run_chain_verified_now(runs, people, client):
    client.force_login(people["auditor"])
    body = client.get(f"/w/acme/audit/runs/{runs[0].pk}/").content.decode()
    assert 'id="chain-status"' in body and "Intact: the" in body and "row 1 of the workspace ledger" in body
    target = event(runs[0], "verdict_recorded")
    sql("UPDATE runs_runevent SET data = %s WHERE id = %s", [json.dumps({**target.data, "raw": "x"}), target.pk])
    body = client.get(f"/w/acme/audit/runs/{runs[0].pk}/").content.decode()
    assert f"Broken from event {target.seq}" in body
    assert f"event {target.seq} does not match its hash" in body


def test_the_ledger_does_not_fork_when_runs_finish_at_once(acme):
    """Two runs of one workspace finishing in parallel threads still make one chain."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite writers take turns anyway; the race is exercised on PostgreSQL (the _postgres file)")
    runs = []
    for n in range(6):
        run, _ = start_run(acme, f"task {n}", topology=parse_shorthand("offline"))
        claim_run(run.pk, f"r{n}")
        runs.append(run)

    def finish(run):
        try:
            EventRecorder(run, owner=f"r{runs.index(run)}").record(Event(ev.RunCompleted()))
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(finish, runs))
    assert sorted(WorkspaceLedger.objects.values_list("seq", flat=True)) == [1, 2, 3, 4, 5, 6]
    assert verify()[0] == 0


def test_runs_recorded_before_the_chain_existed_are_chained_by_the_migration(runs, tmp_path):
    """An old database (before 0004): its runs get their chains and ledger rows, in order, and it
    verifies clean; a change made after that is caught as for any run."""
    MigrationExecutor(connection).migrate([("runs", "0002_working_loop")])
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([("runs", "0004_tamper_evidence")])
    executor = MigrationExecutor(connection)  # then up to date: the later columns hold their defaults
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    code, out = verify()
    assert code == 0, out
    assert list(WorkspaceLedger.objects.order_by("seq").values_list("run_id", flat=True)) == [r.pk for r in runs]
    sql("UPDATE runs_attempt SET truncated = %s WHERE id = %s",
        [True, Attempt.objects.filter(step__run=runs[1]).first().pk])
    assert_caught(runs[1], "the attempt (step 1, attempt 1) does not match")


def test_the_admin_change_log_problems_are_reported_under_the_workspace(runs, monkeypatch):
    monkeypatch.setattr(chain, "verify_changes", lambda workspace: [f"change 3 of {workspace.slug} was edited"])
    code, out = verify()
    assert code == 1 and broken_runs(out) == set()
    assert "acme change log: change 3 of acme was edited" in out.splitlines()
    assert out.strip().splitlines()[-1].startswith("record BROKEN: 0 runs and 1 other problem")


def test_the_embedded_server_runs_the_periodic_check_beside_the_sweeper(runs, settings, monkeypatch):
    settings.BEYOND_RUN_IN_PROCESS = True
    monkeypatch.setattr(chain, "CHECK_POLL_S", 0.05)

    async def scenario():
        start_background(asyncio.get_running_loop())
        try:
            for _ in range(200):
                if await database_sync_to_async(ChainCheck.objects.exists)():
                    return
                await asyncio.sleep(0.05)
        finally:
            await stop_background(asyncio.get_running_loop())
            jobs.serve_here(None)

    asyncio.run(scenario())
    check = ChainCheck.objects.get()
    assert check.ok and check.workspace.slug == "acme"


def test_the_scaled_mode_job_runs_the_check_when_it_is_due(runs, settings):
    if not apps.is_installed(ENGINE_APP):
        pytest.skip("the job engine exists on PostgreSQL only (the _postgres file runs this)")
    from beyond_site.runs import tasks  # loaded by the engine's app, which only PostgreSQL has

    settings.BEYOND_CHAIN_CHECK_EVERY_S = 3600
    assert jobs.run_now(tasks.CHAIN_CHECK_TASK) is True  # as a worker runs the periodic job
    assert jobs.run_now(tasks.CHAIN_CHECK_TASK) is False
    assert ChainCheck.objects.get().ok


def test_changes_cut_from_the_end_of_the_change_log_are_caught_against_a_kept_anchor(acme, alice, tmp_path):
    from beyond_site.workspaces.knowledge import add_memory

    # Two changes that set no setting (a cut setting change is also seen by the settings' check:
    # tests/site/test_tamper_settings.py).
    add_memory(acme, "We are a 40-person company.", user=alice)
    add_memory(acme, "Our offices are in Lyon.", user=alice)
    out = io.StringIO()
    call_command("beyond_audit", "anchor", stdout=out)
    assert json.loads(out.getvalue())["heads"]["acme"]["changes"]["seq"] == 2
    path = tmp_path / "anchor.json"
    path.write_text(out.getvalue())
    assert verify("--against", str(path))[0] == 0

    sql("DELETE FROM workspaces_workspaceevent WHERE workspace_id = %s AND seq = 2", [acme.pk])
    code, out = verify()
    assert code == 0, out  # the chain alone cannot see a cut at its end
    code, out = verify("--against", str(path))
    assert code == 1 and "acme change log: change 2" in out and "is gone" in out


def test_a_run_being_written_verifies_clean_and_its_rows_wait_for_its_end(acme, alice):
    from tests import scripting
    from tests.site.test_recorder_batches import step_events

    run, _ = start_run(acme, "in progress", user=alice, topology=parse_shorthand("offline"))
    claim_run(run.pk, "runner")
    recorder = EventRecorder(Run.objects.get(pk=run.pk), owner="runner")
    recorder.record_many([Event(ev.RunStarted(topology={}, offline=True)),
                          Event(ev.BriefReady(brief=scripting.brief(2))), *step_events(1)])
    # Rows the verifier may read before their event (a batch committed between its two reads)
    # look like rows no event introduced: a run still being written is checked for its chain only.
    sql("UPDATE runs_step SET title = %s WHERE run_id = %s AND \"index\" = 2", ["Changed", run.pk])
    assert chain.run_problems(run) == []
    recorder.record_many(step_events(2) + [Event(ev.RunCompleted())])
    assert any("step 2" in p for p in chain.run_problems(run))


def test_a_finished_run_whose_status_was_set_back_to_running_is_caught(runs):
    sql("UPDATE runs_run SET status = 'running' WHERE id = %s", [runs[0].pk])
    assert_caught(runs[0], "ledger")


def test_edited_unsourced_specifics_are_caught(acme, tmp_path):
    trace = run_task(tmp_path, {1: {"executor": ["Notify within 72 hours; Marc Dubois leads."], "verifier": [PASS]}})
    run = Run.objects.get(pk=trace["run"]["id"])
    assert trace["steps"][0]["unsourced"] and run.unsourced_count == 2
    assert verify()[0] == 0
    sql("UPDATE runs_step SET unsourced = %s WHERE run_id = %s", [json.dumps([]), run.pk])
    sql("UPDATE runs_run SET unsourced_count = 0 WHERE id = %s", [run.pk])
    line = assert_caught(run, "the unsourced specifics of step 1 does not match event",
                         "the run's count of unsourced specifics (0) does not match its events (2)")
    assert "recap" not in line


def test_an_edited_step_is_marked_at_once_in_the_chat_and_the_run_list(runs, client, people):
    """Checked as they are shown (runs/chain.py `shown_tampered`), not at the next periodic check."""
    client.force_login(people["admin"])
    edited, untouched = runs
    assert edited.conversation_id and untouched.conversation_id

    def marked() -> tuple[bool, bool, int]:
        chat = [client.get(f"/w/acme/c/{run.conversation_id}/").content.decode() for run in (edited, untouched)]
        listed = client.get("/w/acme/audit/").content.decode()
        return "data-record-broken" in chat[0], "data-record-broken" in chat[1], listed.count("data-record-broken")

    assert marked() == (False, False, 0)
    sql("UPDATE runs_step SET content = %s WHERE run_id = %s AND \"index\" = 2", ["Edited after release.", edited.pk])
    assert marked() == (True, False, 1)
    sql("UPDATE runs_step SET content = %s WHERE run_id = %s AND \"index\" = 2", ["Draft two.", edited.pk])
    sql("UPDATE runs_run SET summary = %s WHERE id = %s", ["A recap nobody wrote.", untouched.pk])
    assert marked() == (False, True, 1)
