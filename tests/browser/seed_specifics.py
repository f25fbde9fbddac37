"""Seed the unsourced-specifics browser test database (run as a script with DATABASE_URL set): a
member (sam) of workspace `planted`, whose memories and file are the planted workspace's
(tests/fixtures/specifics/workspace.json) and whose roles all read a scripted file of its drafts,
step 3 slowed down so that the page shows step 1's markers while the run is still going.
Prints the task to send as JSON."""
from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import django

sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "beyond_site.settings")
django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402

from beyond_site.workspaces.models import Membership, Workspace  # noqa: E402
from tests import scripting  # noqa: E402
from tests.pipeline.specifics_fixture import planted, planted_brief  # noqa: E402
from tests.scripting import PASS  # noqa: E402

PASSWORD = "correct horse battery staple"
RECAP = "Notify the controller within a day, and the supervisory authority within 72 hours."


def main(folder: Path) -> None:
    data = planted()
    steps = {int(k): {"executor": [draft], "verifier": [PASS]} for k, draft in data["drafts"].items()}
    steps[3]["executor"] = [{"content": data["drafts"]["3"], "delay_s": 4}]
    path = scripting.write(folder, scripting.script(steps, planner=[json.dumps(planted_brief(data))],
                                                    summarizer=[RECAP]), name="planted.json")
    role = {"provider": "scripted", "path": str(path)}
    workspace = Workspace.objects.create(slug="planted", name="Acme Cloud Services",
                                         topology={r: role for r in ("planner", "executor", "verifier", "summarizer")})
    sam = get_user_model().objects.create_user("sam", password=PASSWORD)
    Membership.objects.create(user=sam, workspace=workspace, role=Membership.MEMBER)
    for memory in data["memories"]:
        call_command("beyond_workspace", "add-memory", "planted", memory, stdout=io.StringIO())
    for file in data["files"]:
        (folder / file["name"]).write_text(file["text"], encoding="utf-8")
        call_command("beyond_workspace", "add-file", "planted", str(folder / file["name"]), stdout=io.StringIO())
    print(json.dumps({"task": data["task"]}))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
