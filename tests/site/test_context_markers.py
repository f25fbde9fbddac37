"""Markers in a memory, a Markdown file, a DOCX and a PDF reach the planner's
and every executor's HTTP request, and no verifier request.

A real run (start_run, claim_run, execute_run) with an openrouter topology over an
httpx.MockTransport that answers like OpenRouter and keeps every request body.
"""
from __future__ import annotations

import io
import json

import docx
import httpx
import pytest
from channels.db import database_sync_to_async

from beyond_site.runs.context_audit import calls_that_saw
from beyond_site.runs.models import Run
from beyond_site.runs.queue import claim_run, start_run
from beyond_site.runs.runner import execute_run
from beyond_site.workspaces import knowledge
from beyond_site.workspaces.models import Conversation, Message, Workspace
from pipeline import prompts
from tests import scripting
from tests.site.test_extraction import make_pdf

pytestmark = pytest.mark.django_db(transaction=True)

MARKERS = {"memory": "MEMORY-MARKER-4711", "markdown": "MARKDOWN-MARKER-4712",
           "docx": "DOCX-MARKER-4713", "pdf": "PDF-MARKER-4714"}
TOPOLOGY = {role: {"provider": "openrouter", "model": "z-ai/glm-5.3", "effort": "low"}
            for role in ("planner", "executor", "verifier", "summarizer")}


def docx_with(text: str) -> bytes:
    document = docx.Document()
    document.add_paragraph(f"Our supplier register: {text}.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


class FakeOpenRouter:
    """Answers each chat completion by role (told apart by the system prompt) and keeps the bodies."""

    def __init__(self, n_steps: int = 2, task: str | None = None):
        """`task`: the task the runs are given, whose asks the brief then traces (not sent back)."""
        self.bodies: dict[str, list[dict]] = {"planner": [], "executor": [], "verifier": [], "summarizer": []}
        self.replies = {
            "planner": json.dumps(scripting.brief(n_steps, task=task)),
            "executor": "## Access\n\nManagers approve access requests.",
            "verifier": json.dumps({"pass": True, "issues": []}),
            "summarizer": "A short recap.",
        }

    def role_of(self, body: dict) -> str:
        system = body["messages"][0]["content"]
        return next(role for role in self.bodies if system == prompts.load(role))

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        role = self.role_of(body)
        self.bodies[role].append(body)
        return httpx.Response(200, json={
            "id": f"gen-{role}", "model": body["model"], "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": self.replies[role]}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        })


def everything_sent(body: dict) -> str:
    return "\n".join(m["content"] for m in body["messages"])


@pytest.fixture
def workspace(monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test-dummy")
    workspace = Workspace.objects.create(slug="acme", name="Acme", topology=TOPOLOGY)
    knowledge.add_memory(workspace, f"Acme's DPO is Jane Roe ({MARKERS['memory']}).")
    knowledge.add_document(workspace, "policy.md", f"# Policy\n\nAccess is reviewed ({MARKERS['markdown']}).".encode())
    knowledge.add_document(workspace, "suppliers.docx", docx_with(MARKERS["docx"]))
    knowledge.add_document(workspace, "scope.pdf", make_pdf(f"ISMS scope {MARKERS['pdf']}"))
    return workspace


async def run_through_http(workspace, fake: FakeOpenRouter) -> Run:
    run, _ = await database_sync_to_async(start_run)(workspace, "Draft an access-control note")
    assert await database_sync_to_async(claim_run)(run.pk, "test-runner")
    status = await execute_run(run.pk, "test-runner", transport=httpx.MockTransport(fake))
    assert status == Run.COMPLETED
    return await database_sync_to_async(Run.objects.get)(pk=run.pk)


async def test_it_sends_every_marker_to_the_planner_and_each_executor_and_none_to_the_verifier(workspace):
    fake = FakeOpenRouter(n_steps=2)
    run = await run_through_http(workspace, fake)
    assert len(fake.bodies["planner"]) == 1
    assert len(fake.bodies["executor"]) == 2 and len(fake.bodies["verifier"]) == 2
    for body in fake.bodies["planner"] + fake.bodies["executor"]:
        sent = everything_sent(body)
        assert all(marker in sent for marker in MARKERS.values()), [m for m in MARKERS.values() if m not in sent]
    for body in fake.bodies["verifier"] + fake.bodies["summarizer"]:
        sent = everything_sent(body)
        assert not any(marker in sent for marker in MARKERS.values())
        assert "Workspace memories" not in sent and "Workspace file" not in sent

    saw = await database_sync_to_async(lambda: [c.role for c in calls_that_saw(run, MARKERS["pdf"])])()
    assert saw == ["planner", "executor", "executor"]


async def test_the_stable_context_is_byte_identical_across_the_executor_calls(workspace):
    fake = FakeOpenRouter(n_steps=3)
    run = await run_through_http(workspace, fake)
    stable = [body["messages"][1]["content"] for body in fake.bodies["executor"]]
    assert len(stable) == 3 and len(set(stable)) == 1
    steps = [body["messages"][2]["content"] for body in fake.bodies["executor"]]
    assert len(set(steps)) == 3  # only the per-step part, last, differs
    assert {body["session_id"] for body in fake.bodies["executor"]} == {f"beyond-run-{run.pk}"}


async def test_conversation_history_and_uploads_reach_the_planner_and_executors_never_the_verifier(workspace, alice):
    def conversation_with_upload():
        conversation = Conversation.objects.create(workspace=workspace, title="Access", created_by=alice)
        Message.objects.create(conversation=conversation, text="Earlier: HISTORY-MARKER-4715")
        knowledge.add_document(workspace, "notes.txt", b"Uploaded note UPLOAD-MARKER-4716", conversation=conversation)
        return conversation

    conversation = await database_sync_to_async(conversation_with_upload)()
    fake = FakeOpenRouter(n_steps=2)
    run, _ = await database_sync_to_async(start_run)(workspace, "Draft an access-control note", user=alice,
                                                     conversation=conversation)
    assert await database_sync_to_async(claim_run)(run.pk, "test-runner")
    assert await execute_run(run.pk, "test-runner", transport=httpx.MockTransport(fake)) == Run.COMPLETED
    markers = ["HISTORY-MARKER-4715", "UPLOAD-MARKER-4716"]
    for body in fake.bodies["planner"] + fake.bodies["executor"]:
        assert all(m in everything_sent(body) for m in markers)
    for body in fake.bodies["verifier"]:
        assert not any(m in everything_sent(body) for m in markers)
