"""The requirement trace in Chromium (docs/verifier-contract.md, "The requirement trace"): a document
that misses part of the task says so on its card and the run list finds it with its "with gaps"
filter; a redo the engine cannot apply is declined and the document stays as it was."""
from __future__ import annotations

import re

from playwright.sync_api import expect

from tests import scripting
from tests.browser.conftest import add_scripted_workspace, login, record_of
from tests.browser.test_working_loop_browser import run_id, send
from tests.scripting import PASS

TASK = "Write a visitor access procedure for the Bristol office with badges returned within 2 hours"


def test_a_run_with_gaps_says_so_on_its_card_and_in_the_run_list(page, server_parts, tmp_path):
    daphne, env, _ = server_parts
    lacking = scripting.script({1: {"executor": ["Visitors sign in at reception and are escorted."],
                                    "verifier": [PASS]}}, task=TASK)
    add_scripted_workspace(env, "gaps", lacking, tmp_path)
    login(page, daphne.base, "alice")
    page.goto(f"{daphne.base}/w/gaps/")
    run = send(page, TASK)
    expect(run).to_have_attribute("data-run-status", "completed", timeout=30_000)
    gaps = run.locator("[data-gaps]")
    expect(gaps).to_contain_text("requirements of the task. Not covered:")
    expect(gaps).to_contain_text("Bristol office")
    expect(gaps).to_contain_text("2 hours")
    expect(run.locator(".recap")).to_contain_text("Covers ")
    met, total = int(gaps.get_attribute("data-met")), int(gaps.get_attribute("data-total"))
    assert met < total
    number = run_id(run)

    # The run list: its Requirements column, and the filter that finds it.
    page.goto(f"{daphne.base}/w/gaps/audit/")
    row = page.locator("tr", has=page.locator(f'a[href$="/runs/{number}/"]'))
    expect(row.locator(".audit-requirements")).to_have_text(f"{met} of {total}")
    page.select_option("select[name=requirements]", "gaps")
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"requirements=gaps"))
    expect(page.locator(f'a.audit-gaps[href*="/runs/{number}/"]')).to_be_visible()
    page.select_option("select[name=requirements]", "met")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator(f'a[href$="/runs/{number}/"]')).to_have_count(0)


def test_a_redo_the_engine_cannot_apply_is_declined_and_the_document_is_unchanged(page, server_parts):
    daphne, env, _ = server_parts
    login(page, daphne.base, "alice")
    page.goto(f"{daphne.base}/w/offline/")
    first = send(page, "Draft our information security policy")
    expect(first).to_have_attribute("data-run-status", "completed", timeout=30_000)
    expect(first.locator("[data-document-version]")).to_have_attribute("data-document-version", "1")
    step = first.locator('[data-step="2"]')
    before = step.locator(".step-content").inner_text()
    step.locator('summary[data-action="redo"]').click()
    step.locator('textarea[name="instruction"]').fill("Say that laptops are replaced every three years")
    step.locator('[data-action="redo-submit"]').click()
    runs = page.locator("[data-run-status]")
    expect(runs).to_have_count(2)
    redo = page.locator(f"#{runs.nth(1).get_attribute('id')}")
    expect(redo).to_have_attribute("data-run-status", "declined", timeout=30_000)
    expect(redo.locator("[data-declined]")).to_contain_text("word for word")
    expect(redo.locator("[data-step]")).to_have_count(0)
    # The conversation's document is still the first version, word for word.
    expect(first.locator("[data-document-version]")).to_have_attribute("data-document-version", "1")
    assert first.locator('[data-step="2"] .step-content').inner_text() == before
    assert record_of(env, run_id(redo))["status"] == "declined"
    exported = page.request.get(daphne.base + first.locator("[data-export=client-md]").get_attribute("href")).text()
    assert "laptops are replaced every three years" not in exported
