"""Prepared queries (lib/prepared.py): the ORM's SQL, compiled once, giving what the ORM gives.

Each test compares with the ORM's own answer for the same question, so a difference in SQL,
bound values or conversions shows; tests/site/test_prepared_postgres.py runs them on PostgreSQL.
"""
from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Exists, OuterRef
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from beyond_site.lib.prepared import Param, Prepared, PreparedUpdate, insert_rows
from beyond_site.runs.models import Run, RunEvent, Step
from beyond_site.workspaces.models import Membership, Workspace

pytestmark = pytest.mark.django_db


@pytest.fixture
def runs():
    acme = Workspace.objects.create(slug="acme", name="Acme")
    other = Workspace.objects.create(slug="other", name="Other")
    alice = get_user_model().objects.create_user("alice")
    Membership.objects.create(user=alice, workspace=acme, role="member")
    mine = Run.objects.create(workspace=acme, task="Mine", topology={"planner": {"provider": "offline"}},
                              research=True, warnings=["w"])
    theirs = Run.objects.create(workspace=other, task="Theirs", topology={})
    at = timezone.now().replace(microsecond=123456)
    for seq in (1, 2, 3):
        RunEvent.objects.create(run=mine, seq=seq, type="step_released", data={"step": seq, "nested": [1, {"x": None}]},
                                at=at + dt.timedelta(seconds=seq), hash=f"h{seq}")
    return alice, mine, theirs, at


READABLE = Prepared(lambda: Run.objects.filter(pk=Param("run_id"), workspace__memberships__user_id=Param("user_id"))
                    .values_list("id", "status", "research", "warnings", "created_at")[:1])


def test_a_values_query_reads_what_the_orm_reads_converted_the_same(runs):
    alice, mine, theirs, _ = runs
    orm = Run.objects.filter(pk=mine.pk, workspace__memberships__user=alice).values_list(
        "id", "status", "research", "warnings", "created_at")[:1]
    assert READABLE.first(run_id=mine.pk, user_id=alice.pk) == tuple(orm[0])
    assert READABLE.first(run_id=mine.pk, user_id=alice.pk)[2] is True  # a bool, not SQLite's 1
    assert READABLE.first(run_id=theirs.pk, user_id=alice.pk) is None  # not a member there


def test_it_compiles_once_and_sends_one_query_a_call(runs):
    alice, mine, _, _ = runs
    built = []
    query = Prepared(lambda: built.append(1) or Run.objects.filter(pk=Param("pk")).values_list("task"))
    with CaptureQueriesContext(connection) as queries:
        assert [query.first(pk=mine.pk) for _ in range(3)] == [("Mine",)] * 3
    assert len(built) == 1 and len(queries) == 3


def test_values_must_match_the_params(runs):
    alice, mine, _, _ = runs
    with pytest.raises(TypeError, match=r"takes \['run_id', 'user_id'\]"):
        READABLE.first(run_id=mine.pk)
    with pytest.raises(TypeError):
        READABLE.first(run_id=mine.pk, user_id=alice.pk, extra=1)


EVENTS_AFTER = Prepared(lambda: RunEvent.objects.filter(run_id=Param("run_id"), seq__gt=Param("after"))
                        .order_by("seq").only("seq", "type", "data"))


def test_model_rows_come_back_as_instances_with_the_rest_deferred(runs):
    _, mine, _, _ = runs
    got = EVENTS_AFTER.instances(run_id=mine.pk, after=1)
    want = list(RunEvent.objects.filter(run_id=mine.pk, seq__gt=1).order_by("seq").only("seq", "type", "data"))
    assert [(e.pk, e.seq, e.type, e.data) for e in got] == [(e.pk, e.seq, e.type, e.data) for e in want]
    assert got[0].data == {"step": 2, "nested": [1, {"x": None}]}
    assert got[0].get_deferred_fields() == want[0].get_deferred_fields()
    assert got[0].at == want[0].at  # a deferred column still loads on access


def test_instances_need_model_rows(runs):
    with pytest.raises(TypeError, match="model rows"):
        READABLE.instances(run_id=1, user_id=1)


def test_related_rows_and_annotations_come_back_as_the_queryset_gives_them(runs):
    alice, mine, theirs, _ = runs
    retry = Run.objects.create(workspace=mine.workspace, task="Again", topology={}, retry_of=mine)

    def build(pk):
        return (Run.objects.select_related("workspace", "retry_of")
                .annotate(retried=Exists(Run.objects.filter(retry_of=OuterRef("pk")))).filter(pk=pk))

    prepared = Prepared(lambda: build(Param("pk")))
    for run in (mine, theirs, retry):
        [got], [want] = prepared.instances(pk=run.pk), list(build(run.pk))
        with CaptureQueriesContext(connection) as queries:
            assert (got.workspace.slug, got.workspace.enabled_frameworks, got.retried) == (
                want.workspace.slug, want.workspace.enabled_frameworks, want.retried)
            assert (got.retry_of.pk if got.retry_of else None) == (want.retry_of.pk if want.retry_of else None)
            assert {f.attname: getattr(got, f.attname) for f in Run._meta.concrete_fields} == {
                f.attname: getattr(want, f.attname) for f in Run._meta.concrete_fields}
        assert len(queries) == 0  # the related rows came with the row
    assert [r.retried for r in (prepared.instances(pk=mine.pk)[0], prepared.instances(pk=retry.pk)[0])] == [True, False]


FINISH = PreparedUpdate(lambda: Run.objects.filter(pk=Param("run_id"), status=Run.QUEUED),
                        status=Param("status"), finished_at=Param("at"), warnings=Param("warnings"), halt_reason=None)


def test_an_update_prepares_its_values_by_their_fields_and_counts_rows(runs):
    _, mine, theirs, at = runs
    Run.objects.filter(pk=mine.pk).update(halt_reason="something")
    assert FINISH(run_id=mine.pk, status=Run.FAILED, at=at, warnings=["a", {"b": [1, None]}]) == 1
    mine.refresh_from_db()
    assert (mine.status, mine.finished_at, mine.warnings, mine.halt_reason) == (
        Run.FAILED, at, ["a", {"b": [1, None]}], None)
    assert FINISH(run_id=mine.pk, status=Run.FAILED, at=at, warnings=[]) == 0  # no longer queued
    assert Run.objects.get(pk=theirs.pk).status == Run.QUEUED


def test_insert_rows_fills_defaults_and_returns_the_ids_in_order(runs):
    _, mine, _, at = runs
    rows = [{"run_id": mine.pk, "index": i, "title": f"Part {i}", "content_spec": "x" * i} for i in (1, 2, 3)]
    with CaptureQueriesContext(connection) as queries:
        ids = insert_rows(Step, rows, returning=True)
    assert len(queries) == 1
    got = {s.pk: s for s in Step.objects.filter(run=mine)}
    assert [got[pk].index for pk in ids] == [1, 2, 3]
    assert (got[ids[0]].status, got[ids[0]].warnings, got[ids[0]].badge) == (Step.PENDING, [], None)
    created = insert_rows(RunEvent, [{"run_id": mine.pk, "seq": 9, "type": "t", "data": {"k": [1.5, "é"]}, "at": at,
                                      "hash": "h"}])
    assert created == []  # not asked for
    assert RunEvent.objects.get(run=mine, seq=9).data == {"k": [1.5, "é"]}
    assert RunEvent.objects.get(run=mine, seq=9).at == at


def test_insert_rows_sets_auto_now_fields():
    before = timezone.now()
    [pk] = insert_rows(Workspace, [{"slug": "new", "name": "New"}], returning=True)
    made = Workspace.objects.get(pk=pk)
    assert made.created_at >= before and made.enabled_frameworks == Workspace().enabled_frameworks


@pytest.mark.django_db(transaction=True)
def test_a_locking_read_compiles_inside_its_transaction():
    acme = Workspace.objects.create(slug="acme", name="Acme")
    run = Run.objects.create(workspace=acme, task="T", topology={})
    locked = Prepared(lambda: Run.objects.select_for_update().filter(pk=Param("pk")).values_list("status"))
    with transaction.atomic():
        assert locked.first(pk=run.pk) == (Run.QUEUED,)
        assert ("FOR UPDATE" in locked.compiled("default").sql) == connection.features.has_select_for_update


def test_insert_rows_stores_values_exactly_as_the_orm_stores_them(runs):
    """Compared column by column as the database holds them (not as Django reads them back): a
    date, a JSON document, a boolean and a null written by insert_rows and by bulk_create."""
    _, mine, _, at = runs
    row = {"run_id": mine.pk, "type": "t", "data": {"b": [1, 2.5, None], "a": "é"}, "at": at, "hash": "h"}
    insert_rows(RunEvent, [{**row, "seq": 20}])
    RunEvent.objects.bulk_create([RunEvent(**row, seq=21)])
    with connection.cursor() as cursor:
        cursor.execute('SELECT "data", "at", "hash" FROM "runs_runevent" WHERE "seq" IN (20, 21) ORDER BY "seq"')
        ours, django = cursor.fetchall()
    assert ours == django
    steps = [{"run_id": mine.pk, "index": 7, "title": "T", "content_spec": "S", "badge": None, "released_at": at}]
    insert_rows(Step, steps)
    Step.objects.bulk_create([Step(**{**steps[0], "index": 8})])
    with connection.cursor() as cursor:
        cursor.execute('SELECT "status", "badge", "warnings", "released_at" FROM "runs_step" WHERE "index" IN (7, 8) '
                       'ORDER BY "index"')
        ours, django = cursor.fetchall()
    assert ours == django


def test_a_none_in_a_filter_is_refused_rather_than_matching_nothing(runs):
    by_key = Prepared(lambda: Run.objects.filter(idempotency_key=Param("key")).values_list("pk"))
    with pytest.raises(TypeError, match="None"):
        by_key.rows(key=None)


@pytest.mark.django_db(transaction=True)
def test_a_locking_read_outside_a_transaction_is_refused_as_the_orm_refuses_it():
    acme = Workspace.objects.create(slug="acme", name="Acme")
    run = Run.objects.create(workspace=acme, task="T", topology={})
    locked = Prepared(lambda: Run.objects.select_for_update().filter(pk=Param("pk")).values_list("status"))
    with transaction.atomic():
        locked.first(pk=run.pk)  # compiled inside one
    if connection.features.has_select_for_update:  # PostgreSQL; SQLite locks the whole database anyway
        with pytest.raises(transaction.TransactionManagementError):
            locked.first(pk=run.pk)
    else:
        assert locked.first(pk=run.pk) == (Run.QUEUED,)


def test_insert_rows_refuses_a_key_that_names_no_column_and_rows_that_differ(runs):
    _, mine, _, at = runs
    row = {"run_id": mine.pk, "index": 1, "title": "T", "content_spec": "S"}
    with pytest.raises(TypeError, match="contnet"):
        insert_rows(Step, [{**row, "contnet": "x"}])
    with pytest.raises(TypeError):
        insert_rows(Step, [row, {**row, "index": 2, "badge": "passed"}])
    assert not Step.objects.filter(run=mine).exists()


def test_insert_rows_sets_auto_now_fields_whatever_the_row_says_as_bulk_create_does():
    acme = Workspace.objects.create(slug="acme", name="Acme")
    long_ago = timezone.now() - dt.timedelta(days=400)
    [pk] = insert_rows(Workspace, [{"slug": "old", "name": "Old", "created_at": long_ago}], returning=True)
    assert Workspace.objects.get(pk=pk).created_at > long_ago + dt.timedelta(days=399) and acme.pk != pk


def test_without_returning_rows_the_keys_come_one_insert_at_a_time(runs, monkeypatch):
    """SQLite before 3.35 has no RETURNING (PostgreSQL always has it, and is left as it is)."""
    _, mine, _, _ = runs
    if connection.vendor == "postgresql":
        assert connection.features.can_return_rows_from_bulk_insert
    else:
        monkeypatch.setattr(type(connection.features), "can_return_rows_from_bulk_insert", False)
    rows = [{"run_id": mine.pk, "index": i, "title": f"P{i}", "content_spec": "S"} for i in (1, 2, 3)]
    ids = insert_rows(Step, rows, returning=True)
    assert [Step.objects.get(pk=pk).index for pk in ids] == [1, 2, 3]


def test_a_run_start_reads_through_its_prepared_queries_what_the_querysets_read(runs):
    """runs/recorder.py's prepared forms of the start's reads (`START_READS`, `run_to_start`,
    `files_still_reading`) against the querysets of runs/context.py and workspaces/reading.py."""
    from beyond_site.runs import context, recorder
    from beyond_site.workspaces.models import Conversation, Document, Memory, Message, WorkspaceBudget
    from beyond_site.workspaces.reading import still_reading

    alice, mine, theirs, _ = runs
    acme = mine.workspace
    chat = Conversation.objects.create(workspace=acme, title="Chat", created_by=alice)
    other = Conversation.objects.create(workspace=acme, title="Other", created_by=alice)
    for text in ("first", "second"):
        Memory.objects.create(workspace=acme, text=f"memory {text}")
        Message.objects.create(conversation=chat, text=text, author=alice)
    until = Message.objects.filter(conversation=chat).order_by("id")[0].created_at
    file = {"kind": "text", "mime": "text/plain", "size": 1, "text": "x"}
    for n, (scope, status) in enumerate([(None, Document.READY), (chat, Document.READY), (other, Document.READY),
                                         (None, Document.READING), (chat, Document.READING), (other, Document.READING)]):
        Document.objects.create(workspace=acme, conversation=scope, name=f"f{n}.txt", sha256=f"s{n}", status=status, **file)
    WorkspaceBudget.objects.create(workspace=acme, max_tokens_per_run=1000)

    reads, querysets = recorder.START_READS, context.Reads()
    assert reads.memories(acme.pk) == list(querysets.memories(acme.pk)) and len(reads.memories(acme.pk)) == 2
    for moment in (until, timezone.now()):
        assert reads.messages(chat.pk, moment) == list(querysets.messages(chat.pk, moment))
    assert len(reads.messages(chat.pk, until)) == 1
    assert sorted(reads.documents(acme.pk, chat.pk)) == sorted(querysets.documents(acme.pk, chat.pk))
    assert sorted(name for _, name, _, _ in reads.documents(acme.pk, chat.pk)) == ["f0.txt", "f1.txt"]
    for conversation in (chat.pk, None):
        assert recorder.files_still_reading(acme.pk, conversation) == still_reading(acme.pk, conversation)
    assert recorder.files_still_reading(acme.pk, chat.pk) == ["f3.txt", "f4.txt"]

    for run in (mine, theirs):
        got, want = recorder.run_to_start(run.pk), Run.objects.select_related("workspace__budget").get(pk=run.pk)
        with CaptureQueriesContext(connection) as queries:
            assert (got.workspace.slug, getattr(got.workspace, "budget", None)) == (
                want.workspace.slug, getattr(want.workspace, "budget", None))
        assert len(queries) == 0  # the workspace and its budget (or none) came with the row
    assert recorder.run_to_start(theirs.pk + 1000) is None


def test_the_recorders_once_a_run_reads_give_what_the_querysets_give(runs):
    """runs/recorder.py's prepared forms of the chain's head, the requested message's text and the
    ledger's lock and head, against the querysets of runs/chain.py and runs/provenance.py."""
    from beyond_site.runs import chain, provenance, recorder
    from beyond_site.runs.models import WorkspaceLedger
    from beyond_site.workspaces.models import Conversation, Message

    alice, mine, theirs, at = runs
    for run in (mine, theirs):
        assert chain.run_head(run.pk, recorder._run_head) == chain.run_head(run.pk)
    assert chain.run_head(mine.pk, recorder._run_head) == (3, "h3")
    message = Message.objects.create(conversation=Conversation.objects.create(workspace=mine.workspace, title="C"),
                                     text="Asked", author=alice)
    for pk in (message.pk, message.pk + 1000):
        assert recorder._message_text(pk) == provenance.message_text(pk)
    WorkspaceLedger.objects.create(workspace=mine.workspace, seq=1, run=mine, run_hash="r", at=at, hash="l1")
    with transaction.atomic():
        for workspace_id in (mine.workspace_id, theirs.workspace_id):
            reads = recorder.LEDGER_READS
            assert reads.lock(workspace_id) == list(chain.ledger_lock_query(workspace_id))
            assert reads.head(workspace_id) == list(chain.ledger_head_query(workspace_id))


def test_an_in_list_reads_what_the_orm_reads_whatever_its_length(runs):
    from beyond_site.lib.prepared import PreparedIn
    from beyond_site.runs import contexts, recorder
    from beyond_site.runs.models import ContextRecord

    for n in range(3):
        ContextRecord.objects.create(sha256=f"{n}" * 64, parts=[])
    shas = [f"{n}" * 64 for n in range(4)]  # the last names no record
    ids = PreparedIn(lambda params: RunEvent.objects.filter(seq__in=params).order_by("seq").values_list("seq", "hash"))
    for count in range(5):
        assert sorted(recorder._CONTEXT_RECORDS.rows(shas[:count])) == sorted(contexts.records_query(shas[:count]))
        assert ids.rows([1, 3, 9][:count]) == list(RunEvent.objects.filter(seq__in=[1, 3, 9][:count])
                                                    .order_by("seq").values_list("seq", "hash"))
    assert len(recorder._CONTEXT_RECORDS.rows(shas)) == 3
