"""Membership with consent in Chromium: an admin offers the admin role to a member, who sees the
offer on their home page and accepts it; the other admin is told and notes it; a member leaves a
workspace from the home page, and the only admin of a workspace is told why they cannot; at desktop
and at phone width, with no sideways scroll and no script the page's policy refuses."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, PHONE, login, no_sideways_scroll, seeded_server
from tests.browser.test_chat_browser import shot


@pytest.fixture(scope="module")
def membership_server(tmp_path_factory):
    with seeded_server(tmp_path_factory, "membership") as server:
        yield server


def test_a_member_accepts_the_admin_role_and_the_other_admin_is_told(browser, membership_server, csp_errors):
    base, _ = membership_server
    nora = browser.new_context(viewport=DESKTOP).new_page()
    login(nora, base, "nora")
    nora.goto(f"{base}/w/north/settings/")
    row = nora.locator(".settings-members tr", has_text="milo")
    row.locator("select[name=role]").select_option("admin")
    row.locator("button", has_text="Change").click()
    expect(nora.locator(".page-messages")).to_contain_text("milo is invited to be an admin")
    expect(nora.locator(".settings-invitations")).to_contain_text("offered to their account")
    expect(nora.locator(".settings-members tr", has_text="milo").locator("select[name=role]")).to_have_value("member")

    milo = browser.new_context(viewport=PHONE).new_page()
    milo.on("console", lambda m: csp_errors.append(m.text) if "Content Security Policy" in m.text else None)
    login(milo, base, "milo")
    offer = milo.locator("#offers li", has_text="North Ltd")
    expect(offer).to_contain_text("as admin, from nora")
    no_sideways_scroll(milo)
    shot(milo, "offer-on-home-phone")
    offer.locator("button", has_text="Accept").click()
    expect(milo).to_have_url(f"{base}/w/north/")
    expect(milo.locator(".page-messages")).to_contain_text("Welcome to North Ltd")
    expect(milo.locator("#admin-news")).to_have_count(0)  # not told of themselves

    nora.goto(f"{base}/w/north/")
    news = nora.locator("#admin-news")
    expect(news).to_contain_text("milo became an admin")
    expect(news).to_contain_text("made by nora")
    shot(nora, "admin-news")
    news.locator("button", has_text="Noted").click()
    expect(nora.locator("#admin-news")).to_have_count(0)
    assert csp_errors == []


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_only_admin_is_told_why_they_cannot_leave(page, membership_server, size, csp_errors):
    base, _ = membership_server
    page.set_viewport_size(size)
    login(page, base, "milo")
    page.locator(".workspace-list li", has_text="South Ltd").locator("a.workspace-leave").click()
    expect(page.locator("#leave-workspace")).to_contain_text("You are the only admin of South Ltd")
    expect(page.locator("#leave-workspace button")).to_have_count(0)
    no_sideways_scroll(page)
    assert csp_errors == []


def test_a_member_leaves_a_workspace_from_the_home_page(page, membership_server, csp_errors):
    base, _ = membership_server
    page.set_viewport_size(PHONE)
    login(page, base, "milo")
    page.locator(".workspace-list li", has_text="North Ltd").locator("a.workspace-leave").click()
    expect(page.locator("h1")).to_have_text("Leave North Ltd?")
    no_sideways_scroll(page)
    shot(page, "leave-phone")
    page.locator("#leave-workspace button", has_text="Leave North Ltd").click()
    expect(page).to_have_url(f"{base}/")
    expect(page.locator(".page-messages")).to_contain_text("You left North Ltd.")
    expect(page.locator(".workspace-list")).not_to_contain_text("North Ltd")
    assert page.goto(f"{base}/w/north/").status == 404
    assert csp_errors == []
