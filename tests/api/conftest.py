"""Fixtures of the API tests run in process (the site tests' people and workspaces, and a client per
token); the tests against a real server start their own (tests/api/live.py)."""
from __future__ import annotations

import pytest
from django.test import Client

from beyond_site.workspaces.models import Membership
from beyond_site.workspaces.tokens import create_token
from tests.site.conftest import acme, auditor, auditor_client, globex, no_background_home_left_behind, people, server_loop  # noqa: F401


def api_client(token: str | None) -> Client:
    """A client that sends `token` as its bearer (and no cookie)."""
    return Client(headers={"Authorization": f"Bearer {token}"} if token else {})


def token_for(user, **options) -> str:
    return create_token(user, options.pop("name", "test"), **options)[1]


@pytest.fixture
def clients(people, globex):
    """A client per role of acme (admin, member, auditor) and for dave, a member of globex only."""
    Membership.objects.create(user=people["stranger"], workspace=globex, role=Membership.MEMBER)
    return {role: api_client(token_for(user)) for role, user in people.items()}
