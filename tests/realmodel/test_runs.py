"""Whole runs on a real model (Gemma 3 270M behind llama-cpp-python's server, `make model-server`).

A 270M model writes poor documents and is a poor verifier; these tests hold the product's promises
whatever it writes: nothing uninspected is released, a reply that does not parse is asked again and
then halts, a truncated draft is marked, and every call is recorded with the server's own token
counts. They never look at the model's wording (tests/realmodel/rules.py)."""
from __future__ import annotations

import asyncio
import io
import json

import pytest
from channels.db import database_sync_to_async
from django.core.management import call_command

from beyond_site.runs.contexts import context_messages
from beyond_site.runs.models import ModelCall, Run, Step
from beyond_site.runs.queue import claim_run, request_stop, run_again, start_run
from beyond_site.runs.runner import execute_run
from beyond_site.runs.selectors import run_trace
from beyond_site.workspaces import configuration
from pipeline import events as ev
from tests import scripting
from tests.pipeline.loopback_web import LoopbackSite, Route
from tests.realmodel.rules import (MODEL, check_call_records, check_release_rules, finished, role,
                                   topology)

pytestmark = pytest.mark.django_db(transaction=True)

ROLES = {"planner", "executor", "verifier", "summarizer"}
TASK = "Draft a short access-control note for a ten-person office, in two or three steps."


def beyond_run(*args: str) -> dict:
    out = io.StringIO()
    call_command("beyond_run", "--workspace", "acme", "--json", *args, stdout=out)
    return json.loads(out.getvalue())


def test_a_task_and_its_follow_up_on_all_four_roles(workspace, model_server):
    first = finished(beyond_run("--task", TASK, "--topology", json.dumps(topology(model_server))))
    check_release_rules(first)
    calls = check_call_records(first["run"]["id"], roles=ROLES)
    assert {"planner"} <= {c.role for c in calls}
    if first["brief"] and first["brief"]["steps"]:
        # A brief with steps: each one was rendered and inspected by the model before anything was released.
        assert {"executor", "verifier"} <= {c.role for c in calls}

    follow = finished(beyond_run("--task", "Add a line on who approves new accounts.",
                                 "--follow-up", str(first["run"]["id"]),
                                 "--topology", json.dumps(topology(model_server))))
    assert follow["run"]["conversation"] == first["run"]["conversation"]
    check_release_rules(follow)
    check_call_records(follow["run"]["id"], roles=ROLES)


async def wait_for(predicate, timeout: float):
    async with asyncio.timeout(timeout):
        while not await database_sync_to_async(predicate)():
            await asyncio.sleep(0.1)


async def test_stop_mid_step_then_run_again_from_the_workspace_settings(workspace, alice, model_server, settings,
                                                                          tmp_path):
    # The workspace's stored topology, its runs connecting through the guarded transport to the
    # endpoint the operator allows, as a topology saved from the Settings page does. The planner
    # is scripted (a three-step brief; a scripted provider is the operator's to set, it reads a
    # file on the server) so that the run always reaches a step: the executor, the verifier and
    # the summarizer are the real model.
    settings.BEYOND_ALLOWED_BASE_URLS = model_server
    # Two a run: the requirement trace sends back once a brief that leaves out an ask of the task (its
    # "ten-person office"), and the same brief is then taken, the ask listed as not met.
    path = scripting.write(tmp_path, {"planner": [json.dumps(scripting.brief(3))] * 4})  # and Run again
    roles = topology(model_server, planner={"provider": "scripted", "path": str(path)})
    await database_sync_to_async(configuration.set_topology)(workspace, roles, alice, operator=True)

    run, _ = await database_sync_to_async(start_run)(workspace, TASK, user=alice)
    assert await database_sync_to_async(claim_run)(run.pk, "runner")
    execution = asyncio.create_task(execute_run(run.pk, "runner"))
    # Mid-step: the brief is in, and a step is being rendered by the model.
    await wait_for(lambda: execution.done() or run.events.filter(type=ev.STEP_RENDERING).exists(), timeout=300)
    assert not execution.done()  # three steps on the model take minutes; the first has just begun
    released_at_stop = await database_sync_to_async(Step.objects.filter(run=run, status=Step.RELEASED).count)()
    assert await database_sync_to_async(request_stop)(run.pk, alice)
    async with asyncio.timeout(120):
        status = await execution

    def check_stopped():
        trace = run_trace(Run.objects.get(pk=run.pk))
        assert status == Run.CANCELLED == trace["run"]["status"]
        # Nothing was released after the click, and the step the model was on never was.
        released = [s["index"] for s in trace["steps"] if s["status"] == "released"]
        assert len(released) == released_at_stop < 3
        assert trace["summary"] is None and trace["events"][-1]["type"] == ev.RUN_CANCELLED
        calls = list(ModelCall.objects.filter(run=run))
        assert "executor" in {c.role for c in calls} and "summarizer" not in {c.role for c in calls}
        # Calls in flight at the click were cancelled, and recorded as such.
        for call in calls:
            if call.error:
                assert call.error.startswith("cancelled") or call.role == "verifier", (call.role, call.error)
        if any(c.provider == "openai" and not c.error for c in calls):  # a model call answered before the click
            check_call_records(run.pk, roles=ROLES)
        check_release_rules(trace)

    await database_sync_to_async(check_stopped)()
    again, created = await database_sync_to_async(lambda: run_again(Run.objects.get(pk=run.pk), user=alice))()
    assert created and again.retry_of_id == run.pk and again.conversation_id == run.conversation_id
    assert await database_sync_to_async(claim_run)(again.pk, "runner")
    await execute_run(again.pk, "runner")

    def check_again():
        # The same brief, drafted and inspected by the model from the start: every step is
        # released, or the run halts at the first that is not.
        trace = finished(run_trace(Run.objects.get(pk=again.pk)), statuses={"completed", "halted"})
        check_release_rules(trace)
        calls = check_call_records(again.pk, roles=ROLES)
        assert {"executor", "verifier"} <= {c.role for c in calls if c.provider == "openai"}

    await database_sync_to_async(check_again)()


PAGE = ("<html><head><title>Access policy</title></head><body><main><h1>Access policy</h1>"
        "<p>Accounts are approved by the office manager and reviewed every quarter. Leavers lose access "
        "on their last day, and shared passwords are not allowed anywhere in the office.</p></main></body></html>")


def test_a_research_run_from_a_loopback_page_server(workspace, model_server, monkeypatch):
    with LoopbackSite() as site, LoopbackSite() as search:
        site.routes.update({"/robots.txt": Route(b"User-agent: *\nAllow: /\n", content_type="text/plain"),
                            "/policy": Route(PAGE.encode())})
        search.routes["/search"] = lambda query: Route(json.dumps({"results": [
            {"url": site.url("/policy"), "title": "Access policy", "content": "snippet"}]}).encode(),
            content_type="application/json")
        monkeypatch.setenv("BEYOND_SEARCH", f"searxng:{search.origin}")
        monkeypatch.setenv("BEYOND_RESEARCH_ALLOW_HOSTS", site.host_port)
        trace = finished(beyond_run("--task", TASK, "--research", "--topology", json.dumps(topology(model_server))))
    assert trace["run"]["research"] is True
    check_release_rules(trace)
    check_call_records(trace["run"]["id"], roles=ROLES)
    for item in trace["evidence"]:  # evidence is only ever what the page server served
        assert item["url"] == site.url("/policy") and item["sha256"]


def test_the_verifier_alone_behind_a_scripted_planner_brief(workspace, model_server, tmp_path):
    brief = scripting.brief(3)
    path = scripting.write(tmp_path, {
        "planner": [json.dumps(brief)],
        "steps": {
            "1": {"executor": ["Access to systems is approved by each team's manager.",
                               "Managers approve access to systems for their team."]},
            # Contradicts the judgment "Scope: the Paris office only."
            "2": {"executor": ["This note applies to every office worldwide.",
                               "This note applies to all offices in every country."]},
            # Cites a control the brief does not approve.
            "3": {"executor": ["Access reviews follow ISO/IEC 27001:2022 A.8.99.",
                               "Access reviews follow ISO/IEC 27001:2022 A.8.99 each quarter."]},
        },
        "summarizer": ["A short recap."],
    })
    scripted = {"provider": "scripted", "path": str(path)}
    roles = {"planner": scripted, "executor": scripted, "summarizer": scripted, "verifier": role(model_server, "verifier")}
    trace = finished(beyond_run("--task", "Draft an access-control note", "--topology", json.dumps(roles)),
                     statuses={"completed", "halted"})
    check_release_rules(trace)
    calls = check_call_records(trace["run"]["id"], roles=ROLES)
    verifier_calls = [c for c in calls if c.role == "verifier"]
    assert verifier_calls and all(c.model == MODEL for c in verifier_calls)
    # The invented control is the citation gate's to catch, whatever the model said: never passed.
    assert all(s["badge"] != "passed" for s in trace["steps"] if s["index"] == 3)


@pytest.mark.parametrize("window", [None, 4096])
def test_with_every_framework_enabled_no_request_goes_over_the_models_window(workspace, model_server, window):
    """make model-server's window (8,192 tokens, the llama-cpp-python profile's), or a topology's
    smaller `context_tokens`: the context is fitted to it and no request is refused for its length."""
    from beyond_site.workspaces import knowledge
    from beyond_site.workspaces.frameworks import available_packs

    workspace.enabled_frameworks = list(available_packs())
    workspace.save(update_fields=["enabled_frameworks"])
    knowledge.add_memory(workspace, "Acme is a 20-person accounting firm with one office in Leeds.")
    policy = "\n\n".join(f"Section {n}. Access to client files is granted by the office manager on request, "
                         f"reviewed every quarter, and removed on the day a person leaves." for n in range(400))
    knowledge.add_document(workspace, "access-policy.md", policy.encode())
    extra = {} if window is None else {"context_tokens": window}
    topo = topology(model_server, planner=role(model_server, "planner", **extra),
                    executor=role(model_server, "executor", **extra))
    trace = finished(beyond_run("--task", "Draft a short ISO/IEC 27001:2022 access control policy for a 20-person "
                                "company", "--topology", json.dumps(topo)))
    check_release_rules(trace)
    planner = ModelCall.objects.filter(run_id=trace["run"]["id"], role="planner").select_related("context").first()
    assert "context fitted to" in "\n".join(m["content"] for m in context_messages(planner.context))
    limit = window or 8192
    for call in ModelCall.objects.filter(run_id=trace["run"]["id"]):
        assert not (call.error and "context" in call.error), call.error
        if call.input_tokens is not None and call.role in ("planner", "executor"):
            assert call.input_tokens + topo[call.role]["max_tokens"] <= limit, (call.role, call.input_tokens)
