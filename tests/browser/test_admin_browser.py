"""Workspace administration in Chromium: staff create a workspace; an admin invites; the invited
person creates an account (or logs in) and lands in the workspace with the role; a used or expired
link is refused; members and auditors cannot reach or change the admin pages."""
from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import PASSWORD, login
from tests.browser.test_chat_browser import shot


def invite(page, base: str, role: str, note: str) -> str:
    page.goto(f"{base}/w/team/settings/")
    form = page.locator("form[action$='/settings/invitations/']")
    form.locator("select[name=role]").select_option(role)
    form.locator("input[name=note]").fill(note)
    form.locator("button[type=submit]").click()
    link = page.locator("#invitation-link").input_value()
    assert re.fullmatch(rf"{re.escape(base)}/invitations/[\w-]+/", link), link
    return link


def test_staff_create_a_workspace_from_the_home_page(page, server):
    base, _ = server
    login(page, base, "staff")
    page.fill("#new-workspace-name", "Northwind Labs")
    page.click(".home-new-form button[type=submit]")
    expect(page).to_have_url(f"{base}/w/northwind-labs/settings/")  # at its top, where the confirmation is
    expect(page.locator(".page-messages")).to_contain_text(
        "Workspace Northwind Labs created at the address northwind-labs: you are its admin.")
    expect(page.locator(".page-messages")).to_be_in_viewport()
    expect(page.locator(".settings-members").first).to_contain_text("staff")
    page.goto(f"{base}/")
    expect(page.locator(".workspace-list")).to_contain_text("Northwind Labs")


def test_the_home_page_offers_no_workspace_creation_without_the_staff_flag(page, server):
    base, _ = server
    login(page, base, "alice")
    expect(page.locator(".home-new-form")).to_have_count(0)
    assert page.goto(f"{base}/workspaces/new/").status == 403


def test_an_invited_newcomer_creates_an_account_and_lands_in_the_workspace(browser, server):
    base, _ = server
    admin = browser.new_page()
    login(admin, base, "carol")
    link = invite(admin, base, "auditor", "Grace, external auditor")
    expect(admin.locator("#invitation-link")).to_be_visible()
    shot(admin, "invitation-created")
    newcomer = browser.new_context().new_page()
    newcomer.goto(link)
    expect(newcomer.locator("h1")).to_have_text("Join Team Ltd")
    expect(newcomer.locator(".invitation")).to_contain_text("as auditor")
    newcomer.fill("#id_username", "grace")
    newcomer.fill("#id_password1", PASSWORD)
    newcomer.fill("#id_password2", PASSWORD)
    newcomer.click("#signup-form button[type=submit]")
    expect(newcomer).to_have_url(f"{base}/w/team/")
    expect(newcomer.locator(".page-messages")).to_contain_text("Welcome to Team Ltd")
    expect(newcomer.locator(".topbar-workspace .role")).to_have_text("Auditor")
    expect(newcomer.locator(".readonly-note")).to_be_visible()  # an auditor cannot post
    # The link was single-use: someone else opening it is refused.
    other = browser.new_context().new_page()
    other.goto(link)
    expect(other.locator("[data-invitation-refused]")).to_contain_text("has been used already")
    # The admin sees it accepted.
    admin.goto(f"{base}/w/team/settings/")
    expect(admin.locator("tr[data-state=accepted]", has_text="Grace")).to_contain_text("accepted by grace")


def test_an_invited_user_with_a_login_logs_in_then_joins(browser, server):
    base, _ = server
    admin = browser.new_page()
    login(admin, base, "carol")
    link = invite(admin, base, "member", "Frank")
    page = browser.new_context().new_page()
    page.goto(link)
    page.click("a:has-text('I have an account: log in')")
    page.fill("input[name=username]", "frank")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    expect(page).to_have_url(link)
    page.click("button:has-text('Join as frank')")
    expect(page).to_have_url(f"{base}/w/team/")
    expect(page.locator(".topbar-workspace .role")).to_have_text("Member")
    expect(page.locator("#chat-form")).to_be_visible()


def test_an_expired_or_made_up_link_is_refused(page, server):
    base, ids = server
    login(page, base, "bob")
    assert page.goto(f"{base}/invitations/{ids['expired_token']}/").status == 410
    expect(page.locator("[data-invitation-refused]")).to_contain_text("has expired")
    assert page.goto(f"{base}/invitations/made-up-token/").status == 410
    assert page.goto(f"{base}/w/team/").status == 404  # bob is still not a member


def test_a_withdrawn_link_is_refused(browser, server):
    base, _ = server
    admin = browser.new_page()
    login(admin, base, "carol")
    link = invite(admin, base, "admin", "wrong person")
    admin.goto(f"{base}/w/team/settings/")
    admin.locator("tr[data-state=pending]", has_text="wrong person").locator("button:has-text('Withdraw')").click()
    expect(admin.locator(".page-messages")).to_contain_text("Invitation withdrawn")
    page = browser.new_context().new_page()
    page.goto(link)
    expect(page.locator("[data-invitation-refused]")).to_contain_text("withdrawn")


def test_a_member_cannot_reach_the_admin_pages(alice_page, server):
    base, _ = server
    page = alice_page
    page.goto(f"{base}/w/team/")
    expect(page.locator("a.topbar-link:has-text('Settings')")).to_have_count(0)
    response = page.goto(f"{base}/w/team/settings/")
    assert response.status == 403
    expect(page.locator("[data-error='403']")).to_contain_text("Your role (member) cannot do this here.")
    shot(page, "refused-403")


def test_an_auditor_cannot_change_anything(page, server):
    base, _ = server
    login(page, base, "dave")
    page.goto(f"{base}/w/team/")
    expect(page.locator("#chat-form")).to_have_count(0)
    expect(page.locator(".memory-add")).to_have_count(0)
    assert page.goto(f"{base}/w/team/settings/").status == 403
    token = page.evaluate("() => JSON.parse(document.body.getAttribute('hx-headers'))['X-CSRFToken']")
    for url, form in ((f"{base}/w/team/settings/invitations/", "role=admin&days=7"),
                      (f"{base}/w/team/settings/members/", "username=dave&role=admin"),
                      (f"{base}/w/team/memories/", "text=Forged")):
        status = page.evaluate("""([url, token, body]) => fetch(url, {method: 'POST', body,
            headers: {'X-CSRFToken': token, 'Content-Type': 'application/x-www-form-urlencoded'}}).then(r => r.status)""",
                               [url, token, form])
        assert status == 403, url
    page.goto(f"{base}/w/team/")
    expect(page.locator("li.memory", has_text="Forged")).to_have_count(0)
