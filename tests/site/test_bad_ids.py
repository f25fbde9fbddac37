"""Ids and keys that cannot be ids or keys are refused before any `int()` or query: a 404 or a 400,
never a 500 or a traceback. Ids are ASCII digits from 1 to 2^63-1 (one validator, lib/ids.py: the
URLs' `<id:...>` and the forms' `object_id`); a session key outside the session alphabet is no
session; budget limits stay within their columns. tests/site/test_bad_input_postgres.py runs this
file again on PostgreSQL, where a NUL in a query or a number over a column's range is a DataError."""
from __future__ import annotations

import logging

import pytest
from channels.testing import WebsocketCommunicator
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from beyond_site.asgi import application
from beyond_site.workspaces.models import Membership, Workspace, WorkspaceBudget
from beyond_site.workspaces.configuration import set_budget
from tests.site.chat_support import workspace_with
from tests.site.test_request_bodies import KB, call

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("queued_runs_stay_queued")]
TOO_BIG = 2**63
NOT_IDS = ["0", str(TOO_BIG), "9" * 30]


@pytest.fixture
def admin(alice, carol):
    workspace = workspace_with("acme", admin=alice)
    Membership.objects.create(user=carol, workspace=workspace, role=Membership.AUDITOR)
    client = Client(raise_request_exception=False)
    client.force_login(alice)
    return client


@pytest.fixture
def auditor(admin, carol):
    client = Client(raise_request_exception=False)
    client.force_login(carol)
    return client


GETS = ["/w/acme/c/{}/", "/w/acme/files/{}/", "/w/acme/files/{}/download/", "/w/acme/runs/{}/export.md",
        "/w/acme/calibration/{}.json", "/w/acme/calibration/{}.csv"]
AUDIT_GETS = ["/w/acme/audit/runs/{}/", "/w/acme/audit/runs/{}/trace.json", "/w/acme/audit/runs/{}/seen?q=x",
              "/w/acme/audit/runs/1/calls/{}/context/", "/w/acme/audit/runs/{}/sources/E1/"]
POSTS = ["/w/acme/c/{}/rename/", "/w/acme/c/{}/delete/", "/w/acme/attachments/{}/remove/", "/w/acme/runs/{}/stop/",
         "/w/acme/runs/{}/again/", "/w/acme/memories/{}/", "/w/acme/memories/{}/delete/", "/w/acme/files/{}/remove/",
         "/w/acme/settings/members/{}/role/", "/w/acme/settings/members/{}/remove/",
         "/w/acme/settings/invitations/{}/withdraw/", "/w/acme/calibration/{}/resume/"]


@pytest.mark.parametrize("value", NOT_IDS)
@pytest.mark.parametrize("url", GETS)
def test_an_id_in_a_page_address_that_is_no_id_is_a_404(admin, url, value):
    assert admin.get(url.format(value)).status_code == 404


@pytest.mark.parametrize("value", NOT_IDS)
@pytest.mark.parametrize("url", AUDIT_GETS)
def test_an_id_in_an_audit_address_that_is_no_id_is_a_404(auditor, url, value):
    assert auditor.get(url.format(value)).status_code == 404


@pytest.mark.parametrize("value", NOT_IDS)
@pytest.mark.parametrize("url", POSTS)
def test_an_id_in_a_form_address_that_is_no_id_is_a_404(admin, url, value):
    assert admin.post(url.format(value), {"title": "x", "text": "x", "role": "member"}).status_code == 404


def test_the_largest_id_is_an_id_that_does_not_exist(admin):
    assert admin.get(f"/w/acme/c/{TOO_BIG - 1}/").status_code == 404


@pytest.mark.parametrize("value", ["²", "0", str(TOO_BIG), "-1", "1e3"])
def test_the_conversation_list_ignores_a_current_conversation_that_is_no_id(admin, value):
    response = admin.get(f"/w/acme/conversations/?current={value}")
    assert response.status_code == 200


@pytest.mark.parametrize("value", ["²", "0", str(TOO_BIG), "-1"])
def test_the_files_form_refuses_a_target_that_is_no_id(admin, value):
    response = admin.post("/w/acme/files/add/", {"target": value, "files": SimpleUploadedFile("a.txt", b"Scope.")})
    assert response.status_code == 404


@pytest.mark.parametrize("page", ["/", "/accounts/login/", "/invitations/x/", "/w/acme/"])
@pytest.mark.parametrize("cookie", ['"\\000abcdefgh"', "abc\\000defghij", "ABCDEFGHIJKL", "a" * 200, "é" * 12])
def test_a_session_cookie_outside_the_session_alphabet_is_no_session(admin, page, cookie):
    response = Client(raise_request_exception=False, HTTP_COOKIE=f"sessionid={cookie}").get(page)
    assert response.status_code in (200, 302, 410), response.status_code


def test_a_real_session_still_signs_in(admin):
    assert admin.get("/w/acme/").status_code == 200


def test_an_anonymous_post_over_the_limit_with_a_bad_session_cookie_is_a_413(settings):
    settings.BEYOND_MAX_ANONYMOUS_REQUEST_BYTES = 64 * KB
    status, *_ = call({"Content-Length": str(65 * KB), "Cookie": 'sessionid="\\000abcdefgh"'}, [b"x" * 65 * KB])
    assert status == 413


@pytest.mark.parametrize("length", ["²".encode("latin-1"), b"+5", b"1_000"])
def test_a_content_length_that_is_no_number_is_not_a_500(settings, length):
    settings.BEYOND_MAX_ANONYMOUS_REQUEST_BYTES = 64 * KB
    status, *_ = call({"Content-Length": length}, [b"x"])
    assert status == 200


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("path", ["/ws/runs/-1/", "/ws/runs/0/", f"/ws/runs/{TOO_BIG}/", "/ws/nothing/"])
async def test_a_websocket_to_no_such_address_is_closed_without_a_traceback(path, caplog):
    comm = WebsocketCommunicator(application, path, headers=[(b"origin", b"http://localhost"),
                                                             (b"host", b"localhost")])
    with caplog.at_level(logging.ERROR):
        connected, _ = await comm.connect()
        assert connected
        assert (await comm.receive_output())["code"] == 4404
    await comm.disconnect()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize("limit, value", [
    ("max_runs_per_user_per_day", 2**31), ("max_runs_in_flight_per_user", 2**31),
    ("max_runs_in_flight_per_workspace", 10**12), ("max_cost_per_run", "100000000"),
    ("max_tokens_per_run", 2**63),
])
def test_a_budget_limit_over_its_column_is_refused_with_a_message(admin, limit, value):
    response = admin.post("/w/acme/settings/budgets/", {limit: str(value)})
    assert response.status_code == 400, response.status_code
    with pytest.raises(ValueError, match="at most"):
        set_budget(Workspace.objects.get(slug="acme"), {limit: value})
    assert WorkspaceBudget.of(Workspace.objects.get(slug="acme")).limits()[limit] is None


def test_the_largest_value_each_column_holds_is_kept(admin):
    acme = Workspace.objects.get(slug="acme")
    budget = set_budget(acme, {"max_runs_per_user_per_day": 2**31 - 1, "max_cost_per_run": "99999999.9999"})
    budget.refresh_from_db()
    assert budget.max_runs_per_user_per_day == 2**31 - 1
