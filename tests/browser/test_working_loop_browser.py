"""The working loop in Chromium: a follow-up that revises, Stop, Run again, managing conversations,
the connection-lost banner, and an over-long task refused instead of cut."""
from __future__ import annotations

import re
import time
from datetime import datetime

from playwright.sync_api import expect

from tests.browser.conftest import Daphne, login, record_of, run_script, seeded_database

BOX = "#chat-form textarea[name=message]"


def send(page, task: str):
    """Send `task` from the page's composer; the run it starts."""
    runs = page.locator("[data-run-status]")
    before = runs.count()
    page.fill(BOX, task)
    page.press(BOX, "Enter")
    expect(runs).to_have_count(before + 1)
    run = page.locator(f"#{runs.nth(before).get_attribute('id')}")
    expect(run).to_be_visible()
    return run


def run_id(run) -> int:
    return int(run.get_attribute("id").removeprefix("run-"))


def test_a_follow_up_revises_the_released_document(page, server_parts):
    daphne, env, _ = server_parts
    login(page, daphne.base, "alice")
    page.goto(f"{daphne.base}/w/offline/")
    first = send(page, "Draft our information security policy")
    expect(first).to_have_attribute("data-run-status", "completed", timeout=30_000)
    page.wait_for_url(re.compile(r"/w/offline/c/\d+/$"))
    titles = [t.inner_text() for t in first.locator("[data-step] .step-title").all()]
    second = send(page, "Add a section on remote work")
    expect(second).to_have_attribute("data-run-status", "completed", timeout=30_000)
    revised = [t.inner_text() for t in second.locator("[data-step] .step-title").all()]
    assert revised == titles[:-1] + ["Remote work", titles[-1]]  # before the section that closes the policy
    expect(second.locator(".recap")).to_contain_text("This document revises the one released earlier")
    assert page.locator("[data-run-status]").count() == 2  # both in the same conversation

    before, after = record_of(env, run_id(first)), record_of(env, run_id(second))
    assert after["conversation"] == before["conversation"]
    released = {s["index"]: s["content"].strip() for s in before["steps"]}
    revised_steps = {s["index"]: s["content"].strip() for s in after["steps"]}
    calls = {role: [c for c in after["calls"] if c["role"] == role] for role in ("planner", "executor", "verifier")}
    assert calls["planner"] and calls["executor"] and calls["verifier"]
    for call in calls["planner"] + calls["executor"]:
        assert all(content in call["given"] for content in released.values())
        assert "Draft our information security policy" in call["given"]  # the earlier message too
    for call in calls["verifier"]:
        # The verifier sees the brief and the one draft under review (a carried-over step is its own
        # draft): no other step of the earlier document, not the earlier message, not its recap.
        under_review = revised_steps[call["step"]]  # steps after the one added moved down by one
        others = [content for content in released.values() if content != under_review]
        assert not any(content in call["given"] for content in others)
        assert "Draft our information security policy" not in call["given"]
        assert "This document responds to" not in call["given"]


def test_stop_mid_run_keeps_step_one_and_asks_the_models_nothing_more(page, server_parts):
    daphne, env, _ = server_parts
    login(page, daphne.base, "alice")
    page.goto(f"{daphne.base}/w/stoppable/")
    run = send(page, "Draft an access-control note")
    expect(run.locator('[data-step="1"][data-badge="passed"]')).to_be_visible(timeout=20_000)
    run.locator('button[data-action="stop"]').click()
    clicked = datetime.now().astimezone()
    expect(run).to_have_attribute("data-run-status", "cancelled", timeout=15_000)
    expect(run).to_contain_text("Stopped by alice.")
    time.sleep(1.0)  # anything still on its way would arrive now
    record = record_of(env, run_id(run))
    assert record["status"] == "cancelled"
    assert [s["status"] for s in record["steps"]] == ["released", "not_released", "not_released"]
    late = [c for c in record["calls"] if datetime.fromisoformat(c["created_at"]) > clicked]
    assert all((c["error"] or "").startswith("cancelled") for c in late), late  # recorded as cancelled, nothing new
    assert not [c for c in record["calls"] if c["role"] == "summarizer"]
    expect(run.locator('[data-step="2"] .step-content')).to_have_count(0)
    page.reload()
    expect(page.locator(f"#run-{run_id(run)}")).to_have_attribute("data-run-status", "cancelled")


def test_run_again_starts_the_task_anew_in_the_same_conversation(page, server_parts):
    daphne, env, _ = server_parts
    login(page, daphne.base, "alice")
    page.goto(f"{daphne.base}/w/failing/")
    first = send(page, "Draft a note that will fail")
    expect(first).to_have_attribute("data-run-status", "failed", timeout=20_000)
    expect(first).to_contain_text("The planner could not produce a usable plan")
    first.locator("details.run-reason summary").click()
    expect(first.locator("details.run-reason")).to_contain_text("the planner gave no valid brief")
    first.locator('button[data-action="run-again"]').dblclick()  # an impatient double click starts one run
    expect(page.locator("[data-run-status]")).to_have_count(2)
    expect(first.locator('button[data-action="run-again"]')).to_have_count(0)
    expect(first).to_contain_text("Run again below.")
    second = page.locator("[data-run-status]").last
    expect(second).to_have_attribute("data-run-status", "failed", timeout=20_000)
    assert run_id(second) != run_id(first)
    record = record_of(env, run_id(second))
    assert record["retry_of"] == run_id(first)
    assert record["conversation"] == record_of(env, run_id(first))["conversation"]
    expect(page.locator(".exchange").last).to_contain_text("Run again of an earlier run")
    page.reload()
    expect(page.locator("[data-run-status]")).to_have_count(2)
    expect(page.locator('button[data-action="run-again"]')).to_have_count(1)  # the new run's only


def test_rename_search_and_delete_a_conversation(page, server_parts):
    daphne, _, _ = server_parts
    login(page, daphne.base, "alice")
    page.goto(f"{daphne.base}/w/offline/")
    run = send(page, "Draft our asset register overview")
    expect(run).to_have_attribute("data-run-status", "completed", timeout=30_000)
    page.wait_for_url(re.compile(r"/w/offline/c/\d+/$"))
    head = page.locator("#conversation-head")
    expect(head).to_contain_text("Draft our asset register overview")
    expect(page.locator("#conversations")).to_contain_text("Draft our asset register overview")

    def rename(title):
        head.locator("summary").click()
        head.locator("input[name=title]").fill(title)
        head.locator('button[data-action="rename"]').click()
        expect(page.locator("#conversation-head h1")).to_have_text(title)

    expect(page).to_have_title(re.compile(r"^Draft our asset register overview · "))
    rename("Asset register 2026")
    expect(page).to_have_title(re.compile(r"^Asset register 2026 · .* · Beyond$"))  # the tab follows
    expect(page.locator("#conversations")).to_contain_text("Asset register 2026")
    expect(page.locator("#conversations time").first).to_be_visible()

    search = page.locator("#conversation-q")
    search.fill("no such thing anywhere")
    search.press("Enter")
    expect(page.locator("#conversations")).to_contain_text("No conversation matches")
    page.locator("#conversation-q").fill("asset")
    page.locator("#conversation-q").press("Enter")
    expect(page.locator("#conversations")).to_contain_text("Asset register 2026")

    # A rename while the list shows a search redraws that search, not the first page of all.
    rename("Inventory 2026")
    expect(page.locator("#conversation-q")).to_have_value("asset")
    expect(page.locator("#conversations")).to_contain_text("Inventory 2026")  # its task still says asset
    page.locator("#conversation-q").fill("zebra")
    page.locator("#conversation-q").press("Enter")
    expect(page.locator("#conversations")).to_contain_text("No conversation matches")
    rename("Inventory zebra")
    expect(page.locator("#conversations")).to_contain_text("Inventory zebra")
    expect(page.locator("#conversation-q")).to_have_value("zebra")
    expect(page.locator("#conversations")).not_to_contain_text("No conversation matches")
    # What is typed in the box but not searched yet is not the list shown: the rename keeps the list.
    page.locator("#conversation-q").fill("typed but not searched")
    rename("Inventory zebra 2")
    expect(page.locator("#conversations")).to_contain_text("Inventory zebra 2")
    expect(page.locator("#conversation-q")).to_have_value("zebra")

    page.once("dialog", lambda dialog: dialog.accept())
    head = page.locator("#conversation-head")
    head.locator("summary").click()
    head.locator('button[data-action="delete-conversation"]').click()
    page.wait_for_url(f"{daphne.base}/w/offline/")
    expect(page.locator("#conversations")).not_to_contain_text("Inventory zebra 2")


def test_the_page_says_when_the_live_connection_is_lost_and_when_it_is_back(page, tmp_path):
    env, _ = seeded_database(tmp_path)
    daphne = Daphne(env, tmp_path / "daphne.log").start()
    try:
        login(page, daphne.base, "alice")
        page.goto(f"{daphne.base}/w/slow/")
        run = send(page, "Draft a slow note")
        expect(run.locator(".progress")).to_contain_text("Rendering", timeout=20_000)
        banner = page.locator("#connection-banner")
        expect(banner).to_be_hidden()
        daphne.stop()
        expect(banner).to_be_visible(timeout=15_000)
        expect(banner).to_contain_text("Live updates lost")
        page.fill(BOX, "A task typed while the server is away")
        page.press(BOX, "Enter")
        expect(page.locator("#notice")).to_contain_text("Could not reach the server", timeout=15_000)
        assert page.locator(BOX).input_value() == "A task typed while the server is away"  # kept, not lost
        daphne.start()  # the same port: the page's websocket reconnects by itself
        expect(banner).to_contain_text("Connection back", timeout=30_000)
        # The run was executing in the process that stopped: the page catches up and says so.
        expect(run).to_have_attribute("data-run-status", "failed", timeout=30_000)
        expect(run).to_contain_text("The run stopped because the server running it restarted or stopped.")
        expect(banner).to_be_hidden(timeout=10_000)
    finally:
        daphne.stop()


def test_an_over_long_task_is_refused_and_kept_not_cut(page, server_parts):
    daphne, env, _ = server_parts
    login(page, daphne.base, "alice")
    page.goto(f"{daphne.base}/w/offline/")
    text = "x" * 25_000
    box = page.locator(BOX)
    box.fill(text)
    expect(page.locator("#message-count")).to_contain_text("25,000 / 20,000")
    expect(page.locator("#message-count")).to_contain_text("Too long to send")
    box.press("Enter")
    page.wait_for_timeout(500)
    assert box.input_value() == text  # nothing cut, nothing cleared
    assert page.locator("[data-run-status]").count() == 0
    # The server refuses it too, whatever the browser does.
    page.evaluate("document.querySelector('#chat-form textarea').setCustomValidity('')")
    page.evaluate("htmx.trigger('#chat-form', 'submit')")
    expect(page.locator("#notice")).to_contain_text("This task is 25,000 characters long")
    assert box.input_value() == text
    assert page.locator("[data-run-status]").count() == 0


MANY_CHATS = """
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.utils import timezone
from beyond_site.workspaces.models import Conversation, Membership, Workspace
alice = get_user_model().objects.get(username="alice")
workspace = Workspace.objects.create(slug="many-chats", name="Many chats")
Membership.objects.create(user=alice, workspace=workspace, role="member")
for n in range(50):
    chat = Conversation.objects.create(workspace=workspace, title=f"Earlier chat {n}", created_by=alice)
    Conversation.objects.filter(pk=chat.pk).update(updated_at=timezone.now() - timedelta(hours=100 - n))
"""


def test_a_new_conversation_joins_a_full_list_at_the_top_and_the_oldest_moves_to_the_next_page(page, server_parts):
    daphne, env, _ = server_parts
    run_script(env, "manage.py", "shell", "-v", "0", "-c", MANY_CHATS)
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    login(page, daphne.base, "alice")
    page.goto(f"{daphne.base}/w/many-chats/")
    items = page.locator("#conversations li[data-conversation]")
    expect(items).to_have_count(50)
    expect(items.last).to_contain_text("Earlier chat 0")
    run = send(page, "Draft our clear desk policy")
    expect(items.first).to_contain_text("Draft our clear desk policy")
    expect(items.first.locator("a")).to_have_attribute("aria-current", "page")
    expect(items).to_have_count(50)  # one page still: the oldest went to the next
    expect(page.locator("#conversations")).not_to_contain_text("Earlier chat 0")
    expect(page.locator("#chats-paging a[rel=next]")).to_have_text("Older conversations")
    expect(run).to_have_attribute("data-run-status", "completed", timeout=30_000)
    page.reload()  # what the server draws from scratch matches what the swap left
    expect(items).to_have_count(50)
    expect(items.first).to_contain_text("Clear desk policy")  # named after its document once the brief came
    expect(page.locator("#conversations")).not_to_contain_text("Earlier chat 0")
    assert errors == []
