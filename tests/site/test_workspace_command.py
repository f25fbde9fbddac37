"""`beyond_workspace`: scripted administration, idempotent where that makes sense."""
from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from beyond_site.workspaces.models import Membership, Memory, Workspace

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = io.StringIO()
    call_command("beyond_workspace", *args, stdout=out)
    return out.getvalue()


def test_it_creates_a_workspace_once():
    assert "Created" in run("create", "acme", "--name", "Acme Ltd")
    assert "Exists" in run("create", "acme", "--name", "Other name")
    assert Workspace.objects.get(slug="acme").name == "Acme Ltd"


def test_it_adds_a_memory_once():
    run("create", "acme")
    run("add-memory", "acme", "We are Acme.")
    run("add-memory", "acme", "We are Acme.")
    assert list(Memory.objects.values_list("text", flat=True)) == ["We are Acme."]


def test_it_adds_a_member_creating_a_user_without_a_password_and_changes_roles(alice):
    run("create", "acme")
    out = run("add-member", "acme", "newcomer", "auditor")
    assert "newcomer is auditor of acme" in out and "no password yet" in out
    assert not get_user_model().objects.get(username="newcomer").has_usable_password()
    run("add-member", "acme", "alice", "member")
    run("add-member", "acme", "alice", "admin")
    assert Membership.objects.get(user=alice).role == "admin"
    assert Membership.objects.count() == 2


def test_it_adds_a_file_and_refuses_bad_ones_clearly(tmp_path):
    run("create", "acme")
    good = tmp_path / "policy.md"
    good.write_text("# Access policy\n\nManagers approve access.\n")
    assert "Added: policy.md (markdown" in run("add-file", "acme", str(good))
    assert "Already there" in run("add-file", "acme", str(good))
    with pytest.raises(CommandError, match="no such file"):
        run("add-file", "acme", str(tmp_path / "missing.pdf"))
    binary = tmp_path / "image.pdf"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    with pytest.raises(CommandError, match="image.pdf"):
        run("add-file", "acme", str(binary))


@pytest.mark.parametrize("args", [("add-memory", "ghost", "x"), ("add-member", "ghost", "alice", "member"),
                                  ("add-file", "ghost", "/etc/hostname")])
def test_it_refuses_an_unknown_workspace(args):
    with pytest.raises(CommandError, match="unknown workspace 'ghost'"):
        run(*args)


def test_it_refuses_an_unknown_role():
    run("create", "acme")
    with pytest.raises(CommandError):
        run("add-member", "acme", "alice", "owner")
