"""Seed the rough-edges browser test database (run as a script with DATABASE_URL set): workspace
`harbour` ("Harbour Logistics GmbH") with a staff admin (ada), a member (max) and an auditor (aud);
two runs (beyond_run, scripted replies: a pass and a pass after a re-render) in two conversations
whose long titles differ only after 40 characters; a deleted conversation; a workspace file;
three pending invitations with long notes. Prints the ids."""
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
from django.utils import timezone  # noqa: E402

from beyond_site.workspaces import knowledge, members  # noqa: E402
from beyond_site.workspaces.models import Conversation, Membership, Workspace  # noqa: E402
from tests import scripting  # noqa: E402
from tests.scripting import PASS  # noqa: E402

PASSWORD = "correct horse battery staple"
TITLES = ("Draft a Statement of Applicability for Hamburg: the warehouse and its cold store",
          "Draft a Statement of Applicability for Bremen: the office and its branch in Kiel")
POLICY = b"# Access policy\n\nManagers approve access every six months.\n"


def main(folder: Path) -> None:
    workspace = Workspace.objects.create(slug="harbour", name="Harbour Logistics GmbH")
    User = get_user_model()
    ada = User.objects.create_user("ada", password=PASSWORD, is_staff=True)
    people = {"ada": ada, **{name: User.objects.create_user(name, password=PASSWORD) for name in ("max", "aud")}}
    for name, role in (("ada", Membership.ADMIN), ("max", Membership.MEMBER), ("aud", Membership.AUDITOR)):
        Membership.objects.create(user=people[name], workspace=workspace, role=role)
    runs = []
    for n, task in enumerate(TITLES):
        brief = {**scripting.brief(2, task=task), "title": task}  # long titles differing after 40 characters
        script = scripting.write(folder, scripting.script({
            1: {"executor": ["## Scope\n\nThe warehouse and the **cold store**.", "## Scope\n\nAll sites."],
                "verifier": [scripting.fail("Which sites?"), PASS]},
            2: {"executor": ["Controls are reviewed every *year*."], "verifier": [PASS]}},
            planner=[json.dumps(brief)]), name=f"run{n}.json")
        out = io.StringIO()
        call_command("beyond_run", "--workspace", "harbour", "--task", task, "--provider", f"scripted:{script}",
                     "--json", stdout=out)
        runs.append(json.loads(out.getvalue())["run"]["id"])
    gone = Conversation.objects.create(workspace=workspace, title="Old supplier review (deleted)", created_by=ada,
                                       deleted_at=timezone.now(), deleted_by=ada)
    knowledge.add_document(workspace, "access-policy.md", POLICY, user=ada)
    for role, note in (("member", "the new data protection coordinator of the Hamburg warehouse"),
                       ("auditor", "the external auditor from the certification body, spring audit"),
                       ("member", "Jörg Mustermann-Übermüller, facility management")):
        members.create_invitation(workspace, role, user=ada, note=note)
    print(json.dumps({"runs": runs, "deleted_conversation": gone.pk, "titles": TITLES}))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
