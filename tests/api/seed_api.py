"""Seed the API tests' server database (run as a script with DATABASE_URL set): workspaces acme and
globex, their people, and personal tokens of every kind. Prints {name: token} as JSON.

alice is acme's admin, bob a member, carol its auditor; dave is a member of globex only; erin was
a member of acme whose account is deactivated after her token was made.
"""
from __future__ import annotations

import json
import os
import sys
from datetime import timedelta

import django

sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "beyond_site.settings")
django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.utils import timezone  # noqa: E402

from beyond_site.workspaces.models import ApiToken, Membership, Workspace  # noqa: E402
from beyond_site.workspaces.tokens import create_token, revoke_token  # noqa: E402

PASSWORD = "correct horse battery staple"


def main() -> None:
    User = get_user_model()
    acme = Workspace.objects.create(slug="acme", name="Acme")
    globex = Workspace.objects.create(slug="globex", name="Globex")
    people = {}
    for name, workspace, role in (("alice", acme, Membership.ADMIN), ("bob", acme, Membership.MEMBER),
                                  ("carol", acme, Membership.AUDITOR), ("dave", globex, Membership.MEMBER),
                                  ("erin", acme, Membership.MEMBER)):
        people[name] = User.objects.create_user(name, password=PASSWORD)
        Membership.objects.create(user=people[name], workspace=workspace, role=role)
    Membership.objects.create(user=people["alice"], workspace=globex, role=Membership.MEMBER)
    made = {}
    for key, user, options in (("admin", "alice", {}), ("member", "bob", {}), ("auditor", "carol", {}),
                               ("stranger", "dave", {}), ("read_only", "bob", {"read_only": True}),
                               ("globex_only", "alice", {"workspaces": [globex]}),
                               ("expired", "bob", {}), ("revoked", "bob", {}), ("deactivated", "erin", {})):
        row, secret = create_token(people[user], key.replace("_", " "), **options)
        made[key] = secret
        if key == "expired":
            ApiToken.objects.filter(pk=row.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
        if key == "revoked":
            revoke_token(row, people[user])
    people["erin"].is_active = False
    people["erin"].save(update_fields=["is_active"])
    print(json.dumps(made))


if __name__ == "__main__":
    main()
