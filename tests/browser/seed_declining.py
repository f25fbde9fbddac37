"""Point a browser test's workspace at another scripted file (run as a script with DATABASE_URL
set): `seed_declining.py SLUG PATH`. A scripted provider reads its file afresh for each run, so a
conversation whose next run must answer differently (a follow-up that is declined) gets its
workspace's models switched between the two runs, as an admin could in the settings."""
from __future__ import annotations

import os
import sys

import django

sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "beyond_site.settings")
django.setup()

from beyond_site.workspaces.models import Workspace  # noqa: E402


def switch(slug: str, path: str) -> None:
    role = {"provider": "scripted", "path": path}
    changed = Workspace.objects.filter(slug=slug).update(
        topology={r: role for r in ("planner", "executor", "verifier", "summarizer")})
    assert changed == 1, f"no workspace {slug!r}"


if __name__ == "__main__":
    switch(sys.argv[1], sys.argv[2])
