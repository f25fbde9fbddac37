"""Password reset pages exist only where mail can be sent, and are then throttled; a refused
request (403) is logged as one line, never a traceback."""
from __future__ import annotations

import logging

import pytest
from django.core import mail
from django.core.cache import cache
from django.test import Client

from tests.site.chat_support import workspace_with

pytestmark = pytest.mark.django_db

RESET_URLS = ["/accounts/password_reset/", "/accounts/password_reset/done/", "/accounts/reset/MQ/set-password/",
              "/accounts/reset/done/"]


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.mark.parametrize("url", RESET_URLS)
def test_without_mail_the_reset_pages_do_not_exist(url, settings):
    settings.EMAIL_HOST = ""
    assert Client().get(url).status_code == 404
    assert Client().post(url, {"email": "alice@example.com"}).status_code == 404
    assert mail.outbox == []


def test_with_mail_a_reset_is_sent_and_requests_are_throttled(settings, django_user_model):
    settings.EMAIL_HOST = "smtp.example.com"
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.BEYOND_PASSWORD_RESETS_PER_HOUR = 3
    django_user_model.objects.create_user("alice", "alice@example.com", "correct horse battery staple")
    client = Client()
    assert client.get("/accounts/password_reset/").status_code == 200
    for _ in range(3):
        assert client.post("/accounts/password_reset/", {"email": "alice@example.com"}).status_code == 302
    refused = client.post("/accounts/password_reset/", {"email": "alice@example.com"})
    assert refused.status_code == 429 and b"Too many password reset requests" in refused.content
    assert len(mail.outbox) == 3
    # Another address is throttled per inbox too: a fourth request for alice from elsewhere.
    elsewhere = Client(REMOTE_ADDR="198.51.100.20")
    assert elsewhere.post("/accounts/password_reset/", {"email": "Alice@Example.com"}).status_code == 429
    assert elsewhere.post("/accounts/password_reset/", {"email": "bob@example.com"}).status_code == 302


def test_a_403_is_logged_as_one_line_with_its_reason(alice, carol, caplog):
    workspace_with("acme", auditor=carol)
    client = Client()
    client.force_login(carol)
    with caplog.at_level(logging.WARNING, logger="django.request"):
        response = client.post("/w/acme/send/", {"message": "Draft a policy"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 403
    [record] = [r for r in caplog.records if r.name == "django.request"]
    assert record.exc_info is None and record.exc_text is None
    line = logging.Formatter("%(levelname)s %(name)s: %(message)s").format(record)
    assert "\n" not in line and "Traceback" not in line
    assert line.startswith("WARNING django.request: Forbidden") and "/w/acme/send/" in line
