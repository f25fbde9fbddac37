"""Sessions are Django's cached database sessions: a signed-in page reads its session from the
cache, a logout ends the session wherever its cookie is replayed, and a session the cache has
lost is read again from the database."""
from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from tests.site.chat_support import workspace_with

pytestmark = pytest.mark.django_db

RIGHT = "correct horse battery staple"


@pytest.fixture
def alice_client(alice) -> Client:
    """Alice, a member of acme, signed in through the login page (so her session is stored as a
    login stores it, cache and database)."""
    workspace_with("acme", member=alice)
    client = Client()
    assert client.post("/accounts/login/", {"username": "alice", "password": RIGHT}).status_code == 302
    return client


def session_reads(queries) -> list[str]:
    return [q["sql"] for q in queries if "django_session" in q["sql"]]


def test_a_signed_in_page_reads_its_session_from_the_cache_not_the_database(alice_client, alice):
    with CaptureQueriesContext(connection) as queries:
        page = alice_client.get("/w/acme/")
    assert page.status_code == 200 and page.context["user"] == alice
    assert session_reads(queries.captured_queries) == []


def test_a_session_the_cache_lost_is_read_from_the_database(alice_client, alice):
    cache.clear()
    with CaptureQueriesContext(connection) as queries:
        page = alice_client.get("/w/acme/")
    assert page.status_code == 200 and page.context["user"] == alice
    assert len(session_reads(queries.captured_queries)) == 1


def test_after_a_logout_the_same_cookie_is_nobody(alice_client):
    replayed = Client()
    replayed.cookies["sessionid"] = alice_client.cookies["sessionid"].value
    assert replayed.get("/w/acme/").status_code == 200
    assert alice_client.post("/accounts/logout/").status_code == 302
    refused = replayed.get("/w/acme/")
    assert refused.status_code == 302 and refused["Location"].startswith("/accounts/login/")
