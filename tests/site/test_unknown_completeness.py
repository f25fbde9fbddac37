"""A draft whose completeness nothing can tell (streamed through a gateway that masks cut streams,
issue 48 item 3) is on the record as `truncated: null`, verifies, and its step says so on the card."""
from __future__ import annotations

import pytest

from pipeline import events as ev
from pipeline.events import Event
from beyond_site.runs.chain import verify_run
from beyond_site.runs.selectors import run_trace
from tests.site.chat_support import brief_ready, client_for, new_run, record, released, workspace_with

pytestmark = pytest.mark.django_db

WARNING = "Completeness unknown: this step was streamed through a gateway that can hide a cut, so it may end early."


def test_unknown_completeness_is_null_on_the_record_and_said_on_the_card(alice):
    run = new_run(workspace_with(member=alice), alice)
    record(run, brief_ready(1),
           Event(ev.AttemptDrafted(step=1, attempt=1, draft="Access is requested", truncated=None)),
           Event(ev.AttemptDrafted(step=1, attempt=2, draft="Access is requested through", truncated=None)),
           released(1, "Access is requested through", badge="warning", warnings=[WARNING]),
           Event(ev.RunCompleted()))
    attempts = run_trace(run)["steps"][0]["attempts"]
    assert [a["truncated"] for a in attempts] == [None, None]
    assert verify_run(run).ok
    page = client_for(alice).get(f"/w/{run.workspace.slug}/c/{run.conversation_id}/").content.decode()
    assert 'data-badge="warning"' in page and "Completeness unknown" in page
