"""Model-made content is inert: in the page, in websocket fragments, in step titles and recaps."""
from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest
from django.test import Client

from django.contrib import admin

from beyond_site.runs.admin import ContextRecordAdmin
from beyond_site.runs.contexts import store_context
from beyond_site.runs.models import ContextRecord
from pipeline import events as ev
from pipeline.providers.base import Message as ProviderMessage
from pipeline.events import Event
from beyond_site.chat import fragments
from beyond_site.lib.markdown import markdown_to_html
from tests import scripting
from tests.site.chat_support import new_run, record, released, workspace_with

pytestmark = pytest.mark.django_db(transaction=True)

PAYLOAD = ("Intro <script>window.pwned=1</script>\n\n<img src=x onerror=\"window.pwned=1\">\n\n"
           "[click](javascript:window.pwned=1) <a href=\"javascript:alert(1)\">raw</a> "
           "[data](data:text/html;base64,PHNjcmlwdD4=) [ok](https://example.org/x)\n\n"
           "<div hx-get=\"/evil\" hx-trigger=\"load\">htmx</div>")


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def assert_inert(html: str):
    """Parse like a browser would: no script or img element, no on* handler, no dangerous link,
    no htmx trigger from model text (escaped text that merely looks like markup is fine)."""
    parser = _Tags()
    parser.feed(html)
    for tag, attrs in parser.tags:
        if tag == "script" and (attrs.get("src") or "").startswith("/static/") and len(attrs) <= 2:
            continue  # the page's own scripts
        assert tag not in ("script", "img", "iframe", "object", "style"), tag
        assert not [a for a in attrs if a.startswith("on")], (tag, attrs)
        href = (attrs.get("href") or "").strip().lower()
        assert not href.startswith(("javascript:", "data:", "vbscript:")), href
        assert "hx-trigger" not in attrs, (tag, attrs)  # model text cannot smuggle htmx behaviour


def test_the_renderer_escapes_raw_html_and_refuses_dangerous_links():
    html = str(markdown_to_html(PAYLOAD))
    assert_inert(html)
    assert '<a href="https://example.org/x" rel="noopener noreferrer">ok</a>' in html
    assert "&lt;script&gt;" in html


@pytest.fixture
def poisoned_run(alice):
    workspace = workspace_with(member=alice)
    run = new_run(workspace, alice)
    evil_brief = scripting.brief(2)
    evil_brief["steps"][0]["title"] = "<img src=x onerror=alert(1)>Title"
    record(run, Event(ev.BriefReady(brief=evil_brief)), released(1, PAYLOAD, warnings=["<script>w</script>"]))
    return run


def test_page_and_fragments_keep_model_text_inert(poisoned_run, alice):
    client = Client()
    client.force_login(alice)
    page = client.get(f"/w/{poisoned_run.workspace.slug}/c/{poisoned_run.conversation_id}/").content.decode()
    html, _, _ = fragments.snapshot(poisoned_run.pk)
    for text in (page, html):
        assert_inert(text)
        assert "&lt;img src=x onerror=alert(1)&gt;Title" in text
        assert "&lt;script&gt;w&lt;/script&gt;" in text
        assert 'class="step-content prose" hx-disable' in text  # htmx ignores anything inside


def test_the_recap_is_sanitised_too(poisoned_run):
    rows = record(poisoned_run, Event(ev.SummaryReady(summary=PAYLOAD)))
    html, _, _ = fragments.since(poisoned_run, rows[0].seq - 1)
    assert "Recap" in html
    assert_inert(html)


def test_every_page_carries_the_csp(alice):
    client = Client()
    client.force_login(alice)
    for url in ("/", "/accounts/login/"):
        csp = client.get(url)["Content-Security-Policy"]
        assert "script-src 'self'" in csp and "style-src 'self'" in csp


def test_the_idempotency_key_and_scripts_in_page_are_not_inline(alice):
    workspace_with(member=alice)
    client = Client()
    client.force_login(alice)
    html = client.get("/w/acme/").content.decode()
    assert json.loads(html.split("name=\"htmx-config\" content='")[1].split("'")[0])["allowEval"] is False


@pytest.mark.parametrize("link", ["//evil.example/phish", "/w/demo/memories/1/delete/", "https:evil.example",
                                  "/\\evil.example", "delete/"])
def test_relative_and_protocol_relative_links_lose_their_href(link):
    html = str(markdown_to_html(f"[click here]({link})"))
    assert "href" not in html and "click here" in html


def test_absolute_web_and_mail_links_are_kept():
    html = str(markdown_to_html("[site](https://example.org/a?b=1) [plain](http://example.org) [mail](mailto:a@b.example)"))
    assert '<a href="https://example.org/a?b=1" rel="noopener noreferrer">site</a>' in html
    assert '<a href="http://example.org" rel="noopener noreferrer">plain</a>' in html
    assert '<a href="mailto:a@b.example" rel="noopener noreferrer">mail</a>' in html


@pytest.mark.django_db
def test_the_admin_shows_context_messages_without_inline_style():
    record = store_context((ProviderMessage("user", "<b>hi</b>"),))
    html = str(ContextRecordAdmin(ContextRecord, admin.site).messages(record))
    assert "style=" not in html and "<pre>&lt;b&gt;hi&lt;/b&gt;</pre>" in html
