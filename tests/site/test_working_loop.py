"""The working loop around a run: follow-ups that see the earlier document, Run again, conversations
that can be renamed, deleted and searched, honest failure texts, and long input refused, not cut."""
from __future__ import annotations

import asyncio
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from beyond_site.runs.context import assemble_context
from beyond_site.runs.contexts import context_messages
from beyond_site.runs.models import ModelCall, Run
from beyond_site.runs.queue import claim_run, start_run
from beyond_site.runs.runner import execute_run
from beyond_site.runs.wording import outcome_text
from beyond_site.workspaces.models import Conversation, Membership, Message
from pipeline.topology import parse_shorthand
from tests import scripting
from tests.scripting import PASS
from tests.site.chat_support import client_for

pytestmark = pytest.mark.django_db(transaction=True)

FIRST = "The scope covers FIRST-RELEASE-MARKER: every laptop and server."


@pytest.fixture
def members(acme, alice, bob, carol, dave):
    for user, role in ((alice, "member"), (bob, "member"), (carol, "admin"), (dave, "auditor")):
        Membership.objects.create(user=user, workspace=acme, role=role)
    return acme


def scripted(tmp_path, steps: dict, name: str, **kwargs):
    return parse_shorthand("scripted:" + str(scripting.write(tmp_path, scripting.script(steps, **kwargs), name=name)))


def finish(run: Run) -> str:
    assert claim_run(run.pk, "test-runner")
    return asyncio.run(execute_run(run.pk, "test-runner"))


def first_document(acme, alice, tmp_path) -> Run:
    run, _ = start_run(acme, "Draft our asset register overview", user=alice, topology=scripted(
        tmp_path, {1: {"executor": [FIRST], "verifier": [PASS]}}, "first.json", summarizer=["RECAP-MARKER of run one."]))
    assert finish(run) == Run.COMPLETED
    return run


def contexts_of(run: Run, role: str) -> list[str]:
    return ["\n".join(m["content"] for m in context_messages(c.context))
            for c in ModelCall.objects.filter(run=run, role=role).select_related("context")]


def test_a_follow_up_sees_the_released_document_and_the_verifier_does_not(members, alice, tmp_path):
    first = first_document(members, alice, tmp_path)
    second, _ = start_run(members, "Add a section on remote work", user=alice, conversation=first.conversation,
                          topology=scripted(tmp_path, {1: {"executor": ["Remote work is allowed."], "verifier": [PASS]}},
                                            "second.json"))
    assert finish(second) == Run.COMPLETED
    for role in ("planner", "executor"):
        for text in contexts_of(second, role):
            assert "Draft our asset register overview" in text  # the member's earlier message
            assert FIRST in text and "RECAP-MARKER" in text and "[badge: passed]" in text
    assert contexts_of(second, "verifier")
    for text in contexts_of(second, "verifier"):
        assert "FIRST-RELEASE-MARKER" not in text and "RECAP-MARKER" not in text


def test_the_latest_document_is_kept_when_the_conversation_overflows(members, alice, tmp_path):
    first = first_document(members, alice, tmp_path)
    for n in range(12):
        Message.objects.create(conversation=first.conversation, text=f"NOTE-{n} " + "word " * 300, author=alice)
    follow_up, _ = start_run(members, "Shorten it", user=alice, conversation=first.conversation,
                             topology=parse_shorthand("offline"))
    ctx = assemble_context(follow_up, budget=1500)
    kept = "\n".join(m.text for m in ctx.history)
    assert FIRST in kept and "NOTE-0 " not in kept
    assert any("left out" in n and "latest document is always kept" in n for n in ctx.notes)


def test_beyond_run_follow_up_joins_the_conversation_and_sees_the_document(members, alice, tmp_path):
    first = first_document(members, alice, tmp_path)
    path = scripting.write(tmp_path, scripting.script({1: {"executor": ["Revised."], "verifier": [PASS]}}), name="f.json")
    out = io.StringIO()
    call_command("beyond_run", "--workspace", "acme", "--task", "Add a section on remote work", "--follow-up",
                 str(first.pk), "--provider", f"scripted:{path}", "--json", stdout=out)
    trace = json.loads(out.getvalue())
    assert trace["run"]["conversation"] == first.conversation_id
    second = Run.objects.get(pk=trace["run"]["id"])
    assert all(FIRST in text for text in contexts_of(second, "planner") + contexts_of(second, "executor"))
    assert all("FIRST-RELEASE-MARKER" not in text for text in contexts_of(second, "verifier"))


def test_beyond_run_refuses_an_unknown_or_deleted_follow_up(members, alice, tmp_path):
    with pytest.raises(CommandError, match="no run 999"):
        call_command("beyond_run", "--workspace", "acme", "--task", "x", "--follow-up", "999", "--provider", "offline")
    first = first_document(members, alice, tmp_path)
    Conversation.objects.filter(pk=first.conversation_id).update(deleted_at="2026-01-01T00:00:00Z")
    with pytest.raises(CommandError, match="deleted"):
        call_command("beyond_run", "--workspace", "acme", "--task", "x", "--follow-up", str(first.pk),
                     "--provider", "offline")


def test_every_run_of_beyond_run_belongs_to_a_conversation(members, tmp_path):
    out = io.StringIO()
    call_command("beyond_run", "--workspace", "acme", "--task", "Draft a note", "--provider", "offline", "--json",
                 stdout=out)
    trace = json.loads(out.getvalue())
    # Named after its document once the brief gives it a title (before that, after the task).
    assert Conversation.objects.filter(pk=trace["run"]["conversation"], title=trace["brief"]["title"]).exists()


def failed_run(acme, alice, tmp_path) -> Run:
    run, _ = start_run(acme, "Draft a note", user=alice, topology=scripted(
        tmp_path, {1: {"executor": ["One."], "verifier": [PASS]}}, "bad.json", planner=["not a brief", "still not"]))
    assert finish(run) == Run.FAILED
    return run


def test_run_again_starts_the_same_task_in_the_same_conversation_linked_to_the_old_run(members, alice, tmp_path):
    old = failed_run(members, alice, tmp_path)
    response = client_for(alice).post(reverse("chat:run_again", args=["acme", old.pk]), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    new = Run.objects.get(retry_of=old)
    assert new.task == old.task and new.conversation_id == old.conversation_id and new.pk != old.pk
    assert f'id="run-{new.pk}"' in response.content.decode() and "Run again of an earlier run" in response.content.decode()
    assert Run.objects.get(pk=old.pk).status == Run.FAILED  # the old run stays on record as it was
    assert client_for(dave_of(members)).post(reverse("chat:run_again", args=["acme", old.pk])).status_code == 403



def test_a_run_is_run_again_once_whoever_clicks_and_however_often(members, alice, bob, carol, tmp_path):
    old = failed_run(members, alice, tmp_path)
    url = reverse("chat:run_again", args=["acme", old.pk])
    first = client_for(alice).post(url, HTTP_HX_REQUEST="true").content.decode()
    assert f'id="run-again-{old.pk}"' in first and 'hx-swap-oob="true">Run again below.' in first
    again = client_for(alice).post(url, HTTP_HX_REQUEST="true")  # a double click
    assert "already run again" in again.content.decode() and again["HX-Reswap"] == "none"
    client_for(carol).post(url, HTTP_HX_REQUEST="true")  # an admin at the same moment
    assert Run.objects.filter(retry_of=old).count() == 1
    page = client_for(alice).get(reverse("chat:conversation", args=["acme", old.conversation_id])).content.decode()
    new = Run.objects.get(retry_of=old)
    assert f'id="run-again-{old.pk}"' not in page and f'id="run-{new.pk}"' in page


def test_a_task_posted_with_run_agains_own_key_is_refused_and_run_again_still_works(members, alice, tmp_path):
    old = failed_run(members, alice, tmp_path)
    posted = client_for(alice).post(reverse("chat:send", args=["acme"]), {
        "message": "Taking the key", "idempotency_key": f"again-{old.pk}"}, HTTP_HX_REQUEST="true")
    assert posted.status_code == 400 and not Run.objects.filter(task="Taking the key").exists()
    client_for(alice).post(reverse("chat:run_again", args=["acme", old.pk]), HTTP_HX_REQUEST="true")
    assert Run.objects.get(retry_of=old).idempotency_key == f"again-{old.pk}"


def test_run_again_is_refused_for_a_run_already_run_again_and_over_a_budget(members, alice, tmp_path):
    from beyond_site.workspaces import configuration

    old = failed_run(members, alice, tmp_path)
    url = reverse("chat:run_again", args=["acme", old.pk])
    configuration.set_budget(members, {"max_runs_per_user_per_day": 1})
    over = client_for(alice).post(url, HTTP_HX_REQUEST="true")
    assert over.status_code == 429 and "Not started" in over.content.decode()
    assert not Run.objects.filter(retry_of=old).exists()
    configuration.set_budget(members, {"max_runs_per_user_per_day": None})
    earlier_retry = failed_run(members, alice, tmp_path)  # run again before the key was the run's own
    Run.objects.filter(pk=earlier_retry.pk).update(retry_of=old, idempotency_key=f"again-{old.pk}-{alice.pk}-0")
    refused = client_for(alice).post(url, HTTP_HX_REQUEST="true")
    assert "already run again" in refused.content.decode() and Run.objects.filter(retry_of=old).count() == 1

def dave_of(workspace):
    return Membership.objects.get(workspace=workspace, role="auditor").user


def test_run_again_is_refused_for_a_completed_run(members, alice, tmp_path):
    done = first_document(members, alice, tmp_path)
    response = client_for(alice).post(reverse("chat:run_again", args=["acme", done.pk]), HTTP_HX_REQUEST="true")
    assert "Only a run that failed, halted or was stopped can be run again." in response.content.decode()
    assert not Run.objects.filter(retry_of=done).exists()


def test_a_failed_run_explains_itself_offers_run_again_and_no_export(members, alice, tmp_path):
    old = failed_run(members, alice, tmp_path)
    page = client_for(alice).get(reverse("chat:conversation", args=["acme", old.conversation_id])).content.decode()
    assert "The planner could not produce a usable plan, so nothing was drafted." in page
    assert "Technical reason" in page and "the planner gave no valid brief" in page
    assert 'data-action="run-again"' in page
    assert "export.md" not in page and "export.docx" not in page  # it released nothing


@pytest.mark.parametrize("status, reason, released, expected", [
    ("failed", "interrupted: the server or worker executing it restarted; unreleased steps were not released", 2,
     "The run stopped because the server running it restarted or stopped. Step 2 and the steps before it were "
     "released and are kept; nothing after was released."),
    ("cancelled", "stopped by alice", 0, "Stopped by alice. Nothing was released."),
    ("halted", "step 2: the verifier gave no parseable verdict", 1, "The run halted"),
    ("halted", "budget: the run used 1,200 of its 1,000 tokens", 0, "reached a budget limit"),
])
def test_failure_texts_are_written_for_people(status, reason, released, expected):
    assert expected in outcome_text(status, reason, released)
    assert "unreleased steps were not released" not in outcome_text(status, reason, released)


def conversation_by(acme, user, title) -> Conversation:
    conversation = Conversation.objects.create(workspace=acme, title=title, created_by=user)
    Message.objects.create(conversation=conversation, text=f"Message in {title}", author=user)
    return conversation


def test_the_starter_and_admins_rename_a_conversation_others_may_not(members, alice, bob, carol):
    conversation = conversation_by(members, alice, "Old title")
    url = reverse("chat:conversation_rename", args=["acme", conversation.pk])
    assert client_for(bob).post(url, {"title": "Hijacked"}).status_code == 403
    response = client_for(alice).post(url, {"title": "  Asset   register  "}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and "Asset register" in response.content.decode()
    # The tab's title follows (htmx takes it from a <title> at the answer's root).
    assert response.content.decode().startswith("<title>Asset register · Acme · Beyond</title>")
    assert Conversation.objects.get(pk=conversation.pk).title == "Asset register"
    assert client_for(carol).post(url, {"title": "By the admin"}).status_code == 302
    refused = client_for(alice).post(url, {"title": "   "}, HTTP_HX_REQUEST="true")
    assert "needs a title" in refused.content.decode()
    assert Conversation.objects.get(pk=conversation.pk).title == "By the admin"
    escaped = client_for(alice).post(url, {"title": "<b>Q3</b> & more"}, HTTP_HX_REQUEST="true").content.decode()
    assert escaped.startswith("<title>&lt;b&gt;Q3&lt;/b&gt; &amp; more · Acme · Beyond</title>")


def test_a_rename_redraws_the_list_as_shown_with_its_search_and_its_page(members, alice):
    conversation = Conversation.objects.create(workspace=members, title="Asset register", created_by=alice)
    conversation_by(members, alice, "Backups")
    url = reverse("chat:conversation_rename", args=["acme", conversation.pk])
    client = client_for(alice)
    html = client.post(url, {"title": "Asset register 2026", "q": "asset", "chats": "1"},
                       HTTP_HX_REQUEST="true").content.decode()
    listed = html.split('id="conversations"')[1]
    assert "Asset register 2026" in listed and "Backups" not in listed
    assert 'name="q" value="asset"' in listed  # the search box keeps the search
    gone = client.post(url, {"title": "Inventory", "q": "asset"}, HTTP_HX_REQUEST="true").content.decode()
    assert "No conversation matches “asset”." in gone.split('id="conversations"')[1]
    later = client.post(url, {"title": "Inventory", "chats": "2"}, HTTP_HX_REQUEST="true").content.decode()
    assert 'rel="prev"' in later and "Backups" not in later.split('id="conversations"')[1]
    plain = client.post(url, {"title": "Inventory 2"}, HTTP_HX_REQUEST="true").content.decode()
    assert "Inventory 2" in plain.split('id="conversations"')[1] and "Backups" in plain


def test_a_deleted_conversation_leaves_the_chat_and_its_runs_stay_on_record(members, alice, bob, tmp_path):
    run = first_document(members, alice, tmp_path)
    conversation = run.conversation
    assert client_for(bob).post(reverse("chat:conversation_delete", args=["acme", conversation.pk])).status_code == 403
    response = client_for(alice).post(reverse("chat:conversation_delete", args=["acme", conversation.pk]),
                                      HTTP_HX_REQUEST="true")
    assert response["HX-Redirect"] == "/w/acme/"
    page = client_for(alice).get("/w/acme/").content.decode()
    assert conversation.title not in page
    assert client_for(alice).get(reverse("chat:conversation", args=["acme", conversation.pk])).status_code == 404
    assert Run.objects.get(pk=run.pk).status == Run.COMPLETED  # still on the audit record
    assert client_for(alice).get(reverse("audit:run", args=["acme", run.pk])).status_code == 200
    send = client_for(alice).post(reverse("chat:send", args=["acme"]), {"message": "More", "conversation": conversation.pk})
    assert send.status_code == 404


def test_search_finds_conversations_by_title_message_and_released_content(members, alice, globex, tmp_path):
    conversation_by(members, alice, "Supplier review")
    conversation_by(members, alice, "Backups")
    run = first_document(members, alice, tmp_path)  # releases FIRST-RELEASE-MARKER
    run.conversation.refresh_from_db()  # named after its document's title once the brief came
    other = Conversation.objects.create(workspace=globex, title="Supplier secrets")
    client = client_for(alice)

    def listed(query):
        html = client.get(reverse("chat:conversations", args=["acme"]), {"q": query}).content.decode()
        return html

    assert "Supplier review" in listed("supplier") and "Backups" not in listed("supplier")
    assert "Supplier secrets" not in listed("supplier") and f'data-conversation="{other.pk}"' not in listed("supplier")
    assert "Backups" in listed("Message in Backups")
    assert run.conversation.title in listed("first-release-marker")
    assert "No conversation matches" in listed("nothing like this")
    # Words, not a phrase: each anywhere in the conversation, punctuation aside, in any order.
    assert run.conversation.title in listed("register asset") and run.conversation.title in listed("ASSET,register")
    assert run.conversation.title in listed("asset first-release")  # one in the task, one in the document
    assert "Supplier review" in listed("review supplier") and "Backups" not in listed("review supplier")
    assert "No conversation matches" in listed("asset nothing")


def test_search_words_keep_scripts_whole_and_cases_as_typed():
    from beyond_site.chat.conversations import search_words

    assert search_words("asset-register ASSET, Register") == ["asset", "register"]
    assert search_words("हिन्दी नीति") == [
        "हिन्दी", "नीति"]  # combining marks stay in their word
    assert search_words("Straße") == ["Straße"]  # not casefolded to "strasse", which the database would miss
    assert search_words("C++") == ["C++"] and search_words("a policy") == ["policy"] and search_words("  ") == []


def test_the_list_shows_dates_and_the_most_recent_first(members, alice):
    older = conversation_by(members, alice, "Older one")
    newer = conversation_by(members, alice, "Newer one")
    Conversation.objects.filter(pk=older.pk).update(updated_at="2026-01-02T10:00:00Z")
    Conversation.objects.filter(pk=newer.pk).update(updated_at="2026-03-04T10:00:00Z")
    page = client_for(alice).get("/w/acme/").content.decode()
    assert page.index("Newer one") < page.index("Older one")
    assert '<time class="conversation-date small muted" datetime="2026-03-04T10:00:00+00:00"' in page
    assert ">4 Mar<" in page and ">2 Jan<" in page


def test_an_over_long_task_is_refused_whole_never_cut(members, alice):
    task = "x" * 25_000
    response = client_for(alice).post(reverse("chat:send", args=["acme"]), {"message": task}, HTTP_HX_REQUEST="true")
    assert response["HX-Reswap"] == "none"
    assert "This task is 25,000 characters long; a task is at most 20,000." in response.content.decode()
    assert not Run.objects.exists() and not Message.objects.exists()
    page = client_for(alice).get("/w/acme/").content.decode()
    assert 'data-max-chars="20000"' in page and "maxlength=\"20000\"" not in page  # the browser never cuts a paste


def test_a_nul_character_is_refused_with_a_message(members, alice):
    response = client_for(alice).post(reverse("chat:send", args=["acme"]), {"message": "Draft\x00 a note"},
                                      HTTP_HX_REQUEST="true")
    assert "NUL characters" in response.content.decode() and not Run.objects.exists()


def test_a_malformed_conversation_id_is_a_400_not_a_500(members, alice):
    response = client_for(alice).post(reverse("chat:send", args=["acme"]), {"message": "x", "conversation": "abc"})
    assert response.status_code == 400


def test_the_first_task_names_a_conversation_started_by_an_upload(members, alice):
    conversation = Conversation.objects.create(workspace=members, title="New conversation", created_by=alice)
    response = client_for(alice).post(reverse("chat:send", args=["acme"]),
                                      {"message": "Draft our backup policy", "conversation": conversation.pk},
                                      HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert 'id="conversations" class="conversations" hx-swap-oob="true"' in html  # the sidebar is updated
    assert "Draft our backup policy" in html.split('id="conversations"')[1]


def test_a_conversation_is_named_after_its_first_task_cut_at_a_word_with_an_ellipsis():
    from beyond_site.runs.queue import conversation_title

    assert conversation_title("  Draft our   asset register ") == "Draft our asset register"
    assert conversation_title("") == "New conversation"
    long = "Draft our ISO/IEC 27001:2022 asset-register overview using the attached asset list from finance"
    title = conversation_title(long)
    assert title == "Draft our ISO/IEC 27001:2022 asset-register overview using the attached asset…"
    assert len(title) <= 80 and long.startswith(title[:-1])
    assert conversation_title("x" * 200) == "x" * 79 + "…"  # one word: cut where it must
    assert conversation_title("a" * 80) == "a" * 80
    assert conversation_title("a " + "x" * 200) == "a " + "x" * 77 + "…"  # not "a…"


def test_a_follow_up_sent_while_the_run_above_is_going_says_it_cannot_see_that_document(members, alice, settings):
    settings.BEYOND_RUN_IN_PROCESS = False  # the runs stay queued: "still going"
    client = client_for(alice)
    client.post(reverse("chat:send", args=["acme"]), {"message": "Draft our asset register"}, HTTP_HX_REQUEST="true")
    first = Run.objects.get()
    follow_up = client.post(reverse("chat:send", args=["acme"]), {"message": "Add laptops",
                                                                  "conversation": first.conversation_id},
                            HTTP_HX_REQUEST="true").content.decode()
    assert "The run above is still going: this task may not see what it has not released yet." in follow_up
    assert Run.objects.count() == 2  # started all the same
    Run.objects.update(status=Run.COMPLETED)
    later = client.post(reverse("chat:send", args=["acme"]), {"message": "Add phones",
                                                              "conversation": first.conversation_id},
                        HTTP_HX_REQUEST="true").content.decode()
    assert "still going" not in later and Run.objects.count() == 3


def test_titles_and_file_names_lose_bidirectional_controls(members, alice):
    """A right-to-left override makes "report<RLO>txt.exe" read as "reportexe.txt" in a list."""
    from beyond_site.runs.queue import conversation_title
    from beyond_site.workspaces.knowledge import add_document

    conversation = conversation_by(members, alice, "Old title")
    client_for(alice).post(reverse("chat:conversation_rename", args=["acme", conversation.pk]),
                           {"title": "Invoice \u202egnp.exe"}, HTTP_HX_REQUEST="true")
    assert Conversation.objects.get(pk=conversation.pk).title == "Invoice gnp.exe"
    assert conversation_title("Draft \u2067our\u2069 policy \u202a") == "Draft our policy"
    document, _ = add_document(members, "report\u202etxt.exe", b"Our scope is Paris.", user=alice)
    assert document.name == "reporttxt.exe"
