"""Seed the browser tests' file database (run as a script with DATABASE_URL set): users, workspaces
whose topology points at scripted-provider files, and one queued run. Prints the ids as JSON."""
from __future__ import annotations

import json
import os
import sys

import django

sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "beyond_site.settings")
django.setup()

from django.contrib.auth import get_user_model  # noqa: E402

from beyond_site.workspaces.models import Conversation  # noqa: E402
from beyond_site.runs.queue import start_run  # noqa: E402
from beyond_site.workspaces.models import Membership, Memory, Workspace  # noqa: E402
from tests.browser import seed_admin  # noqa: E402

PASSWORD = "correct horse battery staple"


def main(scripts: dict[str, str]) -> None:
    User = get_user_model()
    alice = User.objects.create_user("alice", password=PASSWORD)
    User.objects.create_user("bob", password=PASSWORD)
    ids = {}
    for slug, path in scripts.items():
        role = {"provider": "scripted", "path": path}
        workspace = Workspace.objects.create(slug=slug, name=f"{slug.title()} Ltd",
                                             topology={r: role for r in ("planner", "executor", "verifier", "summarizer")})
        Membership.objects.create(user=alice, workspace=workspace, role=Membership.MEMBER)
        Memory.objects.create(workspace=workspace, text="We are a 40-person SaaS company based in Lyon.")
        ids[slug] = workspace.pk
    # A workspace on the built-in offline engine (no topology of its own: BEYOND_PROVIDER=offline).
    offline = Workspace.objects.create(slug="offline", name="BrightDesk SAS", topology=None)
    Membership.objects.create(user=alice, workspace=offline, role=Membership.MEMBER)
    Memory.objects.create(workspace=offline, text="BrightDesk SAS is a 60-person software company in Lyon.")
    ids["offline"] = offline.pk
    workspace = Workspace.objects.get(slug="steady")
    conversation = Conversation.objects.create(workspace=workspace, title="Queued", created_by=alice)
    run, _ = start_run(workspace, "A queued task", user=alice, conversation=conversation)
    ids["queued_run"], ids["queued_conversation"] = run.pk, conversation.pk
    ids.update(seed_admin.main())
    print(json.dumps(ids))


def scripted_workspace(slug: str, path: str, member: str = "alice") -> None:
    """One more workspace whose roles all read `path` (tests that build their script late)."""
    role = {"provider": "scripted", "path": path}
    workspace = Workspace.objects.create(slug=slug, name=f"{slug.title()} Ltd",
                                         topology={r: role for r in ("planner", "executor", "verifier", "summarizer")})
    Membership.objects.create(user=get_user_model().objects.get(username=member), workspace=workspace,
                              role=Membership.MEMBER)


if __name__ == "__main__":
    if sys.argv[1] == "--workspace":
        scripted_workspace(sys.argv[2], sys.argv[3])
    else:
        main(json.loads(sys.argv[1]))
