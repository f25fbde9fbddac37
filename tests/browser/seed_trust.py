"""Seed the trust-status browser test's file database (run as a script with DATABASE_URL set): an
admin of two workspaces on scripted models. `trusted`'s verifier has a calibration report meeting
its requirement; `strict` requires one its verifier never had. Prints the report's id as JSON."""
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

from beyond_site.workspaces import configuration  # noqa: E402
from beyond_site.workspaces.models import Membership, Workspace  # noqa: E402
from tests import scripting  # noqa: E402
from tests.scripting import PASS  # noqa: E402

PASSWORD = "correct horse battery staple"
REQUIREMENT = {"max_clean_flagged": 0.1, "max_unparseable": 0.1, "min_caught": None}


def scripted_workspace(slug: str, folder: Path, admin) -> Path:
    """A workspace whose four roles are one scripted file, which also answers a calibration."""
    path = scripting.write(folder, scripting.script(
        {1: {"executor": ["Visitors sign in at reception."], "verifier": [PASS] * 100},
         2: {"executor": ["Visitors wear a badge."], "verifier": [PASS] * 100},
         3: {"verifier": [PASS] * 100}}, n_steps=2), name=f"{slug}.json")
    workspace = Workspace.objects.create(slug=slug, name=slug.title())
    Membership.objects.create(user=admin, workspace=workspace, role=Membership.ADMIN)
    role = {"provider": "scripted", "path": str(path)}
    configuration.set_topology(workspace, {r: role for r in ("planner", "executor", "verifier", "summarizer")},
                               operator=True)
    configuration.set_calibration_requirement(workspace, REQUIREMENT)
    return path


def main(folder: Path) -> None:
    admin = get_user_model().objects.create_user("tina", password=PASSWORD)
    trusted = scripted_workspace("trusted", folder, admin)
    scripted_workspace("strict", folder, admin)
    out = io.StringIO()
    call_command("beyond_calibrate", "--workspace", "trusted", "--provider", f"scripted:{trusted}", "--drafts", "60",
                 "--contract", "narrow", "--json", stdout=out, stderr=io.StringIO())
    print(json.dumps({"report": json.loads(out.getvalue())["report"]["id"]}))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
