"""Declining (docs/verifier-contract.md, "Declining") on the site: a declined run ends `declined`
with its reason, is chained like any finished run, is shown as such, has nothing to export, is not
offered again, and never becomes the conversation's document: the follow-up context and the
earlier run's exports stay as they were."""
from __future__ import annotations

import asyncio
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from beyond_site.runs.context import assemble_context
from beyond_site.runs.models import Run, WorkspaceLedger
from beyond_site.runs.queue import claim_run, start_run
from beyond_site.runs.runner import execute_run
from beyond_site.workspaces.models import Membership
from pipeline.providers.offline.revision import latest_document
from pipeline.topology import parse_shorthand
from tests import scripting
from tests.scripting import PASS
from tests.site.chat_support import client_for
from tests.site.test_tamper_evidence import assert_caught, sql, verify

pytestmark = pytest.mark.django_db(transaction=True)

REASON = ("The offline engine cannot translate or reword text; connect a model in Settings to translate "
          "this document.")
FIRST = "The register lists FIRST-DOCUMENT-MARKER: every laptop and server."


@pytest.fixture
def members(acme, alice, carol):
    Membership.objects.create(user=alice, workspace=acme, role="member")
    Membership.objects.create(user=carol, workspace=acme, role="auditor")
    return acme


def declining(tmp_path, name="declines.json"):
    data = scripting.script({}, planner=[json.dumps(scripting.declined_brief(REASON))])
    return parse_shorthand("scripted:" + str(scripting.write(tmp_path, data, name=name)))


def finish(run: Run) -> Run:
    assert claim_run(run.pk, "test-runner")
    asyncio.run(execute_run(run.pk, "test-runner"))
    return Run.objects.get(pk=run.pk)


@pytest.fixture
def conversation_with_a_declined_follow_up(members, alice, tmp_path):
    """A document (run one), then a follow-up that was declined (run two)."""
    script = scripting.script({1: {"executor": [FIRST], "verifier": [PASS]}})
    first, _ = start_run(members, "Draft our asset register", user=alice, topology=parse_shorthand(
        "scripted:" + str(scripting.write(tmp_path, script, name="first.json"))))
    first = finish(first)
    second, _ = start_run(members, "Translate this document into French", user=alice,
                          conversation=first.conversation, topology=declining(tmp_path))
    return first, finish(second)


def test_beyond_run_ends_a_declined_run_with_exit_0_and_prints_the_reason(acme, tmp_path):
    path = scripting.write(tmp_path, scripting.script({}, planner=[json.dumps(scripting.declined_brief(REASON))]))
    out = io.StringIO()
    call_command("beyond_run", "--workspace", "acme", "--task", "Translate the policy into French",
                 "--provider", f"scripted:{path}", stdout=out)  # no CommandError: exit 0
    printed = out.getvalue()
    assert printed.splitlines()[0].endswith(": declined") and f"Declined: {REASON}" in printed
    out = io.StringIO()
    call_command("beyond_run", "--workspace", "acme", "--task", "Translate the policy into French",
                 "--provider", f"scripted:{path}", "--json", stdout=out)
    trace = json.loads(out.getvalue())
    assert trace["run"]["status"] == "declined" and trace["run"]["decline_reason"] == REASON
    assert trace["run"]["halt_reason"] is None and trace["run"]["verification"] is None
    assert trace["steps"] == [] and trace["summary"] is None and trace["brief"]["decline_reason"] == REASON
    assert [e["type"] for e in trace["events"]][-1] == "run_declined"


def test_a_declined_run_is_finished_chained_and_not_retryable(conversation_with_a_declined_follow_up):
    _, declined = conversation_with_a_declined_follow_up
    assert declined.status == Run.DECLINED and declined.is_finished and declined.status not in Run.RETRYABLE
    assert declined.decline_reason == REASON and declined.finished_at is not None
    assert WorkspaceLedger.objects.filter(run=declined).exists()
    assert verify()[0] == 0
    sql("UPDATE runs_run SET decline_reason = %s WHERE id = %s", ["Something milder.", declined.pk])
    assert_caught(declined, "status, halt reason or end does not match")


def test_the_chat_shows_the_reason_with_no_badge_export_or_run_again(conversation_with_a_declined_follow_up, alice):
    first, declined = conversation_with_a_declined_follow_up
    page = client_for(alice).get(reverse("chat:conversation", args=["acme", first.conversation_id])).content.decode()
    article = page[page.index(f'id="run-{declined.pk}"'):]
    article = article[:article.index("</article>")]
    assert 'data-run-status="declined"' in article and ">Declined<" in article
    assert "data-declined" in article and REASON.replace("'", "&#x27;") in article
    assert "data-badge" not in article and "export.md" not in article and "run-again" not in article
    assert f"/runs/{first.pk}/export.md" in page  # the earlier document keeps its exports


def test_the_earlier_document_stays_the_conversation_s_document(conversation_with_a_declined_follow_up, alice,
                                                               tmp_path):
    first, declined = conversation_with_a_declined_follow_up
    client = client_for(alice)
    before = {ext: client.get(f"/w/acme/runs/{first.pk}/export.{ext}").content for ext in ("md", "docx")}
    third, _ = start_run(first.workspace, "Add a section on remote work", user=alice,
                         conversation=first.conversation, topology=declining(tmp_path, "third.json"))
    ctx = assemble_context(third, budget=20_000)
    assert [s.content for s in latest_document(ctx)] == [FIRST]  # the document is run one's
    said = [m.text for m in ctx.history if m.role == "assistant"]
    assert said[-1].startswith("(This run ended declined and released no step.)") and REASON in said[-1]
    md = client.get(f"/w/acme/runs/{first.pk}/export.md").content
    assert md == before["md"] and b"FIRST-DOCUMENT-MARKER" in md
    refused = client.get(f"/w/acme/runs/{declined.pk}/export.md")
    assert refused.status_code == 409 and REASON in refused.content.decode()
    with pytest.raises(CommandError, match="declined the task and released nothing"):
        call_command("beyond_export", str(declined.pk), "--format", "docx", "--out", str(tmp_path / "x.docx"))


def test_run_again_refuses_a_declined_run(conversation_with_a_declined_follow_up, alice):
    _, declined = conversation_with_a_declined_follow_up
    response = client_for(alice).post(reverse("chat:run_again", args=["acme", declined.pk]), HTTP_HX_REQUEST="true")
    assert "can be run again" in response.content.decode()
    assert not Run.objects.filter(retry_of=declined).exists()


def test_the_audit_pages_show_and_filter_declined_runs(conversation_with_a_declined_follow_up, carol):
    first, declined = conversation_with_a_declined_follow_up
    client = client_for(carol)
    listing = client.get("/w/acme/audit/?status=declined").content.decode()
    assert f"/audit/runs/{declined.pk}/" in listing and f"/audit/runs/{first.pk}/" not in listing
    assert "declined: nothing checked" in listing
    detail = client.get(f"/w/acme/audit/runs/{declined.pk}/").content.decode()
    assert "<dt>Declined</dt>" in detail and REASON.replace("'", "&#x27;") in detail


def test_every_event_that_ends_a_run_leaves_a_status_the_chain_expects():
    from beyond_site.runs.chain import FINAL_STATUS
    from pipeline import events as ev

    assert set(FINAL_STATUS) == ev.FINAL_TYPES and FINAL_STATUS[ev.RUN_DECLINED] == Run.DECLINED
    assert Run.DECLINED in Run.FINISHED
