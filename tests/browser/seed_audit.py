"""Seed the run pages' browser test database (run as a script with DATABASE_URL set): an auditor
(audrey) of workspace `ledger`, a seeded history of 60 runs, and one real run (beyond_run with
scripted replies) whose first step is Markdown re-rendered once, with a very long unbroken line.
Prints the ids as JSON."""
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

from bench.history_seed import seed_history  # noqa: E402
from beyond_site.workspaces.models import Membership  # noqa: E402
from tests import scripting  # noqa: E402
from tests.scripting import PASS  # noqa: E402

PASSWORD = "correct horse battery staple"
FIRST = "## Access\n\nManagers approve access.\n\n- Reviews every **six** months.\n- Leavers lose access on their last day."
SECOND = ("## Access\n\nThe security officer approves access.\n\n- Reviews every **six** months.\n"
          "- Leavers lose access on their last day.\n\nEvidence: " + "x" * 300 + "\n\n"
          "| Control | Owner | Evidence kept |\n|---|---|---|\n| A.5.15 | Security officer | Access review minutes |")


def main(folder: Path) -> None:
    workspace, _ = seed_history("ledger", 60)
    auditor = get_user_model().objects.create_user("audrey", password=PASSWORD)
    Membership.objects.create(user=auditor, workspace=workspace, role=Membership.AUDITOR)
    script = scripting.write(folder, scripting.script({
        1: {"executor": [FIRST, SECOND], "verifier": [scripting.fail("Who approves access?"), PASS]},
        2: {"executor": ["Reviews are *recorded*."], "verifier": [PASS]}}), name="run.json")
    out = io.StringIO()
    call_command("beyond_run", "--workspace", "ledger", "--task", "Draft an access-control note <for> the team",
                 "--provider", f"scripted:{script}", "--json", stdout=out)
    print(json.dumps({"run": json.loads(out.getvalue())["run"]["id"]}))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
