"""Saved tasks in Chromium: `/` in the chat's box, the keyboard, a placeholder filled, the task sent;
the library page; and two rough edges of the chat: the first task of a conversation an upload
started, and the page's return after the server's (within 3 s, no stale notice)."""
from __future__ import annotations

import json
import time

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Daphne, login, migrated_env, run_script
from tests.browser.test_chat_browser import ARTIFACTS

BOX = "#chat-form textarea[name=message]"
FILLED = "Draft our Statement of Applicability for the Annex A 8 (technological) controls."


@pytest.fixture(scope="module")
def daphne(tmp_path_factory):
    """A server of this module's own (the last test stops and restarts it)."""
    tmp = tmp_path_factory.mktemp("saved_tasks")
    env = migrated_env(tmp)
    json.loads(run_script(env, "tests/browser/seed_saved_tasks.py", str(tmp)))
    server = Daphne(env, tmp / "daphne.log").start()
    try:
        yield server
    finally:
        server.stop()


def shot(page, name: str) -> None:
    """A screenshot for a reader of the change; the caret kept (hiding it adds an inline style, which
    the page's CSP refuses and this module counts)."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), caret="initial")


def visible_options(page) -> list[str]:
    return [o.get_attribute("data-name") for o in page.locator("#saved-task-list [role=option]").all() if o.is_visible()]


def test_a_saved_task_with_a_placeholder_is_picked_with_slash_and_the_keyboard_filled_and_sent(page, daphne,
                                                                                                  csp_errors):
    login(page, daphne.base, "max")
    page.goto(f"{daphne.base}/w/library/")
    box = page.locator(BOX)
    listbox = page.locator("#saved-task-list")
    box.click()
    box.press("/")
    expect(listbox).to_be_visible()
    assert visible_options(page) == ["Quarterly questionnaire", "RoPA entry", "SoA for an Annex A theme"]
    first = page.locator("#saved-task-list [role=option]").first
    expect(box).to_have_attribute("aria-activedescendant", first.get_attribute("id"))
    expect(first).to_have_attribute("aria-selected", "true")

    box.press_sequentially("a")  # "/a": every name has an a
    box.press_sequentially("nnex")  # "/annex": one left
    assert visible_options(page) == ["SoA for an Annex A theme"]
    expect(page.locator("#task-picker-status")).to_have_text(
        "1 saved task matches: arrows to choose, Enter to use, Escape to close.")
    box.press("Escape")  # closes the list, keeps the text
    expect(listbox).to_be_hidden()
    assert box.input_value() == "/annex"
    box.fill("")
    box.press("/")
    expect(listbox).to_be_visible()
    box.press("ArrowUp")  # from the first round to the last
    soa = page.locator("#saved-task-list [role=option][data-name='SoA for an Annex A theme']")
    expect(soa).to_have_attribute("aria-selected", "true")
    expect(box).to_have_attribute("aria-activedescendant", soa.get_attribute("id"))
    shot(page, "saved-tasks-picker")
    box.press("ArrowDown")
    box.press("ArrowUp")
    box.press("Enter")  # picks; sends nothing
    expect(listbox).to_be_hidden()
    assert page.locator("[data-run-status]").count() == 0

    fill = page.locator("#task-fill")
    expect(fill).to_be_visible()
    expect(page.locator("#task-fill-name")).to_have_text("SoA for an Annex A theme")
    theme = page.get_by_label("theme", exact=True)
    expect(theme).to_be_focused()
    theme.fill("8 (technological)")
    shot(page, "saved-tasks-fill")
    theme.press("Enter")
    expect(fill).to_be_hidden()
    expect(box).to_have_value(FILLED)
    expect(box).to_be_focused()
    expect(page.locator("#message-count")).to_contain_text(f"{len(FILLED)} / 20,000")

    box.press("Enter")
    run = page.locator("[data-run-status]").last
    expect(run).to_be_visible()
    expect(page.locator(".message--user").last).to_have_text(FILLED)
    expect(run).to_have_attribute("data-run-status", "completed", timeout=60_000)
    assert box.input_value() == ""
    assert csp_errors == []


def test_a_member_saves_an_own_task_and_a_malformed_one_is_refused_with_its_error(page, daphne):
    login(page, daphne.base, "max")
    page.goto(f"{daphne.base}/w/library/")
    page.get_by_role("link", name="Saved tasks").first.click()
    expect(page.locator("h1")).to_have_text("Saved tasks")
    library = page.locator("#workspace-tasks")
    expect(library).to_contain_text("SoA for an Annex A theme")
    assert library.locator("details").count() == 0  # a member uses the library, does not edit it
    page.fill("#new-task-name", "<b>Vendor review</b>")
    page.fill("#new-task-text", "Review {vendor for our {year} register.")
    page.click("text=Save the task")
    error = page.locator("#new-task-error")
    expect(error).to_contain_text("The '{' at character 8 is not closed")
    expect(page.locator("#new-task-text")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#new-task-name")).to_have_value("<b>Vendor review</b>")  # kept, as text
    page.fill("#new-task-text", "Review {vendor} for our {year} register.")
    page.click("text=Save the task")
    own = page.locator("#own-tasks")
    expect(own.locator(".saved-task-name", has_text="<b>Vendor review</b>")).to_be_visible()
    page.goto(f"{daphne.base}/w/library/")
    page.locator(BOX).press("/")
    page.locator(BOX).press_sequentially("vendor")
    assert visible_options(page) == ["<b>Vendor review</b>"]
    page.locator(BOX).press("Enter")
    expect(page.locator("#task-fill-fields label")).to_have_text(["vendor", "year"])
    page.get_by_label("vendor", exact=True).fill("Acme Cloud")
    page.get_by_label("year", exact=True).press("Escape")  # back to the box, nothing put in it
    expect(page.locator("#task-fill")).to_be_hidden()
    expect(page.locator(BOX)).to_have_value("/vendor")


def test_an_admin_curates_the_library_and_each_change_is_on_the_admin_changes_page(page, daphne):
    dialogs, accept = [], []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.accept() if accept else dialog.dismiss()))
    login(page, daphne.base, "ada")
    page.goto(f"{daphne.base}/w/library/settings/")
    page.get_by_role("link", name="Saved tasks").click()
    ropa = page.locator(".saved-task", has=page.locator(".saved-task-name", has_text="RoPA entry"))
    ropa.locator("summary").click()
    ropa.get_by_label("Task").fill("Draft a record of processing for our {team} team.")
    ropa.get_by_role("button", name="Save changes").click()
    expect(page.locator(".page-messages")).to_contain_text("Saved the changes to “RoPA entry”")
    expect(ropa.locator(".saved-task-text")).to_have_text("Draft a record of processing for our {team} team.")
    # A duplicate name, whatever its case, is refused where it was typed.
    page.fill("#new-task-name", "ropa ENTRY")
    page.fill("#new-task-text", "Another one.")
    page.click("text=Save the task")
    expect(page.locator("#new-task-error")).to_contain_text("has a task named “RoPA entry” already")
    # Deleting asks first: dismissed, nothing happens.
    ropa = page.locator(".saved-task", has=page.locator(".saved-task-name", has_text="RoPA entry"))
    ropa.locator("summary").click()
    ropa.get_by_role("button", name="Delete").click()
    assert dialogs == ["Delete “RoPA entry”?"]
    expect(ropa).to_be_visible()
    accept.append(True)
    ropa.get_by_role("button", name="Delete").click()
    expect(page.locator(".page-messages")).to_contain_text("Deleted “RoPA entry”")
    expect(page.locator("#workspace-tasks")).not_to_contain_text("RoPA entry")
    page.goto(f"{daphne.base}/w/library/audit/changes/?kind=tasks")
    rows = page.locator("tbody tr")
    expect(rows.first).to_contain_text("Saved task deleted")
    expect(rows.nth(1)).to_contain_text("Saved task edited")
    expect(rows.nth(1)).to_contain_text("Draft a record of processing for our {team} team.")
    expect(page.locator("tbody")).to_contain_text("Saved task added")
    expect(page.locator("tbody")).not_to_contain_text("Memory")


def test_an_auditor_reads_the_library_and_cannot_add_to_it(page, daphne):
    login(page, daphne.base, "aud")
    page.goto(f"{daphne.base}/w/library/tasks/")
    expect(page.locator("#workspace-tasks")).to_contain_text("SoA for an Annex A theme")
    assert page.locator("#new-task, #own-tasks, main details").count() == 0
    expect(page.locator(".readonly-note")).to_contain_text("you can read the library, not add to it")
    expect(page.locator("#workspace-tasks")).not_to_contain_text("Quarterly questionnaire")  # max's own


def test_an_upload_started_conversation_shows_its_first_run_not_the_welcome(page, daphne):
    login(page, daphne.base, "max")
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{daphne.base}/w/library/")
    expect(page.locator("#empty-state")).to_contain_text("What should Beyond draft?")
    page.set_input_files("#upload-files", [
        {"name": "scope.txt", "mimeType": "text/plain", "buffer": b"Our scope is the Lyon office."},
        {"name": "tool.exe", "mimeType": "application/octet-stream", "buffer": b"MZ\x90\x00\x03\x00" * 50}])
    report = page.locator("#uploads-report")
    expect(report).to_contain_text("This file was not attached")
    page.wait_for_url(f"{daphne.base}/w/library/c/*/")
    page.fill(BOX, "Draft a scope statement from the attached file")
    page.press(BOX, "Enter")
    run = page.locator("[data-run-status]").last
    expect(run).to_be_visible()
    expect(page.locator("#empty-state")).to_have_count(0)
    expect(report).to_be_empty()
    expect(run).to_be_in_viewport()
    expect(run).to_have_attribute("data-run-status", "completed", timeout=60_000)
    page.reload()  # and so it stays
    expect(page.locator("#empty-state")).to_have_count(0)
    expect(report).to_be_empty()


def test_the_page_is_back_within_3_s_of_the_server_with_no_stale_notice(page, daphne):
    login(page, daphne.base, "max")
    page.goto(f"{daphne.base}/w/slowlane/")
    page.fill(BOX, "Draft a slow note")
    page.press(BOX, "Enter")
    run = page.locator("[data-run-status]").last
    expect(run).to_have_attribute("ws-connect", f"/ws/runs/{run.get_attribute('id').split('-')[1]}/")
    banner = page.locator("#connection-banner")
    page.evaluate("""window.attempts = [];
        document.body.addEventListener('htmx:wsConnecting', () => window.attempts.push(performance.now()));""")
    daphne.stop()
    expect(banner).to_contain_text("Live updates lost", timeout=15_000)
    page.fill(BOX, "A task typed while the server is away")
    page.press(BOX, "Enter")
    notice = page.locator("#notice")
    expect(notice).to_contain_text("Could not reach the server", timeout=15_000)
    # Long enough that htmx's own backoff (doubling to 64 s) would be waiting tens of seconds.
    page.wait_for_timeout(20_000)
    restarting = page.evaluate("performance.now()")
    daphne.start()  # the same port
    back = time.monotonic()
    expect(banner).to_contain_text("Connection back", timeout=3_000)
    expect(notice).not_to_contain_text("Could not reach the server", timeout=1_000)
    took = time.monotonic() - back
    attempts = page.evaluate("window.attempts")
    # The knocking while the server was away: once it starts again, an attempt may wait for the
    # starting server's handshake, which is the server's time, not the page's retry policy.
    away = [at for at in attempts if at <= restarting]
    gaps = [(b - a) / 1000 for a, b in zip(away, away[1:])]
    print(f"reconnected {took:.2f} s after the server answered again; {len(attempts)} attempts, "
          f"longest gap {max(gaps):.2f} s")
    assert took < 3
    # The page kept knocking every 2 s at most, however long the server was away (htmx's own
    # backoff doubles to 64 s: whether it is back in time after an outage is then luck).
    assert len(away) >= 10 and max(gaps) <= 2.1
    assert page.locator(BOX).input_value() == "A task typed while the server is away"  # still kept


def test_without_a_live_run_the_stale_notice_goes_when_the_server_answers(page, daphne):
    login(page, daphne.base, "max")
    page.goto(f"{daphne.base}/w/library/")
    assert page.locator("[ws-connect]").count() == 0  # no websocket on this page
    daphne.stop()
    page.fill(BOX, "Typed while the server is away")
    page.press(BOX, "Enter")
    notice = page.locator("#notice")
    expect(notice).to_contain_text("Could not reach the server", timeout=15_000)
    page.wait_for_timeout(10_000)
    daphne.start()
    back = time.monotonic()
    expect(notice).not_to_contain_text("Could not reach the server", timeout=3_000)
    assert time.monotonic() - back < 3
