"""API tokens and the API's reference in Chromium: a person makes a token from the top bar's link,
copies it once, a program uses it, and it stops working once revoked; the API docs page is served
from the site's own files and runs under its Content Security Policy, at desktop and phone width."""
from __future__ import annotations

import httpx
from playwright.sync_api import expect

from tests.browser.conftest import PHONE, login, no_sideways_scroll
from tests.browser.test_chat_browser import shot


def test_a_token_is_made_shown_once_used_and_revoked(alice_page, server, csp_errors):
    base, _ = server
    page = alice_page
    page.locator(".topbar-tokens").click()
    expect(page.get_by_role("heading", name="API tokens")).to_be_visible()
    page.get_by_label("Name").fill("GRC sync")
    page.get_by_label("Expires after (days)").fill("7")
    page.get_by_role("button", name="Make a token").click()
    secret = page.locator("#new-token").input_value()
    assert secret.startswith("byd_")
    expect(page.locator("tr[data-state=active]", has_text="GRC sync")).to_contain_text("never")
    shot(page, "api-token-made")

    answer = httpx.get(f"{base}/api/v1/workspaces", headers={"Authorization": f"Bearer {secret}"})
    assert answer.status_code == 200 and answer.json()

    page.reload()
    expect(page.locator("#new-token")).to_have_count(0)  # shown once
    row = page.locator("tr", has_text="GRC sync")
    expect(row).not_to_contain_text("never")  # its last use is listed
    row.get_by_role("button", name="Revoke GRC sync").click()
    expect(page.locator(".page-messages")).to_contain_text("is revoked")
    expect(page.locator("tr[data-state=revoked]", has_text="GRC sync")).to_be_visible()
    answer = httpx.get(f"{base}/api/v1/workspaces", headers={"Authorization": f"Bearer {secret}"})
    assert answer.status_code == 401 and answer.headers["content-type"] == "application/problem+json"
    assert csp_errors == []


def test_the_tokens_page_fits_a_phone(browser, server):
    base, _ = server
    page = browser.new_context(viewport=PHONE).new_page()
    login(page, base, "alice")
    page.goto(f"{base}/account/tokens/")
    expect(page.get_by_role("button", name="Make a token")).to_be_visible()
    no_sideways_scroll(page)


def test_the_api_reference_renders_from_local_files_under_the_policy(page, server, csp_errors):
    base, _ = server
    elsewhere = []
    page.on("request", lambda request: elsewhere.append(request.url) if not request.url.startswith(base) else None)
    page.goto(f"{base}/api/v1/docs")
    expect(page.locator(".swagger-ui .opblock").first).to_be_visible()
    assert page.locator(".swagger-ui .opblock").count() >= 20
    expect(page.locator(".swagger-ui")).to_contain_text("/api/v1/runs/{run_id}/events")
    assert elsewhere == [] and csp_errors == []
