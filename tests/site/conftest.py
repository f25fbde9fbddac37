"""Fixtures shared by the site tests: two tenants, and an auditor of the first."""
import pytest

from beyond_site.workspaces.models import Membership, Workspace


@pytest.fixture
def acme():
    return Workspace.objects.create(slug="acme", name="Acme")


@pytest.fixture
def globex():
    return Workspace.objects.create(slug="globex", name="Globex")


@pytest.fixture
def workspace(acme):
    """The workspace a test works in (files needing memories or documents in it override this)."""
    return acme


@pytest.fixture
def auditor(alice, acme):
    """alice, auditor of acme (and of nothing else)."""
    Membership.objects.create(user=alice, workspace=acme, role=Membership.AUDITOR)
    return alice


@pytest.fixture
def auditor_client(client, auditor):
    client.force_login(auditor)
    return client


@pytest.fixture
def people(acme, alice, bob, carol, dave):
    """alice admin, bob member, carol auditor of acme; dave is no member."""
    for user, role in ((alice, Membership.ADMIN), (bob, Membership.MEMBER), (carol, Membership.AUDITOR)):
        Membership.objects.create(user=user, workspace=acme, role=role)
    return {"admin": alice, "member": bob, "auditor": carol, "stranger": dave}
