"""The run's templates (templates/chat/_run.html and the parts it includes) draw a run alike on
the chat page and over its websocket: escaped, safe Markdown as it is, nothing for a name a
fragment is not given, and the same article on the page as over the websocket."""
from __future__ import annotations

import pytest
from django.template.loader import get_template
from django.utils.safestring import mark_safe

from pipeline import events as ev
from pipeline.events import Event
from beyond_site.chat import fragments
from beyond_site.chat.presenting import RunView, StepView
from beyond_site.runs.models import Run
from beyond_site.workspaces.models import Workspace
from tests.site.chat_support import brief_ready, client_for, new_run, record, released, workspace_with

pytestmark = pytest.mark.django_db

HOSTILE = 'A "quoted" <b>it\'s</b> & <script>alert(1)</script>'


def step_fragment(title: str, html: str) -> str:
    run = Run(id=5, status=Run.RUNNING, task="t")
    step = StepView(index=1, title=title, status="released", badge="passed", warnings=[title], html=mark_safe(html))
    rv = RunView(run=run, status=Run.RUNNING, steps=[step], progress=title, recap_html="", warnings=[], last_seq=1)
    return get_template("chat/_step.html").render({"rv": rv, "oob": True, "s": step})


def test_text_is_escaped_as_django_escapes_it_and_safe_markdown_is_kept():
    html = step_fragment(HOSTILE, "<p>Sanitised <em>Markdown</em></p>")
    escaped = "A &quot;quoted&quot; &lt;b&gt;it&#x27;s&lt;/b&gt; &amp; &lt;script&gt;alert(1)&lt;/script&gt;"
    assert f'<h3 class="step-title">{escaped}</h3>' in html and f"<li>{escaped}</li>" in html
    assert "<p>Sanitised <em>Markdown</em></p>" in html and "<script>" not in html


def test_a_fragment_sent_over_the_websocket_needs_no_page_context(alice):
    run = new_run(workspace_with(member=alice), alice)
    record(run, Event(ev.RunStarted(topology={}, offline=True)), brief_ready(1))
    html, _, _ = fragments.snapshot(run.pk)  # no request, membership or rights: no Stop button, no error
    assert f'id="run-{run.pk}-steps"' in html and "run-stop" not in html


def test_the_page_and_the_websocket_draw_the_same_finished_article(alice):
    run = new_run(workspace_with(member=alice), alice)
    record(run, Event(ev.RunStarted(topology={}, offline=True)), brief_ready(2), released(1, HOSTILE),
           released(2, "**Two.**"), Event(ev.SummaryReady(summary="Done.")), Event(ev.RunCompleted()))
    sent, _, finished = fragments.snapshot(run.pk)
    page = client_for(alice).get(f"/w/{run.workspace.slug}/c/{run.conversation_id}/").content.decode()
    start = page.index(f'<article class="run run--completed" id="run-{run.pk}"')
    drawn = page[start:page.index("</article>", start) + len("</article>")]
    assert finished and sent.replace(' hx-swap-oob="true"', "", 1).rstrip() == drawn
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in drawn and "<strong>Two.</strong>" in drawn


def test_a_fragments_links_follow_the_script_prefix_they_are_drawn_under():
    """A server mounted under a prefix gets its own links in the fragments, whichever prefix drew
    them first."""
    from django.urls import get_script_prefix, set_script_prefix

    def audit_link() -> str:
        run = Run(id=77, status=Run.COMPLETED, task="t", workspace=Workspace(id=1, slug="acme"))
        rv = RunView(run=run, status=Run.COMPLETED, steps=[], progress="", recap_html="", warnings=[], last_seq=1)
        return get_template("chat/_run.html").render({"rv": rv, "oob": False})

    before = get_script_prefix()
    try:
        assert 'href="/w/acme/audit/runs/77/"' in audit_link()
        set_script_prefix("/beyond/")
        assert 'href="/beyond/w/acme/audit/runs/77/"' in audit_link()
    finally:
        set_script_prefix(before)
    assert 'href="/w/acme/audit/runs/77/"' in audit_link()
