"""The run pages in Chromium, as an auditor reads them, at desktop width and at phone width
(390x844): the history's rows, released content rendered with its raw Markdown behind a toggle, a
re-render's diff, times with their UTC instant, and no sideways page scroll on a phone."""
from __future__ import annotations


import pytest
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, PHONE, login, no_sideways_scroll, seeded_server


@pytest.fixture(scope="module")
def audit_server(tmp_path_factory):
    """(base URL, seeded ids) of a server of its own, on a database holding a run history."""
    with seeded_server(tmp_path_factory, "audit") as server:
        yield server


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_run_list(page, audit_server, size, csp_errors):
    base, ids = audit_server
    page.set_viewport_size(size)
    login(page, base, "audrey")
    page.goto(f"{base}/w/ledger/audit/")
    rows = page.locator("table.audit-runs tbody tr")
    expect(rows).to_have_count(50)
    first = rows.first
    expect(first.locator("td").first).to_have_text(str(ids["run"]))
    expect(first).to_contain_text("Draft an access-control note <for> the team")
    expect(rows.nth(1).locator("td.audit-who")).not_to_be_empty()
    stamp = first.locator("time")
    assert stamp.get_attribute("datetime").endswith("+00:00")
    assert stamp.get_attribute("title").endswith("(UTC)")
    expect(page.locator(".audit-count")).to_contain_text("Matching runs: 61.")
    no_sideways_scroll(page)
    page.select_option("#id_status", "completed")
    page.fill("#id_q", "note <for>")
    page.click("button:has-text('Filter')")
    expect(rows).to_have_count(1)
    expect(rows.first.locator("td").first).to_have_text(str(ids["run"]))
    no_sideways_scroll(page)
    assert csp_errors == []


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_run_page(page, audit_server, size, csp_errors):
    base, ids = audit_server
    page.set_viewport_size(size)
    login(page, base, "audrey")
    page.goto(f"{base}/w/ledger/audit/")
    page.click(f"table.audit-runs a:text-is('{ids['run']}')")
    page.wait_for_url(f"{base}/w/ledger/audit/runs/{ids['run']}/")
    step = page.locator("#step-1")
    rendered = step.locator(".audit-rendered")
    expect(rendered.locator("h2")).to_have_text("Access")
    expect(rendered.locator("strong")).to_have_text("six")
    expect(rendered.locator("table td").first).to_have_text("A.5.15")
    raw = step.locator("details.audit-raw").first
    expect(raw.locator("pre")).to_be_hidden()
    raw.locator("summary").click()
    expect(raw.locator("pre")).to_be_visible()
    expect(raw.locator("pre")).to_contain_text("- Reviews every **six** months.")
    diff = step.locator(".audit-diff")
    expect(diff.locator("del")).to_have_text("-Managers approve access.")
    expect(diff.locator("ins").first).to_have_text("+The security officer approves access.")
    expect(step.locator(".audit-attempt").nth(1).locator("pre.audit-draft")).to_be_hidden()
    expect(page.locator(".audit-calls tbody tr").first.locator("details dl")).to_be_hidden()
    page.locator(".audit-calls tbody tr").first.locator("summary").click()
    expect(page.locator(".audit-calls tbody tr").first.locator("details dl")).to_be_visible()
    assert page.locator("#events time").first.get_attribute("title").endswith("(UTC)")
    no_sideways_scroll(page)
    for summary in page.locator("main details > summary").all():
        summary.click()  # everything open: still nothing wider than the screen
    no_sideways_scroll(page)
    assert csp_errors == []


def test_times_follow_the_browsers_zone(browser, audit_server):
    base, ids = audit_server
    context = browser.new_context(timezone_id="Asia/Tokyo", viewport=DESKTOP)
    page = context.new_page()
    try:
        login(page, base, "audrey")  # the first page the browser opens tells the server its zone
        page.goto(f"{base}/w/ledger/audit/runs/{ids['run']}/")
        expect(page.locator(".audit-zone").first).to_contain_text("Times are in Asia/Tokyo")
        stamp = page.locator(".audit-facts time").first
        expect(stamp).to_contain_text("JST")
        assert stamp.get_attribute("datetime").endswith("+00:00")
    finally:
        context.close()
