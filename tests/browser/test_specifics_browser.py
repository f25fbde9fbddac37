"""Unsourced specifics in Chromium: a quiet marker on each unsourced specific of a released step,
live and after the run, with its one-line explanation on hover and on keyboard focus, and the
step's Sources panel, whose passages open on a click."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, PHONE, login, no_sideways_scroll, seeded_server
from tests.browser.test_chat_browser import shot

BOX = "#chat-form textarea[name=message]"


@pytest.fixture(scope="module")
def specifics_server(tmp_path_factory):
    with seeded_server(tmp_path_factory, "specifics") as server:
        yield server


def tip_shown(locator) -> str:
    """What the marker's explanation bubble shows (its ::after content), "none" when hidden."""
    return locator.evaluate("el => getComputedStyle(el, '::after').content")


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_markers_and_the_sources_panel(page, specifics_server, size, csp_errors):
    base, seeded = specifics_server
    page.set_viewport_size(size)
    login(page, base, "sam")
    page.goto(f"{base}/w/planted/")
    page.fill(BOX, seeded["task"])
    page.press(BOX, "Enter")
    run = page.locator("[data-run-status]").last
    step1 = run.locator('[data-step="1"]')

    # Live: step 1 is released with its marker while step 3 is still being drafted.
    marker = step1.locator("mark.unsourced")
    expect(marker).to_have_text("72 hours", timeout=15_000)
    assert run.get_attribute("data-run-status") == "running"
    expect(step1.locator("mark.unsourced")).to_have_count(1)  # 24 hours, a day, C. Martin...: sourced
    assert tip_shown(marker) in ("none", "normal")
    marker.focus()
    assert "Unsourced duration or deadline" in tip_shown(marker)
    page.locator("body").click(position={"x": 2, "y": 2})
    marker.hover()
    assert "found in nothing the executor was given" in tip_shown(marker)

    expect(run).to_have_attribute("data-run-status", "completed", timeout=20_000)
    step2 = run.locator('[data-step="2"]')
    expect(step2.locator("mark.unsourced")).to_have_text(
        ["Marc Dubois", "Northwind Security Ltd", "+44 20 7946 0958", "marc.dubois@northwind.example"])
    expect(run.locator('[data-step="3"] mark.unsourced')).to_have_count(4)
    expect(run.locator(".recap mark.unsourced")).to_have_text("72 hours")

    panel = step1.locator("details.specifics-panel")
    expect(panel.locator(":scope > summary")).to_have_text("Sources: 2 passages · 1 unsourced specific")
    passages = panel.locator(".specifics-sources > li")
    expect(passages.first).to_be_hidden()
    panel.locator(":scope > summary").click()
    expect(passages).to_have_count(2)
    expect(panel.locator(".unsourced-list li")).to_have_text(["72 hours duration or deadline"])
    file_source = passages.filter(has_text="breach-policy.md")
    expect(file_source.locator("summary")).to_contain_text("24 hours, a day")
    expect(file_source.locator("blockquote")).to_be_hidden()
    file_source.locator("summary").click()
    expect(file_source.locator("blockquote")).to_have_text(
        "As a processor, Acme Cloud Services notifies the controller within 24 h of becoming aware of a personal "
        "data breach.")
    memory = passages.filter(has_text="memory 1")
    memory.locator("summary").click()
    expect(memory.locator("blockquote")).to_contain_text("Claire Martin (external, Lex Conseil SAS)")
    step1.locator("mark.unsourced").focus()
    shot(page, f"specifics-{size['width']}")
    no_sideways_scroll(page)

    # A reload replays the same markers and panels from the database.
    page.reload()
    run = page.locator(f"#{run.get_attribute('id')}")
    expect(run.locator('[data-step="2"] mark.unsourced')).to_have_count(4)
    expect(run.locator("details.specifics-panel")).to_have_count(4)  # three steps and the recap
    assert csp_errors == []
