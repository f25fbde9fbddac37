"""Seed for the saved tasks browser tests (run as a script with DATABASE_URL set; given its folder):
workspace `library` on the offline engine with an admin (ada), a member (max) and an auditor (aud),
two workspace tasks and one of max's own; workspace `slowlane` whose runs release a step every few
seconds (tests/browser/scenarios.py `slow_steps`), to lose the server in the middle of one. Prints
nothing worth keeping but `{}`."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import django

sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "beyond_site.settings")
django.setup()

from django.contrib.auth import get_user_model  # noqa: E402

from beyond_site.workspaces.models import Membership, Workspace  # noqa: E402
from beyond_site.workspaces.saved_tasks import OWN, WORKSPACE, add_task  # noqa: E402
from tests.browser.scenarios import slow_steps  # noqa: E402

PASSWORD = "correct horse battery staple"


def main(folder: Path) -> dict:
    User = get_user_model()
    library = Workspace.objects.create(slug="library", name="BrightDesk SAS", topology=None)
    script = folder / "slow.json"
    script.write_text(json.dumps(slow_steps()))
    role = {"provider": "scripted", "path": str(script)}
    slowlane = Workspace.objects.create(slug="slowlane", name="Slow Lane",
                                        topology={r: role for r in ("planner", "executor", "verifier", "summarizer")})
    members = {}
    for name, role_name in (("ada", Membership.ADMIN), ("max", Membership.MEMBER), ("aud", Membership.AUDITOR)):
        user = User.objects.create_user(name, password=PASSWORD)
        members[name] = Membership.objects.create(user=user, workspace=library, role=role_name)
        Membership.objects.create(user=user, workspace=slowlane, role=role_name)
    add_task(members["ada"], "SoA for an Annex A theme",
             "Draft our Statement of Applicability for the Annex A {theme} controls.", WORKSPACE)
    add_task(members["ada"], "RoPA entry", "Draft a record of processing for our support desk.", WORKSPACE)
    add_task(members["max"], "Quarterly questionnaire", "Answer the {client} security questionnaire.", OWN)
    return {}


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]))))
