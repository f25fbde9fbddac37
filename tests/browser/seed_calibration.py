"""Seed the calibration browser test's file database (run as a script with DATABASE_URL set): an
auditor and an admin of workspace `calib`, a run whose verifier raised issues, and two calibration
reports. Prints the ids as JSON."""
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
from tests.scripting import PASS  # noqa: E402

PASSWORD = "correct horse battery staple"


def calibrate(verifier: Path) -> int:
    out = io.StringIO()
    call_command("beyond_calibrate", "--workspace", "calib", "--provider", f"scripted:{verifier}", "--drafts", "12",
                 "--json", stdout=out, stderr=io.StringIO())
    return json.loads(out.getvalue())["report"]["id"]


def main(folder: Path) -> None:
    User = get_user_model()
    workspace = Workspace.objects.create(slug="calib", name="Calib Ltd")
    for name, role in (("audrey", Membership.AUDITOR), ("adam", Membership.ADMIN)):
        user = User.objects.create_user(name, password=PASSWORD)
        Membership.objects.create(user=user, workspace=workspace, role=role)
    run_script = scripting.write(folder, scripting.script({
        1: {"executor": ["Access is approved by managers.", "Access is approved by the CISO."],
            "verifier": [scripting.fail("The draft does not name who approves access."), PASS]},
        2: {"executor": ["Reviews happen."], "verifier": [PASS]}}), name="run.json")
    out = io.StringIO()
    call_command("beyond_run", "--workspace", "calib", "--task", "Draft an access-control note",
                 "--provider", f"scripted:{run_script}", "--json", stdout=out)
    run_id = json.loads(out.getvalue())["run"]["id"]
    replies = {"flag": scripting.fail("Something here is wrong.", "contradiction"), "pass": PASS}
    reports = [calibrate(scripting.write(folder, {"steps": {str(s): {"verifier": [reply] * 100} for s in (1, 2, 3)}},
                                         name=f"{name}.json"))
               for name, reply in replies.items()]
    print(json.dumps({"run": run_id, "reports": reports}))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
