"""The record covers who and what: who started a run, what was asked, in which conversation, with which
models; who stopped it and what it retried; the bytes behind it (context parts, research pages,
workspace files); and the periodic checks themselves. Each change made behind the application's back
is caught by `beyond_audit verify`; runs recorded before these were chained still verify, and the
command says what it could not check for them."""
from __future__ import annotations

import asyncio
import json
import os
from datetime import timedelta
from pathlib import Path

import pytest
from django.db.models import ProtectedError
from django.utils import timezone

from beyond_site.lib.chaining import GENESIS
from beyond_site.runs import chain
from beyond_site.runs.models import ChainCheck, ModelCall, Run, WorkspaceLedger
from beyond_site.runs.recorder import EventRecorder
from beyond_site.runs.scrubbing import public_topology
from beyond_site.runs.queue import claim_run, request_stop, run_again, start_run
from beyond_site.runs.runner import execute_run
from beyond_site.workspaces import originals
from beyond_site.workspaces.models import Conversation, Membership, Message
from beyond_site.workspaces.knowledge import add_document
from pipeline import events as ev
from pipeline.events import Event
from pipeline.research.evidence import text_sha256
from pipeline.topology import parse_shorthand
from tests import scripting
from tests.scripting import PASS
from tests.site.audit_support import sql, verify

pytestmark = pytest.mark.django_db(transaction=True)

TASK = "Draft an access-control note"


def scripted(tmp_path, name="script.json"):
    path = scripting.write(tmp_path, scripting.script({1: {"executor": ["Only part."], "verifier": [PASS]}}),
                           name=name)
    return parse_shorthand(f"scripted:{path}")


def finished_run(workspace, user, tmp_path, task=TASK, **kwargs) -> Run:
    """A run started by `user` in the chat's way (a message in a conversation), run to its end."""
    run, _ = start_run(workspace, task, user=user, topology=scripted(tmp_path, f"s{abs(hash(task))}.json"),
                       **kwargs)
    assert claim_run(run.pk, "runner")
    assert asyncio.run(execute_run(run.pk, "runner")) == Run.COMPLETED
    return Run.objects.get(pk=run.pk)


@pytest.fixture
def members(acme, alice, bob):
    for user in (alice, bob):
        Membership.objects.create(user=user, workspace=acme, role=Membership.MEMBER)
    return acme


@pytest.fixture
def run(members, alice, tmp_path):
    return finished_run(members, alice, tmp_path)


def run_line(out: str, run: Run) -> str:
    return next((line for line in out.splitlines() if line.startswith(f"run {run.pk}:")), "")


def assert_caught(run: Run, *words: str) -> None:
    code, out = verify()
    assert code == 1, out
    line = run_line(out, run)
    for word in words:
        assert word in line, out


def test_a_run_started_in_the_chat_verifies_clean_and_opens_with_who_asked_what(run, alice):
    first = run.events.order_by("seq").first()
    assert first.type == ev.RUN_REQUESTED
    assert first.data["task"] == TASK and first.data["message_text"] == TASK
    assert first.data["requested_by"] == {"id": alice.pk, "username": "alice"}
    assert first.data["conversation"] == run.conversation_id and first.data["message"] == run.message_id
    assert first.data["topology"] == public_topology(run.topology)  # scrubbed of the server's paths, as every event
    code, out = verify()
    assert code == 0, out
    assert "not checked" not in out


@pytest.mark.parametrize("column, value, words", [
    ("task", "Draft a note that says something else", "task"),
    ("topology", json.dumps({"planner": {"provider": "openrouter", "model": "other/model"}}), "models"),
    ("offline", True, "offline"),
    ("research", True, "web research"),
    ("created_by_name", "mallory", "who started the run"),
])
def test_a_changed_run_column_is_caught(run, column, value, words):
    sql(f"UPDATE runs_run SET {column} = %s WHERE id = %s", [value, run.pk])
    assert_caught(run, words, "does not match event 1")


def test_a_run_given_to_another_member_is_caught(run, bob):
    sql("UPDATE runs_run SET created_by_id = %s WHERE id = %s", [bob.pk, run.pk])
    assert_caught(run, "who started the run", "does not match event 1")


def test_a_run_moved_to_another_conversation_or_message_is_caught(run, members, alice, tmp_path):
    other = finished_run(members, alice, tmp_path, task="Another task")
    sql("UPDATE runs_run SET conversation_id = %s WHERE id = %s", [other.conversation_id, run.pk])
    assert_caught(run, "conversation", "does not match event 1")


def test_a_changed_message_text_is_caught(run):
    sql("UPDATE workspaces_message SET text = %s WHERE id = %s", ["Ignore the brief.", run.message_id])
    assert_caught(run, "message", "does not match event 1")


def test_a_changed_retry_link_is_caught(members, alice, tmp_path):
    first = finished_run(members, alice, tmp_path)
    sql("UPDATE runs_run SET status = 'failed' WHERE id = %s", [first.pk])  # only to be allowed to retry
    retry, _ = run_again(Run.objects.get(pk=first.pk), user=alice)
    sql("UPDATE runs_run SET status = 'completed' WHERE id = %s", [first.pk])
    claim_run(retry.pk, "runner")
    asyncio.run(execute_run(retry.pk, "runner"))
    assert Run.objects.get(pk=retry.pk).events.order_by("seq").first().data["retry_of"] == first.pk
    assert verify()[0] == 0
    other = finished_run(members, alice, tmp_path, task="Unrelated")
    sql("UPDATE runs_run SET retry_of_id = %s WHERE id = %s", [other.pk, retry.pk])
    assert_caught(retry, "the run it retries", "does not match event 1")


def test_the_stopper_is_on_the_record_and_a_changed_one_is_caught(members, alice, bob):
    queued, _ = start_run(members, "stopped while queued", user=alice, topology=parse_shorthand("offline"))
    assert request_stop(queued.pk, bob)
    running, _ = start_run(members, "stopped while running", user=alice, topology=parse_shorthand("offline"))
    claim_run(running.pk, "runner")
    recorder = EventRecorder(Run.objects.get(pk=running.pk), owner="runner")
    recorder.record(Event(ev.RunStarted(topology={}, offline=True)))
    assert request_stop(running.pk, bob)
    recorder.record(Event(ev.RunCancelled(reason="stopped by bob")))
    for stopped in (queued, running):
        final = Run.objects.get(pk=stopped.pk).events.order_by("-seq").first()
        assert final.type == ev.RUN_CANCELLED
        assert final.data["stopped_by"] == {"id": bob.pk, "username": "bob"}
        assert Run.objects.get(pk=stopped.pk).stopped_by_id == bob.pk
    assert verify()[0] == 0, verify()[1]

    sql("UPDATE runs_run SET stopped_by_id = %s WHERE id = %s", [alice.pk, running.pk])
    assert_caught(running, "who stopped the run", f"does not match event {final.seq}")


def test_a_stopper_added_to_a_run_nobody_stopped_is_caught(run, bob):
    sql("UPDATE runs_run SET stopped_by_id = %s WHERE id = %s", [bob.pk, run.pk])
    assert_caught(run, "who stopped it")


def test_a_deleted_context_part_is_reported_missing(run):
    record = ModelCall.objects.filter(run=run, context__isnull=False).order_by("id").first().context
    blob = record.parts[0]["blob"]
    sql("DELETE FROM workspaces_blob WHERE sha256 = %s", [blob])
    code, out = verify()
    assert code == 1 and f"the context part {blob[:12]} is missing" in out, out


def research_run(workspace, user, text: str) -> Run:
    run, _ = start_run(workspace, "Compare vendors", user=user, topology=parse_shorthand("offline"))
    claim_run(run.pk, "runner")
    recorder = EventRecorder(Run.objects.get(pk=run.pk), owner="runner")
    sha = text_sha256(text)
    page = {"id": "E1", "url": "https://vendor.example/prices", "status": "ok", "sha256": sha, "title": "Prices"}
    recorder.record(Event(ev.PageFetched(**page)))
    recorder.record(Event(ev.EvidenceCollected(items=[page]), texts={sha: text}))
    recorder.record(Event(ev.RunCompleted()))
    return run


@pytest.mark.parametrize("change", ["replaced", "deleted"])
def test_a_research_page_text_replaced_or_deleted_is_caught(members, alice, change):
    run = research_run(members, alice, "Plan A costs $10 a month.")
    assert verify()[0] == 0
    sha = text_sha256("Plan A costs $10 a month.")
    if change == "replaced":
        sql("UPDATE workspaces_blob SET data = %s WHERE sha256 = %s", [b"Plan A costs $1 a month.", sha])
        assert_caught(run, "the text of evidence E1 no longer matches its sha256")
    else:
        sql("DELETE FROM workspaces_blob WHERE sha256 = %s", [sha])
        assert_caught(run, "the text of evidence E1 is missing")


def test_a_workspace_file_whose_original_was_replaced_is_caught(members, alice):
    document, _ = add_document(members, "policy.txt", b"Backups are kept for 30 days.", user=alice)
    assert verify()[0] == 0
    Path(originals.path(document.sha256)).write_bytes(b"Backups are kept for 3 days.")  # on the server's disk
    code, out = verify()
    assert code == 1 and "acme files: the original of policy.txt no longer matches its sha256" in out, out


def test_a_workspace_file_pointed_at_other_bytes_is_caught(members, alice):
    document, _ = add_document(members, "policy.txt", b"Backups are kept for 30 days.", user=alice)
    digest = originals.store_bytes(b"Backups are never kept.").sha256
    sql("UPDATE workspaces_document SET sha256 = %s WHERE id = %s", [digest, document.pk])
    code, out = verify()
    assert code == 1, out
    assert "acme files: policy.txt is not the file the change log recorded" in out, out


def test_a_missing_workspace_file_original_is_caught(members, alice):
    document, _ = add_document(members, "policy.txt", b"Backups are kept for 30 days.", user=alice)
    os.remove(originals.path(document.sha256))
    code, out = verify()
    assert code == 1 and "acme files: the original of policy.txt is missing" in out, out


# -- the periodic checks -----------------------------------------------------------------------------

def insert_check(workspace, ok: bool, at) -> None:
    """A row put in by hand: what a forger can write without the server's secret."""
    columns = {"workspace_id": workspace.pk, "at": at, "ok": ok, "problems": "[]", "mac": "0" * 64}
    columns = {name: value for name, value in columns.items()
               if name in {field.column for field in ChainCheck._meta.fields}}
    sql(f"INSERT INTO runs_chaincheck ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))})",
        list(columns.values()))


def test_an_inserted_passing_check_does_not_hide_a_failure(run, members, settings, client, alice):
    Membership.objects.filter(user=alice).update(role=Membership.ADMIN)
    sql("UPDATE runs_run SET task = %s WHERE id = %s", ["Rewritten", run.pk])
    chain.check_all()
    assert chain.failed_check(members) is not None
    insert_check(members, True, timezone.now() + timedelta(seconds=1))
    failed = chain.failed_check(members)
    assert failed is not None and not failed.ok
    client.force_login(alice)
    assert 'id="chain-alert"' in client.get("/w/acme/").content.decode()
    code, out = verify()
    assert code == 1 and "acme checks: check 2" in out and "was not written by Beyond" in out, out


def test_an_inserted_check_dated_in_the_future_does_not_stop_the_checks(run, members, settings):
    settings.BEYOND_CHAIN_CHECK_EVERY_S = 3600
    assert chain.check_if_due() is True
    insert_check(members, True, timezone.now() + timedelta(days=365))
    settings.BEYOND_CHAIN_CHECK_EVERY_S = 3600
    assert chain.check_if_due() is True  # the forged row is not a check


def test_a_deleted_check_breaks_the_checks_chain(run, members):
    for _ in range(3):
        chain.check_all()
    assert verify()[0] == 0
    middle = ChainCheck.objects.filter(workspace=members).order_by("id")[1]
    sql("DELETE FROM runs_chaincheck WHERE id = %s", [middle.pk])
    code, out = verify()
    # The check after the one removed no longer links up (checks are counted as they now stand).
    assert code == 1 and "acme checks: check 2" in out and "was not written by Beyond" in out, out


# -- authorship outlives accounts ------------------------------------------------------------------

def test_an_account_with_runs_cannot_be_deleted(run, alice):
    with pytest.raises(ProtectedError):
        alice.delete()
    assert Run.objects.get(pk=run.pk).created_by_id == alice.pk


def test_the_admin_site_refuses_to_delete_an_account_with_runs(run, alice, django_user_model, client):
    root = django_user_model.objects.create_superuser("root", password="x" * 12)
    client.force_login(root)
    response = client.post(f"/admin/auth/user/{alice.pk}/delete/", {"post": "yes"})
    assert django_user_model.objects.filter(pk=alice.pk).exists()
    assert "cannot delete user" in response.content.decode().lower()


def test_a_renamed_account_does_not_re_attribute_past_runs(run, alice, carol, client):
    Membership.objects.create(user=carol, workspace=run.workspace, role=Membership.AUDITOR)
    alice.username = "alice-renamed"
    alice.save()
    assert verify()[0] == 0
    client.force_login(carol)
    body = client.get(f"/w/acme/audit/runs/{run.pk}/").content.decode()
    assert "alice" in body and "now alice-renamed" in body
    listing = client.get("/w/acme/audit/").content.decode()
    assert "now alice-renamed" in listing


# -- runs recorded before who and what were chained --------------------------------------------------

def as_recorded_before_the_change(run: Run) -> None:
    """An older record: no run_requested event; the chain and ledger as the application wrote them."""
    sql("DELETE FROM runs_runevent WHERE run_id = %s AND seq = 1", [run.pk])
    prev = GENESIS
    for e in run.events.order_by("seq"):
        prev = chain.event_hash(prev, run.pk, e.seq - 1, e.type, e.data, e.at)
        sql("UPDATE runs_runevent SET seq = %s, hash = %s WHERE id = %s", [e.seq - 1, prev, e.pk])
    final_hash, prev = prev, GENESIS
    for row in WorkspaceLedger.objects.filter(workspace=run.workspace).order_by("seq"):
        run_hash = final_hash if row.run_id == run.pk else row.run_hash
        prev = chain.ledger_hash(prev, row.workspace_id, row.seq, row.run_id, run_hash, row.at)
        sql("UPDATE runs_workspaceledger SET run_hash = %s, hash = %s WHERE id = %s", [run_hash, prev, row.pk])


def test_an_older_run_still_verifies_and_the_summary_says_what_was_not_checked(run):
    as_recorded_before_the_change(run)
    code, out = verify()
    assert code == 0, out
    summary = out.strip().splitlines()[-1]
    assert summary.startswith("record intact")
    assert f"1 run recorded before its request was chained (run {run.pk})" in summary
    assert "task, who started it, conversation and message not checked" in summary


def test_an_older_runs_models_are_still_checked_against_its_start(run):
    as_recorded_before_the_change(run)
    sql("UPDATE runs_run SET topology = %s WHERE id = %s",
        [json.dumps({"planner": {"provider": "openrouter", "model": "other/model"}}), run.pk])
    assert_caught(run, "models", "does not match event 1")


def test_the_author_of_a_message_is_kept_too(run, bob):
    assert Message.objects.get(pk=run.message_id).author_id == run.created_by_id
    Message.objects.create(conversation=Conversation.objects.get(pk=run.conversation_id), text="A note.", author=bob)
    with pytest.raises(ProtectedError):
        bob.delete()


def test_checks_signed_before_a_key_change_still_hold_with_the_old_key_as_a_fallback(run, members, settings):
    chain.check_all()
    old = settings.SECRET_KEY
    settings.SECRET_KEY = "another key for this server, long enough to be a real one"
    code, out = verify()
    assert code == 1 and "acme checks: check 1" in out, out
    settings.SECRET_KEY_FALLBACKS = [old]
    assert verify()[0] == 0
    assert chain.failed_check(members) is None
