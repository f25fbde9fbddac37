"""The deployment checklist's first line: with DJANGO_SECURE=1, `manage.py check --deploy` is clean."""
from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_check_deploy_is_clean_behind_https(tmp_path):
    env = {**os.environ, "DJANGO_SECURE": "1", "DJANGO_SECRET_KEY": secrets.token_urlsafe(60),
           "DJANGO_DEBUG": "false", "DJANGO_ALLOWED_HOSTS": "beyond.example.com",
           "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout + done.stderr
