"""The Tokens page (docs/api.md, "Tokens"): a token is shown once, stored as a fingerprint, listed with
its reach, state and last use, and revoked at once; each person sees and revokes only their own."""
from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from beyond_site.workspaces import tokens
from beyond_site.workspaces.models import ApiToken, WorkspaceEvent

pytestmark = pytest.mark.django_db

SECRET = re.compile(r'value="(byd_[^"]+)"')


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_new_token_is_shown_once_and_kept_only_as_a_fingerprint(people, acme):
    alice = people["admin"]
    page = signed_in(alice)
    made = page.post(reverse("api_tokens"), {"name": "GRC sync", "days": 30, "read_only": "on",
                                             "workspaces": [acme.pk]}, follow=True)
    assert made.redirect_chain == [(reverse("api_tokens"), 302)]  # a reload makes no second token
    assert made["Cache-Control"].startswith("max-age=0")
    secret = SECRET.search(made.content.decode()).group(1)
    row = ApiToken.objects.get(user=alice)
    assert secret not in str(ApiToken.objects.filter(pk=row.pk).values().get())  # no column holds it
    assert secret not in str(dict(page.session))  # nor the session, once shown
    assert tokens.authenticate(secret) == row and row.read_only
    assert list(tokens.reach(row)) == [acme]

    again = page.get(reverse("api_tokens")).content.decode()
    assert secret not in again and "GRC sync" in again and "read-only" in again and "never" in again
    assert WorkspaceEvent.objects.filter(workspace=acme, action="api_token_created").count() == 1


def test_a_revoked_token_stops_at_once_and_the_change_log_says_so(people, acme):
    alice = people["admin"]
    row, secret = tokens.create_token(alice, "CI export")
    page = signed_in(alice)
    assert page.post(reverse("api_token_revoke", args=[row.pk])).status_code == 302
    assert tokens.authenticate(secret) is None
    listed = page.get(reverse("api_tokens")).content.decode()
    assert 'data-state="revoked"' in listed and 'class="danger">Revoke' not in listed
    assert WorkspaceEvent.objects.filter(workspace=acme, action="api_token_revoked").exists()


def test_another_persons_token_is_not_found_and_stays_live(people):
    row, secret = tokens.create_token(people["admin"], "Evidence pipeline")
    bob = signed_in(people["member"])
    assert bob.post(reverse("api_token_revoke", args=[row.pk])).status_code == 404
    assert "Evidence pipeline" not in bob.get(reverse("api_tokens")).content.decode()
    assert tokens.authenticate(secret) == row


def test_bad_input_is_refused_with_the_reason_and_makes_nothing(people, globex):
    page = signed_in(people["member"])  # bob is no member of Globex
    for form in ({"name": "", "days": 30}, {"name": "x", "days": 0}, {"name": "x", "days": 366},
                 {"name": "x", "days": 30, "workspaces": [globex.pk]}):
        answer = page.post(reverse("api_tokens"), form)
        assert answer.status_code == 400 and 'class="settings-error"' in answer.content.decode(), form
    assert page.post(reverse("api_tokens"), {"name": "a\x00b", "days": 30}).status_code == 400
    assert not ApiToken.objects.exists()


def test_the_page_needs_a_login():
    answer = Client().get(reverse("api_tokens"))
    assert answer.status_code == 302 and "/accounts/login/" in answer["Location"]
