"""Seed the exports browser test database (run as a script with DATABASE_URL set): member alice of
workspace `deliver`, and one finished run recorded with everything an export places or leaves out
(tests/site/export_support.py). Prints the run's and its conversation's ids as JSON."""
from __future__ import annotations

import json
import os
import sys

import django

sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "beyond_site.settings")
django.setup()

from django.contrib.auth import get_user_model  # noqa: E402

from beyond_site.workspaces.models import Membership, Workspace  # noqa: E402
from tests.site.export_support import rich_run  # noqa: E402

PASSWORD = "correct horse battery staple"


def main() -> None:
    alice = get_user_model().objects.create_user("alice", password=PASSWORD)
    workspace = Workspace.objects.create(slug="deliver", name="Deliver SAS")
    Membership.objects.create(user=alice, workspace=workspace, role=Membership.MEMBER)
    run = rich_run(workspace, alice)
    print(json.dumps({"run": run.pk, "conversation": run.conversation_id}))


if __name__ == "__main__":
    main()
