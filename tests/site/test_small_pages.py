"""Pages around the edges: styled 403 and 404, memory errors by their form, the per-call context
page's messages kept apart from the page's notices, the phone top bar."""
from __future__ import annotations

import pytest

from beyond_site.workspaces.models import Memory
from tests.site.chat_support import client_for, workspace_with

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def test_the_403_page_is_styled_and_says_why(alice, bob):
    workspace_with("acme", admin=alice, member=bob)
    response = client_for(bob).get("/w/acme/settings/")
    html = response.content.decode()
    assert response.status_code == 403 and 'data-error="403"' in html and "beyond.css" in html
    assert "Your role (member) cannot do this here." in html and "Back to your workspaces" in html


def test_the_404_page_is_styled_and_reveals_nothing(alice, bob):
    workspace_with("acme", admin=alice)
    html = client_for(bob).get("/w/acme/").content.decode()
    assert 'data-error="404"' in html and "beyond.css" in html and "Acme" not in html


def test_a_refused_memory_is_shown_under_the_form_that_sent_it_with_its_text_kept(alice):
    workspace = workspace_with("acme", member=alice)
    memory = Memory.objects.create(workspace=workspace, text="We are in Lyon.")
    client = client_for(alice)
    html = client.post("/w/acme/memories/", {"text": "x" * 4001}, **HTMX).content.decode()
    form = html[html.index('class="stack memory-add"'):]
    assert 'id="memory-error-add"' in form and "4,000 characters at most" in form and "x" * 4001 in form
    html = client.post(f"/w/acme/memories/{memory.pk}/", {"text": "   "}, **HTMX).content.decode()
    item = html[html.index(f'id="memory-{memory.pk}"'):html.index('class="stack memory-add"')]
    assert "<details open>" in item and f'id="memory-error-{memory.pk}"' in item and "cannot be empty" in item
    assert Memory.objects.get(pk=memory.pk).text == "We are in Lyon."
