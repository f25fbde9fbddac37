"""Chat pages: who may see and do what, sending with an idempotency key, uploads, memories."""
from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.files.uploadhandler import MemoryFileUploadHandler
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from beyond_site.runs import jobs
from beyond_site.runs.models import Run
from beyond_site.workspaces.reading import READ_TASK
from beyond_site.workspaces.models import Conversation
from beyond_site.workspaces.models import Document, Memory
from tests.site.chat_support import client_for, new_run, workspace_with

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("queued_runs_stay_queued")]
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def acme(alice, carol):
    return workspace_with("acme", member=alice, auditor=carol)


def form_key(html: str) -> str:
    return re.search(r'name="idempotency_key" id="idempotency-key" value="([^"]+)"', html).group(1)


def every_url(workspace, run, conversation, memory):
    s = workspace.slug
    return [
        ("get", f"/w/{s}/"), ("get", f"/w/{s}/c/{conversation.pk}/"), ("post", f"/w/{s}/send/"),
        ("post", f"/w/{s}/upload/"), ("post", f"/w/{s}/memories/"), ("post", f"/w/{s}/memories/{memory.pk}/"),
        ("post", f"/w/{s}/memories/{memory.pk}/delete/"), ("get", f"/w/{s}/runs/{run.pk}/export.md"),
        ("get", f"/w/{s}/runs/{run.pk}/export.docx"),
    ]


def test_it_asks_anonymous_users_to_log_in():
    assert Client().get("/").url.startswith("/accounts/login/")
    page = Client().get("/accounts/login/")
    assert page.status_code == 200 and b'name="username"' in page.content


def test_home_lists_only_my_workspaces(alice, bob, acme):
    workspace_with("secret", member=bob)
    page = client_for(alice).get("/").content.decode()
    assert "/w/acme/" in page and "/w/secret/" not in page


def test_every_view_is_404_for_non_members(alice, bob, acme):
    run = new_run(acme, alice)
    memory = Memory.objects.create(workspace=acme, text="A fact.")
    client = client_for(bob)
    for method, url in every_url(acme, run, run.conversation, memory):
        response = getattr(client, method)(url, {"message": "x", "text": "y"}, **HTMX)
        assert response.status_code == 404, url
    assert Memory.objects.filter(pk=memory.pk, text="A fact.").exists()
    assert Run.objects.count() == 1


def test_objects_are_looked_up_through_the_callers_workspace(alice, acme, bob):
    other = workspace_with("other", member=bob)
    run = new_run(other, bob)
    client = client_for(alice)
    assert client.get(f"/w/acme/c/{run.conversation_id}/").status_code == 404
    assert client.get(f"/w/acme/runs/{run.pk}/export.md").status_code == 404
    response = client.post("/w/acme/send/", {"message": "x", "conversation": run.conversation_id}, **HTMX)
    assert response.status_code == 404


def test_an_auditor_reads_but_cannot_post(acme, carol):
    client = client_for(carol)
    page = client.get("/w/acme/")
    assert page.status_code == 200 and b'id="chat-form"' not in page.content
    html = page.content.decode()  # no invitation to draft, no new conversation: only reading
    assert "What should Beyond draft?" not in html and "+ New conversation" not in html
    assert "Read this workspace's conversations" in html and 'href="/w/acme/audit/"' in html
    member_page = client_for(acme.memberships.get(role="member").user).get("/w/acme/").content.decode()
    assert "What should Beyond draft?" in member_page and "+ New conversation" in member_page
    assert client.post("/w/acme/send/", {"message": "Draft a policy"}, **HTMX).status_code == 403
    assert client.post("/w/acme/upload/", {}, **HTMX).status_code == 403
    assert client.post("/w/acme/memories/", {"text": "x"}, **HTMX).status_code == 403
    assert Run.objects.count() == 0 and Memory.objects.count() == 0


def test_the_page_has_the_form_contract_and_a_csp(alice, acme):
    page = client_for(alice).get("/w/acme/")
    html = page.content.decode()
    assert 'id="chat-form"' in html and 'textarea id="message" name="message"' in html
    assert '<button type="submit" class="primary">Send</button>' in html
    csp = page["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert "<script>" not in html and " style=" not in html  # no inline script or style


def test_sending_starts_one_run_and_answers_with_its_live_fragment(alice, acme):
    client = client_for(alice)
    key = form_key(client.get("/w/acme/").content.decode())
    response = client.post("/w/acme/send/", {"message": "Draft an access policy", "idempotency_key": key}, **HTMX)
    assert response.status_code == 200
    run = Run.objects.get()
    html = response.content.decode()
    assert f'id="run-{run.pk}"' in html and 'data-run-status="running"' in html
    assert f'ws-connect="/ws/runs/{run.pk}/"' in html and 'hx-ext="ws"' in html
    assert form_key(html) != key  # the next message gets a fresh key
    assert response["HX-Push-Url"] == f"/w/acme/c/{run.conversation_id}/"
    assert run.idempotency_key == key and run.created_by == alice


def test_a_replayed_form_never_runs_twice(alice, acme):
    client = client_for(alice)
    data = {"message": "Draft an access policy", "idempotency_key": "k-123"}
    first = client.post("/w/acme/send/", data, **HTMX)
    data["conversation"] = Run.objects.get().conversation_id
    again = client.post("/w/acme/send/", data, **HTMX)
    assert Run.objects.count() == 1
    assert 'class="exchange"' in first.content.decode() and 'class="exchange"' not in again.content.decode()


def test_without_htmx_sending_redirects_to_the_conversation(alice, acme):
    response = client_for(alice).post("/w/acme/send/", {"message": "Draft", "idempotency_key": "k"})
    assert response.status_code == 302 and response.url == f"/w/acme/c/{Conversation.objects.get().pk}/"


def test_an_empty_task_is_refused_and_nothing_is_started(alice, acme):
    response = client_for(alice).post("/w/acme/send/", {"message": "  ", "idempotency_key": "k"}, **HTMX)
    assert response["HX-Reswap"] == "none" and b"Write a task first." in response.content
    assert Run.objects.count() == 0


def test_the_user_text_is_escaped(alice, acme):
    client = client_for(alice)
    client.post("/w/acme/send/", {"message": "<script>alert(1)</script>", "idempotency_key": "k"}, **HTMX)
    page = client.get(f"/w/acme/c/{Conversation.objects.get().pk}/").content.decode()
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page


def test_uploads_attach_files_and_report_refusals_by_name(alice, acme):
    client = client_for(alice)
    good = SimpleUploadedFile("scope.txt", b"Our scope is the Paris office.", content_type="text/plain")
    bad = SimpleUploadedFile("<img src=x onerror=alert(1)>.exe", b"MZ\x90\x00\x03\x00\x00\x00" * 50,
                             content_type="application/octet-stream")
    response = client.post("/w/acme/upload/", {"files": [good, bad]}, **HTMX)
    html = response.content.decode()
    assert response.status_code == 200
    document = Document.objects.get()
    assert document.name == "scope.txt" and document.conversation is not None
    assert "not attached" in html and "&lt;img src=x onerror=alert(1)&gt;.exe" in html
    assert "<img" not in html
    assert response["HX-Push-Url"] == f"/w/acme/c/{document.conversation_id}/"
    preview = f"/w/acme/files/{document.pk}/"  # the chip opens what Beyond read from the file
    assert f'<a class="file-chip-name" href="{preview}"' in html
    # Answered before the file was read: the chip says so, and asks for the list again meanwhile.
    assert document.status == Document.READING and "reading…" in html and 'hx-trigger="every 1s"' in html
    assert "still being read" in client.get(preview).content.decode()
    jobs.run_now(READ_TASK, document_id=document.pk)  # what the server's background does, here
    assert "Our scope is the Paris office." in client.get(preview).content.decode()
    listed = client.get(f"/w/acme/c/{document.conversation_id}/uploads/", **HTMX).content.decode()
    assert "reading…" not in listed and "every 1s" not in listed


def test_members_add_edit_and_delete_memories(alice, acme):
    client = client_for(alice)
    assert b"We are in Lyon." in client.post("/w/acme/memories/", {"text": "We are in Lyon."}, **HTMX).content
    memory = Memory.objects.get()
    client.post(f"/w/acme/memories/{memory.pk}/", {"text": "We are in Paris."}, **HTMX)
    memory.refresh_from_db()
    assert memory.text == "We are in Paris." and memory.updated_by == alice
    assert b"a memory cannot be empty" in client.post(f"/w/acme/memories/{memory.pk}/", {"text": ""}, **HTMX).content
    client.post(f"/w/acme/memories/{memory.pk}/delete/", **HTMX)
    assert Memory.objects.count() == 0


def test_auditors_see_memories_read_only(acme, carol):
    Memory.objects.create(workspace=acme, text="We are in Lyon.")
    page = client_for(carol).get("/w/acme/").content.decode()
    assert "We are in Lyon." in page and "/memories/" not in page


def test_the_chat_links_to_the_run_history_which_an_auditor_can_read(acme, carol):
    client = client_for(carol)
    page = client.get("/w/acme/").content.decode()
    assert 'href="/w/acme/audit/"' in page
    assert client.get("/w/acme/audit/").status_code == 200


def test_a_replayed_first_message_creates_no_second_conversation(alice, acme):
    client = client_for(alice)
    client.get("/w/acme/")
    data = {"message": "Draft an access policy", "idempotency_key": "k-new", "conversation": ""}
    first = client.post("/w/acme/send/", data, **HTMX)
    again = client.post("/w/acme/send/", data, **HTMX)
    run = Run.objects.get()
    assert Conversation.objects.count() == 1 and run.conversation_id == Conversation.objects.get().pk
    assert first["HX-Push-Url"] == again["HX-Push-Url"] == f"/w/acme/c/{run.conversation_id}/"
    html = again.content.decode()
    assert 'class="exchange"' not in html
    # the message box points at the run's conversation, not at a new empty one
    assert f'id="conversation-id" value="{run.conversation_id}" hx-swap-oob="true"' in html


def test_a_replay_from_the_conversation_itself_changes_nothing(alice, acme):
    client = client_for(alice)
    client.post("/w/acme/send/", {"message": "Draft", "idempotency_key": "k1"}, **HTMX)
    run = Run.objects.get()
    again = client.post("/w/acme/send/", {"message": "Draft", "idempotency_key": "k1",
                                          "conversation": run.conversation_id}, **HTMX)
    assert Conversation.objects.count() == 1 and 'id="conversation-id"' not in again.content.decode()
    assert again["HX-Push-Url"] == f"/w/acme/c/{run.conversation_id}/"


def upload_file(name, data, content_type="text/plain"):
    return SimpleUploadedFile(name, data, content_type=content_type)


def test_a_refused_upload_with_no_conversation_leaves_the_workspace_as_it_was(alice, acme):
    bad = upload_file("tool.exe", b"MZ\x90\x00\x03\x00\x00\x00" * 50, "application/octet-stream")
    response = client_for(alice).post("/w/acme/upload/", {"files": [bad], "conversation": ""}, **HTMX)
    html = response.content.decode()
    assert response.status_code == 200 and "tool.exe" in html and "not attached" in html
    assert Conversation.objects.count() == 0 and Document.objects.count() == 0
    assert "HX-Push-Url" not in response and 'id="conversation-id"' not in html


def test_a_refused_file_next_to_an_accepted_one_makes_one_conversation(alice, acme):
    bad = upload_file("tool.exe", b"MZ\x90\x00\x03\x00\x00\x00" * 50, "application/octet-stream")
    good = upload_file("scope.txt", b"Our scope is the Paris office.")
    response = client_for(alice).post("/w/acme/upload/", {"files": [bad, good]}, **HTMX)
    document = Document.objects.get()
    assert Conversation.objects.get().pk == document.conversation_id
    assert response["HX-Push-Url"] == f"/w/acme/c/{document.conversation_id}/"


@pytest.fixture
def small_files(settings):
    settings.BEYOND_MAX_FILE_BYTES = 1000
    settings.FILE_UPLOAD_HANDLERS = ["tests.site.test_chat_views.CountingHandler"]
    CountingHandler.received = 0
    return settings


class CountingHandler(MemoryFileUploadHandler):
    received = 0

    def receive_data_chunk(self, raw_data, start):
        CountingHandler.received += len(raw_data)
        return super().receive_data_chunk(raw_data, start)


def test_an_oversized_file_is_dropped_while_it_arrives_and_named(alice, acme, small_files):
    big = upload_file("huge.txt", b"x" * 5000)
    good = upload_file("scope.txt", b"Our scope is the Paris office.")
    response = client_for(alice).post("/w/acme/upload/", {"files": [big, good]}, **HTMX)
    html = response.content.decode()
    assert "huge.txt: larger than the 1,000 bytes limit" in html
    assert [d.name for d in Document.objects.all()] == ["scope.txt"]
    assert CountingHandler.received == len(b"Our scope is the Paris office.")  # none of huge.txt was kept


def test_an_oversized_file_alone_changes_nothing(alice, acme, small_files):
    response = client_for(alice).post("/w/acme/upload/", {"files": [upload_file("huge.txt", b"x" * 5000)]}, **HTMX)
    assert "huge.txt" in response.content.decode()
    assert Conversation.objects.count() == 0 and Document.objects.count() == 0


def test_a_request_far_past_the_limit_is_refused_before_it_is_parsed(alice, acme, small_files):
    response = client_for(alice).post("/w/acme/upload/", {"files": [upload_file("huge.txt", b"x" * 20_000)]},
                                      **HTMX)
    assert response["HX-Reswap"] == "none" and b"each file may be at most 1,000 bytes" in response.content
    assert CountingHandler.received == 0
    assert Conversation.objects.count() == 0 and Document.objects.count() == 0


def test_at_most_ten_files_are_taken_at_once(alice, acme):
    files = [upload_file(f"note-{n}.txt", f"Note {n}.".encode()) for n in range(11)]
    response = client_for(alice).post("/w/acme/upload/", {"files": files}, **HTMX)
    assert response.status_code == 200 and response["HX-Reswap"] == "none"
    assert b"Attach at most 10 files at a time" in response.content
    assert Conversation.objects.count() == 0 and Document.objects.count() == 0
    fewer = client_for(alice).post("/w/acme/upload/", {"files": [upload_file("a.txt", b"A.")]}, **HTMX).content.decode()
    assert '<div id="notice" class="notice-slot" hx-swap-oob="true"></div>' in fewer  # the refusal is cleared


def test_uploads_still_check_csrf(alice, acme):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    response = client.post("/w/acme/upload/", {"files": [upload_file("scope.txt", b"Scope.")]}, **HTMX)
    assert response.status_code == 403 and Document.objects.count() == 0
    client.get("/w/acme/")
    token = {"HTTP_X_CSRFTOKEN": client.cookies["csrftoken"].value, **HTMX}  # as htmx sends it (hx-headers)
    response = client.post("/w/acme/upload/", {"files": [upload_file("scope.txt", b"Scope.")]}, **token)
    assert response.status_code == 200 and Document.objects.count() == 1
    files = [upload_file(f"note-{n}.txt", b"Note.") for n in range(11)]
    response = client.post("/w/acme/upload/", {"files": files}, **token)
    assert b"Attach at most 10 files" in response.content and Document.objects.count() == 1


def test_deleting_a_memory_is_its_own_confirmed_form(alice, acme):
    memory = Memory.objects.create(workspace=acme, text="We are in Lyon.")
    html = client_for(alice).get("/w/acme/").content.decode()
    forms = re.findall(r"<form\b.*?</form>", html, re.S)
    delete = [f for f in forms if f"/memories/{memory.pk}/delete/" in f]
    assert len(delete) == 1, "one form posts the delete"
    assert "<textarea" not in delete[0] and "required" not in delete[0]  # an emptied edit box cannot block it
    assert 'hx-confirm="' in delete[0] and 'method="post"' in delete[0] and "csrfmiddlewaretoken" in delete[0]
    edit = [f for f in forms if f'action="/w/acme/memories/{memory.pk}/"' in f]
    assert len(edit) == 1 and "/delete/" not in edit[0]


def test_the_sidebar_pages_to_older_conversations(alice, acme):
    from beyond_site.chat import conversations

    titles = [f"Conversation {n:03d}" for n in range(conversations.PER_PAGE + 5)]
    for title in titles:
        Conversation.objects.create(workspace=acme, title=title, created_by=alice)
    client = client_for(alice)
    first = client.get("/w/acme/").content.decode()
    assert "Conversation 000" not in first and titles[-1] in first
    assert 'href="/w/acme/?chats=2"' in first and "Older conversations" in first
    second = client.get("/w/acme/?chats=2").content.decode()
    assert "Conversation 000" in second and "Conversation 004" in second and titles[-1] not in second
    assert "Older conversations" not in second and 'href="/w/acme/?chats=1"' in second
    assert client.get("/w/acme/?chats=oops").status_code == 200


def test_a_long_conversation_shows_the_latest_exchanges_and_pages_back(alice, acme):
    from beyond_site.chat import views
    from beyond_site.runs.queue import start_run

    conversation = Conversation.objects.create(workspace=acme, title="Long", created_by=alice)
    for n in range(views.EXCHANGES_PER_PAGE + 3):
        start_run(acme, f"Task number {n:03d}", user=alice, conversation=conversation)
    client = client_for(alice)
    url = f"/w/acme/c/{conversation.pk}/"
    page = client.get(url).content.decode()
    assert page.count('class="exchange"') == views.EXCHANGES_PER_PAGE
    assert "Task number 002" not in page and "Task number 003" in page and "Task number 022" in page
    assert page.count("data-run-status=") == views.EXCHANGES_PER_PAGE and "ws-connect=" in page
    earlier = re.search(r'href="([^"]+\?before=\d+)"[^>]*>Show earlier', page).group(1)
    back = client.get(earlier.replace("&amp;", "&")).content.decode()
    assert back.count('class="exchange"') == 3
    assert "Task number 000" in back and "Task number 002" in back and "Task number 003" not in back
    assert "Show earlier" not in back and f'href="{url}">Show the latest' in back
    other = Conversation.objects.create(workspace=acme, title="Other", created_by=alice)
    assert client.get(f"/w/acme/c/{other.pk}/?before=1").status_code == 404


def test_the_sent_run_is_drawn_as_the_page_draws_a_queued_run(acme, alice):
    from django.template.loader import render_to_string
    from beyond_site.chat.presenting import queued_view, run_view
    run = new_run(acme, alice)
    drawn = [render_to_string("chat/_run.html", {"rv": view, "oob": False}) for view in (queued_view(run), run_view(run.pk))]
    assert drawn[0] == drawn[1] and "Queued: starting soon" in drawn[0]


def test_a_new_conversation_sends_its_own_list_item_not_the_whole_list(acme, alice):
    older = [Conversation.objects.create(workspace=acme, title=f"Chat {n}", created_by=alice) for n in range(50)]
    client = client_for(alice)
    key = form_key(client.get("/w/acme/").content.decode())
    sent = client.post("/w/acme/send/", {"message": "Draft a clear desk policy", "idempotency_key": key},
                       **HTMX).content.decode()
    new = Conversation.objects.get(title="Draft a clear desk policy")
    assert sent.count("data-conversation=") == 1 and f'data-conversation="{new.pk}"' in sent
    assert 'hx-swap-oob="afterbegin:#conversations ul"' in sent
    assert f'<li id="conversation-{older[0].pk}" hx-swap-oob="delete">' in sent  # now on the next page
    assert 'rel="next">Older conversations' in sent and "conversations-empty" not in sent


def list_reads(client, data) -> list[str]:
    """The queries a submission made that read the side list's conversations."""
    with CaptureQueriesContext(connection) as queries:
        client.post("/w/acme/send/", data, **HTMX)
    return [q["sql"] for q in queries.captured_queries
            if q["sql"].startswith("SELECT") and 'FROM "workspaces_conversation"' in q["sql"] and "LIMIT 51" in q["sql"]]


def test_a_submission_reads_the_side_list_only_as_far_as_it_changes(acme, alice):
    for n in range(60):
        Conversation.objects.create(workspace=acme, title=f"Chat {n}", created_by=alice)
    client = client_for(alice)
    key = form_key(client.get("/w/acme/").content.decode())
    started = list_reads(client, {"message": "Draft a clear desk policy", "idempotency_key": key})
    assert len(started) == 1 and "," not in started[0].split(" FROM ")[0]  # one column: the ids
    new = Conversation.objects.get(title="Draft a clear desk policy")
    key = form_key(client.get(f"/w/acme/c/{new.pk}/").content.decode())
    assert list_reads(client, {"message": "Add a table", "idempotency_key": key, "conversation": new.pk}) == []
    assert new.messages.count() == 2


def test_a_submission_that_starts_a_conversation_reads_no_more_than_it_needs(acme, alice):
    """Its idempotency check reads whether the key was used (an id), not a run's whole row; the
    conversation it has just created has no earlier message to look for; the membership and the
    budget are read without an ordering (one per user and workspace, one per workspace)."""
    client = client_for(alice)
    key = form_key(client.get("/w/acme/").content.decode())
    with CaptureQueriesContext(connection) as queries:
        sent = client.post("/w/acme/send/", {"message": "Draft a clear desk policy", "idempotency_key": key},
                           **HTMX).content.decode()
    reads = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("SELECT")]
    key_checks = [sql for sql in reads if '"runs_run"."idempotency_key" =' in sql]
    assert len(key_checks) == 1 and "," not in key_checks[0].split(" FROM ")[0]  # one column: the id
    assert "ORDER BY" not in key_checks[0]
    assert not [sql for sql in reads if 'FROM "workspaces_message"' in sql]
    memberships = [sql for sql in reads if sql.split(" FROM ")[1].startswith('"workspaces_membership"')]
    assert len(memberships) == 1 and "ORDER BY" not in memberships[0]
    budgets = [sql for sql in reads if 'FROM "workspaces_workspacebudget"' in sql]
    assert budgets and not [sql for sql in budgets if "ORDER BY" in sql]  # one budget per workspace
    assert '<div id="empty-state" hx-swap-oob="delete"></div>' in sent  # still its first exchange
    assert Run.objects.get().idempotency_key == key


def shown_list(html: str) -> str:
    return re.search(r'id="chats-shown" name="chats_shown" value="(\w+)"', html).group(1)


def test_the_list_says_which_list_it_is_and_the_composer_sends_it(acme, alice):
    for n in range(51):
        Conversation.objects.create(workspace=acme, title=f"Chat {n}", created_by=alice)
    client = client_for(alice)
    first = client.get("/w/acme/").content.decode()
    assert shown_list(first) == "first" and 'hx-include="#chats-shown"' in first
    assert shown_list(client.get("/w/acme/?chats=2").content.decode()) == "other"
    assert shown_list(client.get("/w/acme/conversations/?q=Chat 7", **HTMX).content.decode()) == "other"
    assert shown_list(client.get("/w/acme/conversations/?q=", **HTMX).content.decode()) == "first"


def test_a_new_conversation_sent_from_a_search_or_a_later_page_redraws_the_first_page(acme, alice):
    """Adding its item to a search's results or to page 2 would show a list that is neither (and,
    when the item it pushes off is not there, leave htmx a swap without a target)."""
    older = [Conversation.objects.create(workspace=acme, title=f"Chat {n}", created_by=alice) for n in range(50)]
    client = client_for(alice)
    key = form_key(client.get("/w/acme/?chats=2").content.decode())
    sent = client.post("/w/acme/send/", {"message": "Draft a clear desk policy", "idempotency_key": key,
                                         "chats_shown": "other"}, **HTMX).content.decode()
    new = Conversation.objects.get(title="Draft a clear desk policy")
    assert 'afterbegin:#conversations ul' not in sent
    assert not re.search(r'<li id="conversations?-?[^"]*" hx-swap-oob="delete">', sent)
    assert '<div id="conversations" class="conversations" hx-swap-oob="true">' in sent
    assert sent.count("data-conversation=") == 50 and f'data-conversation="{new.pk}"' in sent
    assert f'data-conversation="{older[0].pk}"' not in sent  # now on page 2
    assert shown_list(sent) == "first" and 'rel="next">Older conversations' in sent


def test_the_first_conversation_replaces_the_empty_list_note(acme, alice):
    client = client_for(alice)
    key = form_key(client.get("/w/acme/").content.decode())
    sent = client.post("/w/acme/send/", {"message": "Draft a clear desk policy", "idempotency_key": key},
                       **HTMX).content.decode()
    assert '<li id="conversations-empty" hx-swap-oob="delete">' in sent and "Older conversations" not in sent


def test_the_first_task_of_a_conversation_an_upload_started_clears_the_welcome_and_the_report(alice, acme):
    client = client_for(alice)
    bad = upload_file("tool.exe", b"MZ\x90\x00\x03\x00\x00\x00" * 50, "application/octet-stream")
    uploaded = client.post("/w/acme/upload/", {"files": [bad, upload_file("scope.txt", b"Our scope: Paris.")]}, **HTMX)
    assert "This file was not attached" in uploaded.content.decode()
    conversation = Conversation.objects.get()
    page = client.get(f"/w/acme/c/{conversation.pk}/").content.decode()
    assert 'id="empty-state"' in page and 'id="uploads-report"' in page
    first = client.post("/w/acme/send/", {"message": "Draft a scope note", "conversation": conversation.pk,
                                          "idempotency_key": form_key(page)}, **HTMX).content.decode()
    assert '<div id="empty-state" hx-swap-oob="delete"></div>' in first
    assert '<div id="uploads-report" hx-swap-oob="true"></div>' in first
    second = client.post("/w/acme/send/", {"message": "Shorter, please", "conversation": conversation.pk,
                                           "idempotency_key": form_key(first)}, **HTMX).content.decode()
    assert "empty-state" not in second and "uploads-report" not in second  # nothing left to clear
