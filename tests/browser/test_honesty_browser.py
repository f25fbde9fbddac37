"""Honest by default, in Chromium: a step no language model read says "Checked mechanically" (its
badge, its tooltip with the offline checks' figures, the run's line), and a declined follow-up
shows its reason with no badge or export while the conversation's document and its export stay
as they were."""
from __future__ import annotations

import json

from playwright.sync_api import expect

from pipeline.calibration.offline import sentence
from tests import scripting
from tests.browser.conftest import add_scripted_workspace, login, run_script
from tests.browser.test_chat_browser import shot
from tests.browser.test_working_loop_browser import send
from tests.scripting import PASS

REASON = "This engine cannot translate a document; connect a model in Settings to translate it."
DOCUMENT = "## Register\n\nThe register lists DOCUMENT-MARKER: every laptop and server."


def test_an_offline_run_reads_checked_mechanically_with_what_that_covers(page, server):
    base, _ = server
    login(page, base, "alice")
    page.goto(f"{base}/w/offline/")
    run = send(page, "Draft our ISO/IEC 27001:2022 access control policy")
    expect(run).to_have_attribute("data-run-status", "completed", timeout=30_000)
    steps = run.locator("[data-step]")
    assert steps.count() >= 2
    assert {s.get_attribute("data-badge") for s in steps.all()} == {"checked"}
    badge = run.locator('[data-step="1"] .badge')
    expect(badge).to_have_text("Checked mechanically")
    tip = badge.get_attribute("data-tip")
    assert tip == badge.get_attribute("title")
    assert "No language model read this step" in tip and "citations" in tip and "structure" in tip
    assert sentence() in tip  # what the offline checks catch, beside the explanation
    badge.focus()  # the explanation shows on keyboard focus, as on hover
    shown = badge.evaluate("b => getComputedStyle(b, '::after').content")
    assert "No language model read this step" in shown
    shot(page, "chat-offline-checked-badge")
    line = run.locator(".run-verification")
    expect(line).to_contain_text("Checked mechanically: no language model read these steps.")
    expect(line).to_contain_text("On Beyond's calibration corpus the offline checks caught")
    assert "passed" not in run.inner_text().lower()


def test_a_declined_follow_up_shows_its_reason_and_leaves_the_document_as_it_was(page, server_parts, tmp_path):
    daphne, env, _ = server_parts
    first_script = scripting.script({1: {"executor": [DOCUMENT], "verifier": [PASS]}}, n_steps=1)
    add_scripted_workspace(env, "declines", first_script, tmp_path)
    login(page, daphne.base, "alice")
    page.goto(f"{daphne.base}/w/declines/")
    first = send(page, "Draft our asset register")
    expect(first).to_have_attribute("data-run-status", "completed", timeout=30_000)
    export = first.locator("[data-export=audit-md]")  # the export menu's audit edition, in Markdown
    before = page.request.get(daphne.base + export.get_attribute("href")).text()
    assert "DOCUMENT-MARKER" in before

    declining = tmp_path / "declining.json"
    declining.write_text(json.dumps(scripting.script({}, planner=[json.dumps(scripting.declined_brief(REASON))])))
    run_script(env, "tests/browser/seed_declining.py", "declines", str(declining))
    second = send(page, "Translate this document into French")
    expect(second).to_have_attribute("data-run-status", "declined", timeout=30_000)

    def shows_a_declined_run(run) -> None:
        expect(run.locator(".run-state")).to_have_text("Declined")
        expect(run.locator(".run-declined")).to_contain_text(f"Declined: {REASON}")
        expect(run.locator(".run-declined")).to_contain_text("this conversation's document is unchanged")
        expect(run.locator("[data-step]")).to_have_count(0)
        expect(run.locator(".badge")).to_have_count(0)
        expect(run.locator("[data-export]")).to_have_count(0)
        expect(run.locator("[data-action=run-again]")).to_have_count(0)

    shows_a_declined_run(second)
    second.scroll_into_view_if_needed()
    shot(page, "chat-declined-follow-up")
    page.reload()  # the same, replayed from the record
    runs = page.locator("[data-run-status]")
    expect(runs).to_have_count(2)
    shows_a_declined_run(runs.nth(1))
    kept = runs.nth(0)
    expect(kept).to_have_attribute("data-run-status", "completed")
    expect(kept.locator('[data-step="1"]')).to_contain_text("DOCUMENT-MARKER")
    after = page.request.get(daphne.base + kept.locator("[data-export=audit-md]").get_attribute("href")).text()
    assert after == before
