"""Who may open the audit pages, and how: members of the workspace only, GET only."""
from __future__ import annotations

import pytest

from beyond_site.runs.models import ModelCall, Run
from beyond_site.workspaces.models import Membership
from tests.scripting import PASS
from tests.site.audit_support import run_task

pytestmark = pytest.mark.django_db(transaction=True)


def audit_urls(slug: str, run_id: int, call_id: int) -> list[str]:
    base = f"/w/{slug}/audit/"
    return [
        base,
        f"{base}export.json",
        f"{base}runs/{run_id}/",
        f"{base}runs/{run_id}/trace.json",
        f"{base}runs/{run_id}/seen?q=Paris",
        f"{base}runs/{run_id}/calls/{call_id}/context/",
    ]


@pytest.fixture
def acme_run(acme, tmp_path) -> Run:
    trace = run_task(tmp_path, {1: {"executor": ["Only step."], "verifier": [PASS]}})
    return Run.objects.get(pk=trace["run"]["id"])


def first_call(run: Run) -> ModelCall:
    return run.model_calls.order_by("id").first()


def test_it_gives_a_non_member_404_on_every_url(client, bob, acme_run):
    client.force_login(bob)
    for url in audit_urls("acme", acme_run.pk, first_call(acme_run).pk):
        assert client.get(url).status_code == 404, url


def test_it_gives_404_for_an_unknown_workspace(auditor_client, acme_run):
    for url in audit_urls("nowhere", acme_run.pk, first_call(acme_run).pk):
        assert auditor_client.get(url).status_code == 404, url


def test_it_sends_an_anonymous_visitor_to_the_login_page(client, acme_run):
    for url in audit_urls("acme", acme_run.pk, first_call(acme_run).pk):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/accounts/login/")


def test_it_gives_404_for_a_run_of_another_workspace(auditor_client, globex, tmp_path):
    trace = run_task(tmp_path, {1: {"executor": ["Globex secret plan."], "verifier": [PASS]}}, slug="globex")
    other = Run.objects.get(pk=trace["run"]["id"])
    for url in audit_urls("acme", other.pk, first_call(other).pk)[2:]:
        response = auditor_client.get(url)
        assert response.status_code == 404, url
        assert b"Globex secret plan." not in response.content


def test_it_gives_404_for_a_call_of_another_run(auditor_client, acme_run, tmp_path):
    second = run_task(tmp_path, {1: {"executor": ["Second run."], "verifier": [PASS]}}, task="Another task")
    other_call = ModelCall.objects.filter(run_id=second["run"]["id"]).first()
    url = f"/w/acme/audit/runs/{acme_run.pk}/calls/{other_call.pk}/context/"
    assert auditor_client.get(url).status_code == 404


def test_it_does_not_list_another_workspace_s_runs(auditor_client, globex, acme_run, tmp_path):
    run_task(tmp_path, {1: {"executor": ["x"], "verifier": [PASS]}}, slug="globex", task="Globex only task")
    page = auditor_client.get("/w/acme/audit/").content.decode()
    assert "Globex only task" not in page
    exported = auditor_client.get("/w/acme/audit/export.json").json()
    assert [t["run"]["id"] for t in exported] == [acme_run.pk]


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_it_refuses_anything_but_get_with_405(auditor_client, acme_run, method):
    for url in audit_urls("acme", acme_run.pk, first_call(acme_run).pk):
        assert getattr(auditor_client, method)(url).status_code == 405, url


@pytest.mark.parametrize("role", [Membership.ADMIN, Membership.MEMBER, Membership.AUDITOR])
def test_it_lets_every_role_of_the_workspace_read(client, bob, acme, acme_run, role):
    Membership.objects.create(user=bob, workspace=acme, role=role)
    client.force_login(bob)
    for url in audit_urls("acme", acme_run.pk, first_call(acme_run).pk):
        assert client.get(url).status_code == 200, url
