"""End to end in Chromium: live steps, badges, reloads, inert payloads, refusal of non-members."""
from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import login

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
BOX = "#chat-form textarea[name=message]"


def send(page, base: str, slug: str, task: str):
    page.goto(f"{base}/w/{slug}/")
    page.fill(BOX, task)
    page.press(BOX, "Enter")
    run = page.locator("[data-run-status]").last
    expect(run).to_be_visible()
    return run


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=False)


def badges(run) -> list[str | None]:
    return [s.get_attribute("data-badge") for s in run.locator("[data-step]").all()]


@pytest.mark.parametrize("width,height,label", [(1280, 860, "desktop"), (390, 844, "phone")])
def test_steps_appear_one_by_one_before_the_run_ends(page, server, width, height, label):
    base, _ = server
    page.set_viewport_size({"width": width, "height": height})
    login(page, base, "alice")
    run = send(page, base, "steady", "Draft an access-control note for the Paris office")
    expect(run.locator('[data-step="1"][data-badge="passed"]')).to_be_visible(timeout=15_000)
    # Step 1 is on screen while the run is still going, and step 2 is not released yet.
    assert run.get_attribute("data-run-status") == "running"
    assert run.get_attribute("ws-connect", timeout=1000).startswith("/ws/runs/")
    assert run.locator('[data-step="2"]').get_attribute("data-step-status") == "pending"
    shot(page, f"chat-{label}-mid-run")
    expect(run.locator('[data-step="2"][data-badge="passed_after_rerender"]')).to_be_visible(timeout=15_000)
    expect(run).to_have_attribute("data-run-status", "completed", timeout=20_000)
    assert badges(run) == ["passed", "passed_after_rerender", "warning"]
    expect(run.locator('[data-step="3"] .step-warnings')).to_contain_text("Still no review frequency.")
    expect(run.locator(".recap")).to_contain_text("part 3 carries a warning")
    run.locator(".export-menu summary").click()
    expect(run.locator('[data-export="client-docx"]')).to_be_visible()
    assert run.get_attribute("ws-connect") is None
    text = run.inner_text().lower()
    titles = " ".join(b.get_attribute("title") for b in run.locator(".badge").all()).lower()
    for word in ("verified", "true", "correct"):
        assert word not in text and word not in titles
    run.locator('[data-step="1"] .badge').hover()
    shot(page, f"chat-{label}-finished")
    sidebar = page.locator("#sidebar")
    if label == "phone":  # the side list collapses behind a button at phone width
        expect(sidebar).to_be_hidden()
        page.click("button[data-toggle=sidebar]")
        expect(sidebar.locator("a[aria-current=page]")).to_be_visible()
        shot(page, "chat-phone-conversations-open")
    else:
        expect(sidebar.locator("a[aria-current=page]")).to_be_visible()


def test_enter_sends_and_shift_enter_adds_a_line(alice_page, server):
    base, _ = server
    page = alice_page
    page.goto(f"{base}/w/steady/")
    page.fill(BOX, "first line")
    page.press(BOX, "Shift+Enter")
    page.keyboard.type("second line")
    assert page.input_value(BOX) == "first line\nsecond line"
    assert page.locator("[data-run-status]").count() == 0
    page.press(BOX, "Enter")
    expect(page.locator("[data-run-status]")).to_have_count(1)
    expect(page.locator(BOX)).to_have_value("")
    expect(page.locator(".message--user").last).to_contain_text("second line")
    expect(page.locator("[data-run-status]")).to_have_attribute("data-run-status", "completed", timeout=20_000)


def test_a_reload_mid_run_and_after_replays_the_released_steps(alice_page, server):
    base, _ = server
    page = alice_page
    run = send(page, base, "steady", "Draft the note again")
    expect(run.locator('[data-step="1"][data-badge="passed"]')).to_be_visible(timeout=15_000)
    page.reload()
    run = page.locator("[data-run-status]").last
    # Rendered by the server at once, then continued live over a new websocket.
    expect(run.locator('[data-step="1"][data-badge="passed"]')).to_be_visible(timeout=2_000)
    expect(run).to_have_attribute("data-run-status", "completed", timeout=20_000)
    assert badges(run) == ["passed", "passed_after_rerender", "warning"]
    page.reload()
    run = page.locator("[data-run-status]").last
    assert run.get_attribute("data-run-status") == "completed"
    assert badges(run) == ["passed", "passed_after_rerender", "warning"]
    expect(run.locator('[data-step="2"] .step-content')).to_have_text("Managers approve every access request.")


def test_a_halted_run_shows_the_halt_and_releases_nothing_after_it(alice_page, server):
    base, _ = server
    page = alice_page
    run = send(page, base, "halting", "Draft something that halts")
    expect(run).to_have_attribute("data-run-status", "halted", timeout=20_000)
    assert badges(run) == ["passed", "halted", None]
    expect(run.locator('[data-step="2"]')).to_contain_text("no parseable verdict")
    assert run.locator('[data-step="2"] .step-content').count() == 0
    expect(run.locator('[data-step="3"]')).to_contain_text("Not released")
    assert "never to be seen" not in page.content()
    shot(page, "chat-desktop-halted")


def test_model_made_payloads_are_inert(alice_page, server, dialogs):
    base, _ = server
    page = alice_page
    run = send(page, base, "evil", "Draft with hostile model output")
    expect(run).to_have_attribute("data-run-status", "completed", timeout=20_000)
    expect(run.locator('[data-step="1"] .step-content')).to_contain_text("<script>window.pwned = 1")
    page.reload()
    expect(page.locator("[data-run-status]").last).to_contain_text('<img src=x onerror="window.pwned = 4">Title')
    page.wait_for_timeout(500)
    assert page.evaluate("window.pwned") is None
    assert dialogs == []
    assert page.locator(".run img").count() == 0
    assert page.locator('a[href^="javascript:"]').count() == 0
    link = page.locator(".run a", has_text="a fine link").first
    assert link.get_attribute("href") == "https://example.org/policy"
    assert link.get_attribute("rel") == "noopener noreferrer"


def test_a_non_member_is_refused_on_the_page_and_the_websocket(page, server):
    base, ids = server
    login(page, base, "bob")
    assert page.goto(f"{base}/w/steady/").status == 404
    assert page.goto(f"{base}/w/steady/c/{ids['queued_conversation']}/").status == 404
    page.goto(f"{base}/")
    code = page.evaluate("""(url) => new Promise((resolve) => {
        const ws = new WebSocket(url);
        ws.onclose = (event) => resolve(event.code);
        setTimeout(() => resolve("timeout"), 5000);
    })""", f"ws://127.0.0.1:{base.rsplit(':', 1)[1]}/ws/runs/{ids['queued_run']}/")
    assert code == 4403


def test_deleting_a_memory_asks_first_and_works_with_the_edit_box_emptied(alice_page, server):
    base, _ = server
    page = alice_page
    page.goto(f"{base}/w/steady/")
    page.fill("#new-memory", "A fact to delete soon.")
    page.click(".memory-add button[type=submit]")
    memory = page.locator("li.memory", has_text="A fact to delete soon.")
    expect(memory).to_have_count(1)
    memory.locator("summary").click()
    memory.locator("textarea").fill("")  # the edit box is required: it must not block Delete
    asked = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    memory.locator("button.danger").click()
    page.wait_for_timeout(300)
    assert asked and "Delete this memory?" in asked[0]
    expect(memory).to_have_count(1)  # dismissed: kept
    page.once("dialog", lambda dialog: dialog.accept())
    memory.locator("button.danger").click()
    expect(page.locator("li.memory", has_text="A fact to delete soon.")).to_have_count(0)
    expect(page.locator("li.memory", has_text="40-person SaaS company")).to_have_count(1)


def test_a_task_sent_while_the_list_shows_a_search_redraws_the_first_page(page, server):
    """A new conversation belongs to the first page of all conversations: sent while the side list
    shows a search, the list becomes that page again (as a reload of the pushed URL would show),
    rather than the search's results with an item that does not match."""
    base, _ = server
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    login(page, base, "alice")
    page.goto(f"{base}/w/steady/")
    page.fill("#conversation-q", "no conversation says this")
    page.press("#conversation-q", "Enter")
    expect(page.locator("#conversations-empty")).to_contain_text("No conversation matches")
    expect(page.locator("#chats-shown")).to_have_value("other")
    page.fill(BOX, "Draft a clear desk policy for the Lyon office")
    page.press(BOX, "Enter")
    expect(page.locator("#conversations li", has_text="Draft a clear desk policy for the Lyon office")).to_be_visible()
    expect(page.locator("#conversation-q")).to_have_value("")
    expect(page.locator("#chats-shown")).to_have_value("first")
    expect(page.locator("#conversations-empty")).to_have_count(0)
    assert errors == []


def test_on_a_phone_the_side_panels_are_drawers_one_at_a_time_closed_by_escape_or_a_click_outside(alice_page, server):
    page, (base, _) = alice_page, server
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{base}/w/steady/")
    chats, memories = page.locator("#sidebar"), page.locator("#memories-panel")
    page.click('button[data-toggle="sidebar"]')
    expect(chats).to_be_visible()
    page.click('#sidebar .conversation-search input')  # a click inside keeps it open
    expect(chats).to_be_visible()
    page.click('button[data-toggle="memories"]')
    expect(memories).to_be_visible()
    expect(chats).to_be_hidden()
    expect(page.locator('button[data-toggle="sidebar"]')).to_have_attribute("aria-expanded", "false")
    page.keyboard.press("Escape")
    expect(memories).to_be_hidden()
    page.click('button[data-toggle="sidebar"]')
    expect(chats).to_be_visible()
    page.mouse.click(380, 600)  # on the chat, beside the drawer
    expect(chats).to_be_hidden()
    font = page.eval_on_selector(BOX, "box => getComputedStyle(box).fontSize")
    assert font == "16px"  # no zoom when a field takes focus
