"""A refused submission shows its reason in the chat: htmx swaps the notice of a 400 answer
(base.html's response handling), and the typed task stays in the box."""
from __future__ import annotations

from playwright.sync_api import expect

BOX = "#chat-form textarea[name=message]"


def test_a_400_answer_shows_its_notice_and_keeps_the_task(alice_page, server):
    base, _ = server
    page = alice_page
    page.goto(f"{base}/w/steady/")
    page.evaluate("document.getElementById('conversation-id').value = 'abc'")  # a tampered form
    page.fill(BOX, "Draft a visitor policy")
    page.press(BOX, "Enter")
    expect(page.locator("#notice .alert")).to_have_text("That is not a valid conversation.", timeout=10_000)
    expect(page.locator(BOX)).to_have_value("Draft a visitor policy")
    assert page.locator("[data-run-status]").count() == 0
