"""Seed the chain-alert browser test database (run as a script with DATABASE_URL set): workspace
`vault` with an auditor (audrey) and a member (mona), two real runs (beyond_run with scripted
replies), then the first run's draft rewritten behind Beyond's back and the periodic check of the
record run once, so that it recorded the failure. Prints the run ids as JSON."""
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
from django.db import connection  # noqa: E402

from beyond_site.runs import chain  # noqa: E402
from beyond_site.runs.models import Attempt  # noqa: E402
from beyond_site.workspaces.models import Membership, Workspace  # noqa: E402
from tests import scripting  # noqa: E402
from tests.scripting import PASS  # noqa: E402

PASSWORD = "correct horse battery staple"


def main(folder: Path) -> None:
    workspace = Workspace.objects.create(slug="vault", name="Vault")
    for name, role in (("audrey", Membership.AUDITOR), ("mona", Membership.MEMBER)):
        user = get_user_model().objects.create_user(name, password=PASSWORD)
        Membership.objects.create(user=user, workspace=workspace, role=role)
    script = scripting.write(folder, scripting.script({
        1: {"executor": ["Managers approve access."], "verifier": [PASS]},
        2: {"executor": ["Reviews are recorded."], "verifier": [PASS]}}), name="run.json")
    runs = []
    for task in ("Draft an access-control note", "Draft a review note"):
        out = io.StringIO()
        call_command("beyond_run", "--workspace", "vault", "--task", task, "--provider", f"scripted:{script}",
                     "--json", stdout=out)
        runs.append(json.loads(out.getvalue())["run"]["id"])
    # Changed outside Beyond: an UPDATE the application's append-only guard never sees.
    attempt = Attempt.objects.filter(step__run_id=runs[0]).order_by("id").first()
    with connection.cursor() as cursor:
        cursor.execute("UPDATE runs_attempt SET draft = %s WHERE id = %s",
                       ["<img src=x onerror=alert(1)>Rewritten.", attempt.pk])
    chain.check_all()
    print(json.dumps({"tampered": runs[0], "intact": runs[1]}))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
