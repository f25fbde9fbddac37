"""Helpers shared by the test_audit_* files (this module holds no tests; the fixtures are in conftest).

Runs are made the way an operator makes them, through `beyond_run` with scripted replies, so the
pages are tested against a record the real pipeline wrote.
"""
from __future__ import annotations

import io
import json

from django.core.management import call_command
from django.db import connection

from tests import scripting

TASK = "Draft an access-control note"


def verify(*args) -> tuple[int, str]:
    """`beyond_audit verify` with `args`: (exit status, what it printed)."""
    out = io.StringIO()
    try:
        call_command("beyond_audit", "verify", *args, stdout=out)
    except SystemExit as exit_:
        return exit_.code, out.getvalue()
    return 0, out.getvalue()


def sql(statement: str, params=()) -> None:
    """A change made behind the application's back."""
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def run_task(tmp_path, steps: dict, *, slug: str = "acme", task: str = TASK, **script_kwargs) -> dict:
    """Run `task` through beyond_run with these scripted step replies; returns the run trace."""
    data = scripting.script(steps, **script_kwargs)
    path = scripting.write(tmp_path, data, name=f"script-{abs(hash((slug, task, json.dumps(data))))}.json")
    out = io.StringIO()
    call_command("beyond_run", "--workspace", slug, "--task", task, "--provider", f"scripted:{path}", "--json",
                 stdout=out)
    return json.loads(out.getvalue())
