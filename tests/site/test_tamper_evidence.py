"""The tamper-evident record: every change made behind the application's back is found and named."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.db import connection

from beyond_site.lib.chaining import GENESIS
from beyond_site.runs import chain
from beyond_site.runs.models import Attempt, ChainCheck, ModelCall, Run, RunEvent, Verdict, WorkspaceLedger
from tests import scripting
from tests.scripting import PASS, fail
from tests.site.audit_support import run_task

pytestmark = pytest.mark.django_db(transaction=True)


def verify(*args) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("beyond_audit", "verify", *args, stdout=out)
    except SystemExit as exit_:
        return exit_.code, out.getvalue()
    return 0, out.getvalue()


def sql(statement: str, params=()) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def two_step_run(tmp_path, **kwargs) -> Run:
    trace = run_task(tmp_path, {1: {"executor": ["Draft one.", "Draft one, fixed."], "verifier": [fail(), PASS]},
                                2: {"executor": ["Draft two."], "verifier": [PASS]}}, **kwargs)
    return Run.objects.get(pk=trace["run"]["id"])


@pytest.fixture
def runs(acme, tmp_path):
    """Two finished runs of acme, recorded by the real pipeline."""
    return [two_step_run(tmp_path), two_step_run(tmp_path, task="Draft a backup note")]


def test_an_untouched_record_verifies_clean(runs):
    code, out = verify()
    assert code == 0, out
    assert out.strip().splitlines()[-1].startswith("record intact: 1 workspace, 2 runs")
    assert WorkspaceLedger.objects.filter(workspace__slug="acme").count() == 2
