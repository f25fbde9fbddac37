"""`beyond_demo`: a demo workspace a newcomer can try at once, created idempotently."""
from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from beyond_site.workspaces.models import Blob, Document, DocumentChunk, Membership, Memory, Workspace, WorkspaceEvent

pytestmark = pytest.mark.django_db


def demo() -> str:
    out = io.StringIO()
    call_command("beyond_demo", stdout=out)
    return out.getvalue()


def snapshot() -> dict:
    return {
        "workspaces": list(Workspace.objects.values_list("slug", "name", "enabled_frameworks", "topology")),
        "memories": list(Memory.objects.values_list("id", "text", "updated_at")),
        "documents": list(Document.objects.values_list("id", "sha256", "name")),
        "chunks": DocumentChunk.objects.count(),
        "blobs": Blob.objects.count(),
        "users": list(get_user_model().objects.values_list("username", "password")),
        "memberships": list(Membership.objects.values_list("user__username", "workspace__slug", "role")),
        "events": WorkspaceEvent.objects.count(),
    }


def test_it_creates_a_believable_demo_workspace_and_says_how_to_log_in(client, monkeypatch):
    monkeypatch.delenv("BEYOND_DEMO_PASSWORD", raising=False)
    monkeypatch.delenv("PORT", raising=False)
    out = demo()
    assert "http://127.0.0.1:8000/" in out and "'demo'" in out and "demo-beyond-2026" in out
    workspace = Workspace.objects.get(slug="demo")
    assert workspace.enabled_frameworks == ["iso27001-2022", "gdpr"]
    assert workspace.memories.count() >= 4
    document = workspace.documents.get()
    assert document.kind == "markdown" and "Access Control Policy" in document.text and document.chunks.exists()
    assert Membership.objects.get(user__username="demo", workspace=workspace).role == "admin"
    assert logs_in(client, "demo-beyond-2026")


def logs_in(client, password: str) -> bool:
    """A real login through the login page, as the person the demo prints it for would do it."""
    return client.post("/accounts/login/", {"username": "demo", "password": password}).status_code == 302


def test_running_it_twice_changes_nothing():
    demo()
    before = snapshot()
    assert "Ready: workspace demo" in demo()
    assert snapshot() == before


def test_it_takes_the_password_from_the_environment_without_printing_it(client, monkeypatch):
    monkeypatch.setenv("BEYOND_DEMO_PASSWORD", "a-private-demo-secret")
    out = demo()
    assert "a-private-demo-secret" not in out and "BEYOND_DEMO_PASSWORD" in out
    assert logs_in(client, "a-private-demo-secret")


def test_it_keeps_a_password_the_demo_user_changed(client):
    call_command("beyond_demo", stdout=io.StringIO())
    user = get_user_model().objects.get(username="demo")
    user.set_password("my-own-secret-2026")
    user.save()
    out = io.StringIO()
    call_command("beyond_demo", stdout=out)
    assert logs_in(client, "my-own-secret-2026")
    assert "demo-beyond-2026" not in out.getvalue() and "changepassword" in out.getvalue()


@pytest.mark.parametrize("args,env,url", [
    (["--port", "8080"], {}, "http://127.0.0.1:8080/"),
    ([], {"PORT": "9123"}, "http://127.0.0.1:9123/"),
    (["--host", "0.0.0.0", "--port", "8001"], {}, "http://127.0.0.1:8001/"),
    (["--host", "::1"], {"PORT": "8002"}, "http://[::1]:8002/"),
])
def test_it_prints_the_login_url_with_the_servers_port(monkeypatch, args, env, url):
    monkeypatch.delenv("PORT", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out = io.StringIO()
    call_command("beyond_demo", *args, stdout=out)
    assert f"Log in at {url} " in out.getvalue()
