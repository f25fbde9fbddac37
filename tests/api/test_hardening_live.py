"""Issue 49's lows against a real server (daphne, a file database): a setting or a calibration
report changed behind the application's back is named by `beyond_audit verify` and counts for no
run; a released step edited in the database is marked on the pages at once; a verifier's name
cannot make the trust sentence read as another status; the calibration gate takes no tiny or
reconfigured evidence (findings 5, 6 and 10)."""
from __future__ import annotations

import json
import re
import sqlite3
import subprocess

import httpx
import pytest

from tests.api.live import live_server
from tests.api.test_api_live import follow, start
from tests.api.seed_api import PASSWORD
from tests.servers import PYTHON, ROOT

SPOOF = "x, calibrated 4 Dec 2026 (report 7): flagged 0% of faithful drafts"


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    with live_server(tmp_path_factory.mktemp("hardening-live")) as server:
        yield server


def manage(live, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, "manage.py", *args], cwd=ROOT, env=live.env, capture_output=True, text=True)


def sql(live, statement: str, *params) -> None:
    with sqlite3.connect(live.env["DATABASE_URL"].removeprefix("sqlite:///")) as db:
        db.execute(statement, params)


def signed_in(live, username: str = "alice") -> httpx.Client:
    client = httpx.Client(base_url=live.base, timeout=30, follow_redirects=True)
    page = client.get("/accounts/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    client.post("/accounts/login/", data={"username": username, "password": PASSWORD,
                                          "csrfmiddlewaretoken": token}, headers={"Referer": f"{live.base}/accounts/login/"})
    return client


def test_a_setting_cleared_behind_the_applications_back_is_named(live):
    assert manage(live, "beyond_workspace", "require-calibration", "acme", "--max-clean-flagged", "20").returncode == 0
    assert manage(live, "beyond_audit", "verify", "--workspace", "acme").returncode == 0
    sql(live, "UPDATE workspaces_workspace SET calibration_requirement = NULL WHERE slug = 'acme'")
    checked = manage(live, "beyond_audit", "verify", "--workspace", "acme")
    assert checked.returncode == 1 and "calibration requirement is not what change" in checked.stdout
    assert manage(live, "beyond_workspace", "require-calibration", "acme", "--off").returncode == 0
    assert manage(live, "beyond_workspace", "require-calibration", "acme", "--max-clean-flagged", "30").returncode == 0
    assert manage(live, "beyond_workspace", "require-calibration", "acme", "--off").returncode == 0


def test_a_step_edited_in_the_database_is_marked_on_the_pages_at_once(live):
    run_id = start(live)["id"]
    follow(live, run_id)
    with live.client("admin") as api:
        conversation = api.get(f"/runs/{run_id}").json()["run"]["conversation"]
    browser = signed_in(live)
    assert "data-record-broken" not in browser.get(f"/w/acme/c/{conversation}/").text
    sql(live, "UPDATE runs_step SET content = 'Edited after release.' WHERE run_id = ? AND \"index\" = 1", run_id)
    assert "data-record-broken" in browser.get(f"/w/acme/c/{conversation}/").text
    assert "data-record-broken" in browser.get("/w/acme/audit/").text


def test_a_verifiers_name_never_reads_as_another_status(live):
    topology = {role: {"provider": "offline"} for role in ("planner", "executor", "summarizer")}
    topology["verifier"] = {"provider": "openai", "model": SPOOF, "base_url": "http://127.0.0.1:9/v1"}
    assert manage(live, "beyond_workspace", "set-topology", "globex", json.dumps(topology)).returncode == 0
    with live.client("globex_only") as api:
        started = api.post("/workspaces/globex/runs", json={"task": "Draft a visitor policy"}).json()
        trust = api.get(f"/runs/{started['id']}").json()["run"]["verifier_trust"]
    assert trust["report"] is None
    audit = signed_in(live).get(f"/w/globex/audit/runs/{started['id']}/").text
    said = re.search(r'class="audit-trust"[^>]*>([^<]*)', audit).group(1).strip()
    assert said.startswith("Never calibrated in this workspace with these settings (verifier “")
    assert "(report 7)" not in said and "report 7: flagged 0%" not in said.split("(verifier")[0]
