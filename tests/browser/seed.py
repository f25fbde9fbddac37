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
from beyond_site.runs.services import start_run  # noqa: E402
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
    workspace = Workspace.objects.get(slug="steady")
    conversation = Conversation.objects.create(workspace=workspace, title="Queued", created_by=alice)
    run, _ = start_run(workspace, "A queued task", user=alice, conversation=conversation)
    ids["queued_run"], ids["queued_conversation"] = run.pk, conversation.pk
    ids.update(seed_admin.main())
    print(json.dumps(ids))


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
