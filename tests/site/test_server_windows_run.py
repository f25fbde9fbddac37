"""A run asks its models' servers their windows and fits its context to what they say
(pipeline/window.py): a vLLM server that says 8,192 tokens gets no planner or executor request over
it, with every framework enabled and a large workspace, and the next run asks again no sooner than
WINDOW_KEPT_S."""
from __future__ import annotations


import httpx
import pytest
from channels.db import database_sync_to_async

from beyond_site.runs.models import Run
from beyond_site.runs.queue import claim_run, start_run
from beyond_site.runs.runner import execute_run
from beyond_site.workspaces import knowledge
from beyond_site.workspaces.chunking import estimate_tokens
from beyond_site.workspaces.frameworks import available_packs
from beyond_site.workspaces.models import Workspace
from pipeline import window
from tests.site.context_support import ON_TOPIC, paragraphs
from tests.site.test_context_markers import FakeOpenRouter, everything_sent

pytestmark = pytest.mark.django_db(transaction=True)

WINDOW, REPLY = 8192, 600
MODEL = {"provider": "openai", "model": "small-model", "base_url": "http://models.test/v1", "profile": "vllm",
         "max_tokens": REPLY}


class VLLM(FakeOpenRouter):
    """A vLLM server double: /v1/models says the window; chat completions answer by role."""

    def __init__(self):
        super().__init__(n_steps=2)
        self.listed = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/models":
            self.listed += 1
            return httpx.Response(200, json={"object": "list", "data": [
                {"id": "small-model", "object": "model", "owned_by": "vllm", "max_model_len": WINDOW}]})
        return super().__call__(request)


@pytest.fixture
def workspace():
    window._said.clear()
    topology = {"planner": MODEL, "executor": MODEL, "verifier": {"provider": "offline"},
                "summarizer": {"provider": "offline"}}
    workspace = Workspace.objects.create(slug="acme", name="Acme", topology=topology,
                                         enabled_frameworks=list(available_packs()))
    for n in range(4):
        knowledge.add_document(workspace, f"backups-{n}.md", paragraphs(ON_TOPIC, 60, seed=n).encode())
    yield workspace
    window._said.clear()


async def one_run(workspace, server) -> Run:
    run, _ = await database_sync_to_async(start_run)(workspace, "Draft a backup and restore procedure")
    assert await database_sync_to_async(claim_run)(run.pk, "test-runner")
    assert await execute_run(run.pk, "test-runner", transport=httpx.MockTransport(server)) == Run.COMPLETED
    return run


async def test_the_context_fits_the_window_the_server_says(workspace):
    server = VLLM()
    await one_run(workspace, server)
    assert server.listed == 1
    for role in ("planner", "executor"):
        for body in server.bodies[role]:
            assert estimate_tokens(everything_sent(body)) + REPLY <= WINDOW, role
    planner = everything_sent(server.bodies["planner"][0])
    assert "model takes 8,192 tokens in all" in planner     # the context's notes say why it was cut

    second = VLLM()
    await one_run(workspace, second)
    assert second.listed == 0                                # said a moment ago: not asked again
    assert "model takes 8,192 tokens in all" in everything_sent(second.bodies["planner"][0])


async def test_without_the_servers_word_the_same_run_would_not_fit(workspace):
    """The check above means something: the generic profile, which knows no window, sends it all."""
    generic = {**MODEL, "profile": "generic"}
    workspace.topology = {**workspace.topology, "planner": generic, "executor": generic}
    await database_sync_to_async(workspace.save)(update_fields=["topology"])
    server = VLLM()
    await one_run(workspace, server)
    assert server.listed == 0
    assert estimate_tokens(everything_sent(server.bodies["planner"][0])) + REPLY > WINDOW
