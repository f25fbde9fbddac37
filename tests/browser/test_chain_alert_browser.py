"""The integrity notice in Chromium: when the periodic check of the record found a run changed
outside Beyond, admins and auditors see it on every audit page and on the workspace page, at
desktop and at phone width, naming the run; the changed text is shown as text, never run; members
do not see it; the tampered run's own page says where its chain breaks."""
from __future__ import annotations


import pytest
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, PHONE, login, no_sideways_scroll, seeded_server


@pytest.fixture(scope="module")
def chain_server(tmp_path_factory):
    """(base URL, run ids) of a server of its own, on a database whose record failed its check."""
    with seeded_server(tmp_path_factory, "chain") as server:
        yield server


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_an_auditor_sees_the_notice_on_the_audit_pages_and_the_workspace(page, chain_server, size, csp_errors,
                                                                          dialogs):
    base, ids = chain_server
    page.set_viewport_size(size)
    login(page, base, "audrey")
    for path in ("/w/vault/audit/", f"/w/vault/audit/runs/{ids['intact']}/", "/w/vault/"):
        page.goto(f"{base}{path}")
        alert = page.locator("#chain-alert")
        expect(alert).to_be_visible()
        expect(alert).to_contain_text("The run record of Vault failed its integrity check")
        expect(alert.locator("li").first).to_contain_text(f"run {ids['tampered']}: the attempt (step 1, attempt 1)")
        expect(alert).to_contain_text("beyond_audit verify --workspace vault")
        no_sideways_scroll(page)

    page.goto(f"{base}/w/vault/audit/runs/{ids['tampered']}/")
    status = page.locator("#chain-status")
    expect(status).to_contain_text("Broken")
    expect(status).to_contain_text("this run's record no longer matches its hash chain")
    page.goto(f"{base}/w/vault/audit/runs/{ids['intact']}/")
    expect(page.locator("#chain-status")).to_contain_text("Intact")
    assert dialogs == [] and csp_errors == []


def test_a_member_does_not_see_the_notice(page, chain_server, csp_errors):
    base, _ = chain_server
    login(page, base, "mona")
    page.goto(f"{base}/w/vault/")
    expect(page.locator("form textarea").first).to_be_visible()
    expect(page.locator("#chain-alert")).to_have_count(0)
    assert csp_errors == []
