"""The verifier's trust status in Chromium (docs/calibration.md, "Trust status"): a run in a
workspace whose verifier was calibrated says so in the chat beside who checked its steps; a
workspace that requires a calibration its verifier lacks refuses the task with the reason and a
link to the Calibration page, and no run appears. Nothing breaks the CSP."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import login, seeded_server

BOX = "#chat-form textarea[name=message]"


@pytest.fixture(scope="module")
def trust_server(tmp_path_factory):
    with seeded_server(tmp_path_factory, "trust") as server:
        yield server


def test_the_chat_states_the_calibrated_verifiers_trust_status(page, trust_server, csp_errors):
    base, ids = trust_server
    login(page, base, "tina")
    page.goto(f"{base}/w/trusted/")
    page.fill(BOX, "Draft a visitor policy")
    page.press(BOX, "Enter")
    run = page.locator("[data-run-status]").last
    expect(run).to_have_attribute("data-run-status", "completed", timeout=30_000)
    trust = run.locator(".run-trust")
    expect(trust).to_have_attribute("data-trust-report", str(ids["report"]))
    expect(trust).to_contain_text(re.compile(
        rf"^Calibrated \d+ \w+ \d{{4}} \(report {ids['report']}, verifier “scripted trusted\.json”\): "
        r"flagged 0% \[0–\d+%\] of faithful drafts"))
    expect(run.locator(".run-verification")).to_be_visible()  # beside who checked the steps
    # The run's audit page says the same.
    run.locator("a.run-audit").click()
    page.wait_for_url(re.compile(r"/w/trusted/audit/runs/\d+/$"))
    expect(page.locator(".audit-trust")).to_contain_text(f"(report {ids['report']}, verifier")
    assert csp_errors == []


def test_a_workspace_requiring_calibration_refuses_with_the_reason_and_a_link(page, trust_server, csp_errors):
    base, _ = trust_server
    login(page, base, "tina")
    page.goto(f"{base}/w/strict/")
    page.fill(BOX, "Draft a visitor policy")
    page.press(BOX, "Enter")
    notice = page.locator("#notice .alert")
    expect(notice).to_contain_text("Not started: this workspace requires a calibrated verifier", timeout=10_000)
    expect(notice).to_contain_text("has never been calibrated in this workspace")
    expect(page.locator(BOX)).to_have_value("Draft a visitor policy")
    assert page.locator("[data-run-status]").count() == 0
    notice.get_by_role("link", name=re.compile("Calibration page")).click()
    page.wait_for_url(f"{base}/w/strict/calibration/")
    expect(page.locator("h1")).to_contain_text("alibration")
    assert csp_errors == []
