"""Helpers shared by the calibration test files (this module holds no tests; the `people` fixture
is in conftest)."""
from __future__ import annotations

import io
import json

from django.core.management import call_command

from tests import scripting

#: A verdict that fails every draft with one issue no planted violation is reported by.
FLAG = scripting.fail("Something here is wrong.", "contradiction")


def verifier_script(tmp_path, reply: str | dict, *, per_step: int = 400, steps: int = 3, name: str = "verifier.json"):
    """A scripted file that answers up to `per_step` verifier calls on each step with `reply`."""
    data = {"steps": {str(step): {"verifier": [reply] * per_step} for step in range(1, steps + 1)}}
    return scripting.write(tmp_path, data, name=name)


def calibrate(*args: str, slug: str = "acme") -> tuple[dict, str]:
    """`beyond_calibrate --json` on workspace `slug`; (the printed report, what went to stderr)."""
    out, err = io.StringIO(), io.StringIO()
    call_command("beyond_calibrate", "--workspace", slug, *args, "--json", stdout=out, stderr=err)
    return json.loads(out.getvalue()), err.getvalue()
