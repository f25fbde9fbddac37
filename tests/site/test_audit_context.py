"""What each call was given, and which calls saw a given text: the verifier's blindness, shown."""
from __future__ import annotations

import pytest

from beyond_site.runs.models import ModelCall
from beyond_site.runs.contexts import context_messages
from beyond_site.workspaces.knowledge import add_memory
from tests.scripting import PASS, fail
from tests.site.audit_support import run_task

pytestmark = pytest.mark.django_db(transaction=True)

MARKER = "Badge colour for the Paris office is teal-7731."


@pytest.fixture
def run_id(acme, tmp_path) -> int:
    add_memory(acme, MARKER)
    trace = run_task(tmp_path, {1: {"executor": ["Draft one.", "Draft <two>."], "verifier": [fail("Too short."), PASS]}})
    return trace["run"]["id"]


def context_page(client, run_id: int, call: ModelCall) -> str:
    response = client.get(f"/w/acme/audit/runs/{run_id}/calls/{call.pk}/context/")
    assert response.status_code == 200
    return response.content.decode()


def test_it_shows_the_memory_to_the_executor_and_not_to_the_verifier(auditor_client, run_id):
    executor = ModelCall.objects.get(run_id=run_id, role="executor", attempt=1)
    verifier = ModelCall.objects.get(run_id=run_id, role="verifier", attempt=1)
    assert MARKER in context_page(auditor_client, run_id, executor)
    verifier_page = context_page(auditor_client, run_id, verifier)
    assert "teal-7731" not in verifier_page
    assert "Draft one." in verifier_page  # the verifier saw the draft under review


def test_it_shows_every_message_escaped_with_its_size(auditor_client, run_id):
    rerender = ModelCall.objects.get(run_id=run_id, role="executor", attempt=2)
    html = context_page(auditor_client, run_id, rerender)
    messages = context_messages(rerender.context)
    for number, message in enumerate(messages, 1):
        assert f"Message {number}: {message['role']}" in html
        assert f"({len(message['content'])} characters, {len(message['content'].encode())} bytes)" in html
    assert "Too short." in html and "Draft one." in html  # the re-render was given the issues and its draft
    verifier2 = ModelCall.objects.get(run_id=run_id, role="verifier", attempt=2)
    page = context_page(auditor_client, run_id, verifier2)
    assert "Draft &lt;two&gt;." in page and "Draft <two>." not in page


def test_the_seen_search_lists_the_calls_that_had_the_text(auditor_client, run_id):
    html = auditor_client.get(f"/w/acme/audit/runs/{run_id}/seen", {"q": "teal-7731"}).content.decode()
    saw = ModelCall.objects.filter(run_id=run_id, role__in=["planner", "executor"])
    assert f"{saw.count()} calls had" in html
    for call in saw:
        assert f"/calls/{call.pk}/context/" in html
    for call in ModelCall.objects.filter(run_id=run_id, role__in=["verifier", "summarizer"]):
        assert f"/calls/{call.pk}/context/" not in html
    assert "<td>verifier</td>" not in html and "<td>executor</td>" in html


def test_the_seen_search_says_when_no_call_saw_the_text(auditor_client, run_id):
    html = auditor_client.get(f"/w/acme/audit/runs/{run_id}/seen", {"q": "<b>never said</b>"}).content.decode()
    assert "No call of this run had" in html
    assert "&lt;b&gt;never said&lt;/b&gt;" in html and "<b>never said</b>" not in html


def test_the_seen_page_without_a_query_only_offers_the_search(auditor_client, run_id):
    html = auditor_client.get(f"/w/acme/audit/runs/{run_id}/seen").content.decode()
    assert 'name="q"' in html and "calls had" not in html and "No call" not in html


def test_the_calls_messages_are_not_shown_as_page_notices(auditor_client, run_id):
    """The page's own messages stay apart from the notices base.html shows above every page."""
    executor = ModelCall.objects.get(run_id=run_id, role="executor", attempt=1)
    html = context_page(auditor_client, run_id, executor)
    assert 'class="page-messages"' not in html and "{&#x27;role&#x27;" not in html
    assert html.count('class="audit-message"') == len(context_messages(executor.context))


@pytest.mark.parametrize("query", ["TEAL-7731", "Teal-7731", "ｔｅａｌ－７７３１", "badge colour for the PARIS office"])
def test_the_seen_search_ignores_case_and_unicode_forms(auditor_client, run_id, query):
    """A lower-cased, upper-cased or full-width copy is the same fact: "not seen" must not hide it."""
    html = auditor_client.get(f"/w/acme/audit/runs/{run_id}/seen", {"q": query}).content.decode()
    saw = ModelCall.objects.filter(run_id=run_id, role__in=["planner", "executor"])
    assert f"{saw.count()} calls had" in html, html
    assert "<td>verifier</td>" not in html
