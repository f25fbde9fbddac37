"""The submission and Stop read the signed-in user once per request, and still
send a visitor who is not signed in to the login page."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from beyond_site.runs.models import Run
from tests.site.chat_support import client_for, new_run, workspace_with

pytestmark = pytest.mark.django_db


@pytest.fixture
def member(alice, settings):
    settings.BEYOND_RUN_IN_PROCESS = False  # the run stays queued: only the request is measured
    workspace_with(member=alice)
    return client_for(alice)


def user_reads(queries) -> int:
    return sum('FROM "auth_user"' in q["sql"] for q in queries.captured_queries)


def test_a_submission_reads_the_user_once(member):
    with CaptureQueriesContext(connection) as queries:
        response = member.post("/w/acme/send/", {"message": "Draft a note"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and Run.objects.count() == 1
    assert user_reads(queries) == 1


def test_a_stop_reads_the_user_once(member, alice):
    run = new_run(alice.memberships.get().workspace, alice)
    with CaptureQueriesContext(connection) as queries:
        response = member.post(f"/w/acme/runs/{run.pk}/stop/", HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and "Stopping" in response.content.decode()
    assert user_reads(queries) == 1


@pytest.mark.parametrize("path", ["/w/acme/send/", "/w/acme/runs/1/stop/", "/w/acme/runs/1/again/"])
def test_a_visitor_not_signed_in_is_sent_to_log_in(member, path):
    response = client_for().post(path, {"message": "Draft a note"})
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert Run.objects.count() == 0
