"""Model endpoints a workspace chose are checked when the topology is saved and again at every
connection of its runs (so a DNS answer that changed since cannot reach this machine); the
operator's own endpoints, and topologies the operator gives `beyond_run`, may be local."""
from __future__ import annotations

import asyncio
import io
import json

import pytest
from django.core.management import call_command

from beyond_site.runs.models import Run
from beyond_site.runs.queue import claim_run, start_run
from beyond_site.runs.runner import execute_run
from beyond_site.workspaces import configuration
from beyond_site.workspaces.models import Workspace
from pipeline.topology import ROLES, TopologyError
from tests import scripting
from tests.pipeline.loopback import LoopbackServer, json_answer

pytestmark = pytest.mark.django_db(transaction=True)

REPLIES = {"planner": json.dumps(scripting.brief(1)), "executor": "A draft.", "verifier": scripting.PASS,
           "summarizer": "A recap."}


def model_endpoint(body, headers):
    """An OpenAI-compatible endpoint that plays every role; the model names the role."""
    return json_answer(200, {"model": body["model"], "choices": [{
        "index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": REPLIES[body["model"]]}}]})


def topology(base_url: str) -> dict:
    return {role: {"provider": "openai", "model": role, "base_url": base_url, "retries": 0} for role in ROLES}


def run_in(workspace) -> Run:
    run, _ = start_run(workspace, "Draft an access-control note")
    assert claim_run(run.pk, "runner")
    asyncio.run(execute_run(run.pk, "runner"))
    return Run.objects.get(pk=run.pk)


@pytest.fixture
def endpoint():
    with LoopbackServer(model_endpoint) as server:
        yield server


def test_a_workspace_endpoint_that_now_resolves_to_this_machine_is_refused_at_connection(endpoint, settings):
    settings.BEYOND_ALLOWED_BASE_URLS = ""
    # Saved when the name still answered with a public address: the record holds the name only.
    url = endpoint.base_url.replace("127.0.0.1", "localhost")
    workspace = Workspace.objects.create(slug="acme", name="Acme", topology=topology(url))
    run = run_in(workspace)
    assert run.status == Run.FAILED
    assert "refused by the address policy" in run.halt_reason and "loopback" in run.halt_reason
    assert endpoint.bodies == []  # nothing reached the endpoint
    [call] = run.model_calls.all()
    assert call.transport_retries == 0 and call.error.startswith("address_refused")


def test_an_endpoint_the_operator_allowed_is_reached(endpoint, settings):
    settings.BEYOND_ALLOWED_BASE_URLS = endpoint.base_url
    workspace = Workspace.objects.create(slug="acme", name="Acme", topology=topology(endpoint.base_url))
    run = run_in(workspace)
    assert run.status == Run.COMPLETED and len(endpoint.bodies) == 4


def test_the_operators_openai_base_url_is_its_own_endpoint(endpoint, settings, monkeypatch):
    settings.BEYOND_ALLOWED_BASE_URLS = ""
    monkeypatch.setenv("OPENAI_BASE_URL", f"https://api.openai.com/v1,{endpoint.base_url}")
    workspace = Workspace.objects.create(slug="acme", name="Acme", topology=topology(endpoint.base_url))
    assert run_in(workspace).status == Run.COMPLETED


def test_a_topology_the_operator_gives_beyond_run_may_be_local(endpoint, settings):
    settings.BEYOND_ALLOWED_BASE_URLS = ""
    Workspace.objects.create(slug="acme", name="Acme")
    out = io.StringIO()
    call_command("beyond_run", "--workspace", "acme", "--task", "Draft a note",
                 "--topology", json.dumps(topology(endpoint.base_url)), "--json", stdout=out)
    assert json.loads(out.getvalue())["run"]["status"] == "completed"


@pytest.mark.parametrize("url, reason", [
    ("http://[64:ff9b::7f00:1]:8111/v1", "nat64 of 127.0.0.1: loopback"),
    ("http://[::ffff:10.0.0.7]/v1", "ipv4_mapped of 10.0.0.7: private"),
    ("http://2130706433:8111/v1", "loopback"),
])
def test_encoded_internal_addresses_are_refused_when_saved(url, reason, settings):
    settings.BEYOND_ALLOWED_BASE_URLS = ""
    workspace = Workspace.objects.create(slug="acme", name="Acme")
    with pytest.raises(TopologyError) as caught:
        configuration.set_topology(workspace, topology(url))
    assert reason in str(caught.value) and "BEYOND_ALLOWED_BASE_URLS" in str(caught.value)
    workspace.refresh_from_db()
    assert workspace.topology is None


def test_a_malformed_allow_list_refuses_with_its_reason_rather_than_failing(settings):
    settings.BEYOND_ALLOWED_BASE_URLS = "ftp://llm.internal"
    workspace = Workspace.objects.create(slug="acme", name="Acme")
    with pytest.raises(TopologyError, match="allow list cannot be read"):
        configuration.set_topology(workspace, topology("http://10.0.0.7/v1"))
