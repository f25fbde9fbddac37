"""Seed the membership browser test database (run as a script with DATABASE_URL set): workspace
`north` with an admin (nora) and a member (milo), and `south` where milo is the only admin. Prints
{} (the test needs no ids)."""
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

PASSWORD = "correct horse battery staple"


def main() -> None:
    User = get_user_model()
    nora, milo = (User.objects.create_user(name, password=PASSWORD) for name in ("nora", "milo"))
    north = Workspace.objects.create(slug="north", name="North Ltd")
    south = Workspace.objects.create(slug="south", name="South Ltd")
    Membership.objects.create(user=nora, workspace=north, role=Membership.ADMIN)
    Membership.objects.create(user=milo, workspace=north, role=Membership.MEMBER)
    Membership.objects.create(user=milo, workspace=south, role=Membership.ADMIN)
    print(json.dumps({}))


if __name__ == "__main__":
    main()
