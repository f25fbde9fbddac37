"""Usage in Chromium: an auditor reads the charts and tables at desktop and phone width (the page
never scrolls sideways, the charts take their colours from the stylesheet, nothing breaks the CSP)
and downloads the CSV; a member is refused."""
from __future__ import annotations


import pytest
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, PHONE, login, no_sideways_scroll, open_page, own_server

URL = "/w/usage/audit/usage/"


@pytest.fixture(scope="module")
def usage_server(tmp_path_factory):
    with own_server(tmp_path_factory.mktemp("usage"), "tests/browser/seed_usage.py") as (base, _):
        yield base


@pytest.mark.parametrize("size", [DESKTOP, PHONE])
def test_an_auditor_reads_the_charts_and_tables(page, usage_server, csp_errors, size, tmp_path):
    page.set_viewport_size(size)
    login(page, usage_server, "audrey")
    page.goto(usage_server + "/w/usage/audit/")
    open_page(page, "Usage")
    page.wait_for_url(usage_server + URL)
    for chart in ("chart-cost-month", "chart-tokens-model", "chart-runs-status", "chart-steps-badge"):
        svg = page.locator(f"svg[aria-describedby='{chart}-table']")
        expect(svg).to_be_visible()
        # At phone width a chart keeps a legible size and scrolls inside its own box.
        assert svg.locator("xpath=..").bounding_box()["width"] <= size["width"]
    bar = page.locator("svg[aria-describedby='chart-cost-month-table'] rect.usage-s0").first
    assert bar.evaluate("element => getComputedStyle(element).fill") == "rgb(47, 91, 211)"
    expect(page.locator("#usage-by-role")).to_contain_text("not reported")
    expect(page.locator("#usage-calls")).to_have_text("8")
    no_sideways_scroll(page)
    page.screenshot(path=str(tmp_path / f"usage-{size['width']}.png"), full_page=True)
    with page.expect_download() as download:
        page.get_by_role("link", name="Download as CSV").click()
    text = open(download.value.path()).read()
    assert text.startswith("month,role,model,calls,input_tokens,input_tokens_not_reported")
    assert len(text.strip().splitlines()) == 1 + 8  # two months, four roles, one model each
    assert csp_errors == []


def test_a_member_is_refused(page, usage_server):
    login(page, usage_server, "mo")
    page.goto(usage_server + "/w/usage/audit/")
    expect(page.get_by_role("link", name="Usage", exact=True)).to_have_count(0)
    assert page.goto(usage_server + URL).status == 403
