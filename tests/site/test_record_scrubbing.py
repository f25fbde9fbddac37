"""Secrets and server paths never reach a page, a trace or an export.

An endpoint that echoes the API key it was sent (upper-cased and reversed too) in every role's
reply, through a whole run: the chat's run view, the run trace, the auditors' pages and exports,
the Markdown and DOCX downloads and the stored contexts hold none of it. A scripted run, whose
replies no provider redacts, is scrubbed by the recorder all the same; and a scripted provider's
file is named by its file name only.
"""
from __future__ import annotations

import asyncio
import io
import json
import zipfile

import pytest
from django.test import Client

from beyond_site.chat.fragments import snapshot
from beyond_site.runs.contexts import context_messages
from beyond_site.runs.models import ContextRecord, Run
from beyond_site.runs.selectors import run_trace
from beyond_site.runs.queue import claim_run, start_run
from beyond_site.runs.runner import execute_run
from beyond_site.workspaces.models import Membership, Workspace
from pipeline.topology import ROLES, parse_shorthand
from tests import scripting
from tests.pipeline.loopback import LoopbackServer, json_answer
from tests.scripting import PASS

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "sk-proj-EchoedKey0123456789abcdef"
FORMS = (KEY, KEY.upper(), KEY.lower(), KEY[::-1], KEY[::-1].upper())


def echoing(body, headers):
    """Every role's reply carries the key it was sent, in three forms."""
    key = headers.get("Authorization", "").removeprefix("Bearer ")
    echo = f"{key} {key.upper()} {key[::-1]}"
    role = body["model"]
    brief = {**scripting.brief(2), "judgments": [f"The key is {echo}."], "task": f"Task {key.upper()}"}
    content = {"planner": json.dumps(brief), "executor": f"Draft with the key {echo}.",
               "verifier": PASS, "summarizer": f"Recap: {echo}"}[role]
    return json_answer(200, {"model": f"served-{key}", "choices": [{
        "index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}]})


def everything_shown(run: Run, client: Client) -> str:
    """Every page, trace and export of the run, and every stored context, as text."""
    slug = run.workspace.slug
    parts = [snapshot(run.pk)[0], json.dumps(run_trace(run))]
    for url in (f"/w/{slug}/c/{run.conversation_id}/", f"/w/{slug}/audit/runs/{run.pk}/",
                f"/w/{slug}/audit/runs/{run.pk}/trace.json", f"/w/{slug}/audit/export.json",
                f"/w/{slug}/runs/{run.pk}/export.md"):
        response = client.get(url)
        assert response.status_code == 200, url
        parts.append(response.content.decode())
    docx = client.get(f"/w/{slug}/runs/{run.pk}/export.docx").content
    with zipfile.ZipFile(io.BytesIO(docx)) as archive:
        parts += [archive.read(name).decode("utf-8", "replace") for name in archive.namelist()]
    for call in run.model_calls.exclude(context=None):
        parts.append(json.dumps(context_messages(call.context)))
        parts.append(f"{call.model_served} {call.error}")
    return "\n".join(parts)


def reader(workspace, alice) -> Client:
    Membership.objects.create(user=alice, workspace=workspace, role=Membership.MEMBER)
    client = Client()
    client.force_login(alice)
    return client


def test_an_endpoint_that_echoes_the_key_gets_it_nowhere(alice, settings, monkeypatch):
    with LoopbackServer(echoing) as server:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)  # the operator's endpoint: the key is sent
        settings.BEYOND_RUN_IN_PROCESS = False
        topology = {role: {"provider": "openai", "model": role, "base_url": server.base_url} for role in ROLES}
        workspace = Workspace.objects.create(slug="acme", name="Acme", topology=topology)
        run, _ = start_run(workspace, "Draft an access-control note", user=alice)
        claim_run(run.pk, "runner")
        asyncio.run(execute_run(run.pk, "runner"))
    assert server.headers[0]["Authorization"] == f"Bearer {KEY}"  # sent, and echoed back
    run.refresh_from_db()
    assert run.status == Run.COMPLETED
    shown = everything_shown(run, reader(workspace, alice))
    assert "[redacted]" in shown and "Draft with the key" in shown
    for form in FORMS:
        assert form not in shown


def test_a_scripted_reply_echoing_a_secret_is_scrubbed_by_the_recorder(alice, tmp_path, settings, monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
    settings.BEYOND_RUN_IN_PROCESS = False
    echo = f"{KEY} {KEY.upper()} {KEY[::-1]} {settings.SECRET_KEY}"
    brief = {**scripting.brief(1), "judgments": [f"Key: {echo}"]}
    path = scripting.write(tmp_path, scripting.script(
        {1: {"executor": [f"Draft {echo}"], "verifier": [PASS]}}, planner=[json.dumps(brief)],
        summarizer=[f"Recap {echo}"]))
    workspace = Workspace.objects.create(slug="acme", name="Acme")
    run, _ = start_run(workspace, "Draft a note", user=alice, topology=parse_shorthand(f"scripted:{path}"))
    claim_run(run.pk, "runner")
    asyncio.run(execute_run(run.pk, "runner"))
    run.refresh_from_db()
    assert run.status == Run.COMPLETED
    shown = everything_shown(run, reader(workspace, alice))
    assert "Draft [redacted]" in shown
    for form in (*FORMS, settings.SECRET_KEY):
        assert form not in shown


def test_members_and_auditors_never_see_a_scripted_files_server_path(alice, tmp_path, settings):
    settings.BEYOND_RUN_IN_PROCESS = False
    folder = tmp_path / "secret-server-folder"
    folder.mkdir()
    path = scripting.write(folder, scripting.script({1: {"executor": ["x"], "verifier": [PASS]}}), "fixture.json")
    workspace = Workspace.objects.create(slug="acme", name="Acme")
    run, _ = start_run(workspace, "Draft a note", user=alice, topology=parse_shorthand(f"scripted:{path}"))
    claim_run(run.pk, "runner")
    asyncio.run(execute_run(run.pk, "runner"))
    missing = folder / "gone.json"
    failed, _ = start_run(workspace, "Again", user=alice, topology=parse_shorthand(f"scripted:{missing}"))
    claim_run(failed.pk, "runner")
    asyncio.run(execute_run(failed.pk, "runner"))
    failed.refresh_from_db()
    assert failed.status == Run.FAILED and "gone.json does not exist" in failed.halt_reason
    client = reader(workspace, alice)
    for shown_run in (Run.objects.get(pk=run.pk), failed):
        shown = everything_shown(shown_run, client)
        assert "secret-server-folder" not in shown and str(tmp_path) not in shown
    assert run_trace(Run.objects.get(pk=run.pk))["run"]["topology"]["planner"]["path"] == "fixture.json"
    assert all("secret-server-folder" not in json.dumps(c.parts) for c in ContextRecord.objects.all())


def test_a_calls_messages_are_scrubbed_section_by_section_and_a_repeated_section_once(monkeypatch):
    from beyond_site.runs import scrubbing
    from pipeline.providers.base import Message

    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
    scrubber = scrubbing.Scrubber({"executor": {"provider": "scripted", "path": "/srv/beyond/replies.json"}})
    context = f"# Workspace\n\nOur key is {KEY[::-1]}.\n\n# File: notes\n\nSee /srv/beyond/replies.json.\n\n# End"
    scrubbed = [scrubber.messages((Message("system", "Render one step."), Message("user", f"Step {n}: {KEY}\n\n{context}")))
                for n in (1, 2)]
    for n, (system, user) in enumerate(scrubbed, start=1):
        assert system.content == "Render one step."
        assert user.content == (f"Step {n}: [redacted]\n\n# Workspace\n\nOur key is [redacted].\n\n# File: notes\n\n"
                                "See replies.json.\n\n# End")
    calls = []
    monkeypatch.setattr(scrubber, "text", lambda text: calls.append(text) or text)
    scrubber.messages((Message("user", f"Step 3.\n\n{context}"),))
    assert calls == ["Step 3."]  # the context's sections were scrubbed already

    monkeypatch.setattr(scrubbing, "REMEMBERED_CHARS", 20)  # what it remembers is bounded
    scrubber.messages((Message("user", "x" * 15 + "\n\n# " + "y" * 15),))
    assert scrubber._done_chars <= 20
