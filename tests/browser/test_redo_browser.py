"""Working on a finished document in Chromium (docs/working-loop.md): redo a ⚠ warning step with an
instruction, regenerate the run, edit and resend the last task; each new run is brought into view,
the chat links it to the earlier version, its export is the new document, and the audit record
keeps every earlier run, linked both ways, with its chains intact."""
from __future__ import annotations

import json

from playwright.sync_api import expect

from tests import scripting
from tests.browser.conftest import add_scripted_workspace, login, record_of, run_script
from tests.browser.test_chat_browser import shot
from tests.browser.test_working_loop_browser import run_id, send
from tests.scripting import PASS, fail

INSTRUCTION = "Use the 24 h deadline from our policy."
TASK = "Draft our incident response note"


#: A step long enough that one run fills the window: the view must move to a new run.
SCOPE = "Scope: every system we run.\n\n" + "\n\n".join(f"System {n} is covered by this note." for n in range(1, 25))


def _steps(two: list, verifier_two: list) -> dict:
    return {1: {"executor": [SCOPE], "verifier": [PASS]},
            2: {"executor": two, "verifier": verifier_two},
            3: {"executor": ["Review: once a year."], "verifier": [PASS]}}


def _switch(env, tmp_path, name: str, script: dict, slug: str = "redoing") -> None:
    """The workspace's models read another scripted file from now on (tests/browser/seed_declining.py)."""
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(script))
    run_script(env, "tests/browser/seed_declining.py", slug, str(path))


def _wait_in_view(page, shown: str, hidden: str) -> None:
    """Wait (5 s at most) until `shown` lies within the conversation's scrolled box and `hidden` not."""
    page.wait_for_function("""([shown, hidden]) => {
        const box = document.getElementById('messages').getBoundingClientRect();
        const seen = (selector) => {
            const it = document.querySelector(selector).getBoundingClientRect();
            return it.top < box.bottom && it.bottom > box.top;
        };
        return seen(shown) && !seen(hidden);
    }""", arg=[shown, hidden], timeout=5_000)


def test_redo_a_warning_step_then_regenerate_then_edit_and_resend(page, server_parts, tmp_path):
    daphne, env, _ = server_parts
    add_scripted_workspace(env, "redoing", scripting.script(_steps(
        ["Report incidents promptly.", "Report incidents soon."], [fail("no deadline"), fail("no deadline")]),
        task=TASK), tmp_path)
    login(page, daphne.base, "alice")
    page.goto(f"{daphne.base}/w/redoing/")
    first = send(page, TASK)
    expect(first).to_have_attribute("data-run-status", "completed", timeout=30_000)
    expect(first.locator('[data-step="2"]')).to_have_attribute("data-badge", "warning")
    expect(first.locator(".run-duration")).to_contain_text("took ")
    prominent = first.locator('[data-step="2"] .redo--warning summary')
    expect(prominent).to_have_text("Redo this step to fix it")
    expect(first.locator('[data-step="1"] summary[data-action="redo"]')).to_have_text("Redo step")

    # The redo: step 2 is drafted anew (the verifier fails it once, then passes it).
    _switch(env, tmp_path, "redo", scripting.script(
        {2: {"executor": ["Report incidents within 24 h.", "Report incidents within 24 h of detection."],
             "verifier": [fail("no deadline"), PASS]}}, planner=[], n_steps=3,
        summarizer=["Step 2 now gives the 24 h deadline."]))
    prominent.click()
    first.locator('[data-step="2"] textarea[name="instruction"]').fill(INSTRUCTION)
    first.locator('[data-step="2"] [data-action="redo-submit"]').click()
    runs = page.locator("[data-run-status]")
    expect(runs).to_have_count(2)
    redo = page.locator(f"#{runs.nth(1).get_attribute('id')}")
    expect(redo).to_have_attribute("data-run-status", "completed", timeout=30_000)
    # Brought into view and followed: the page is not left on the earlier run's recap.
    _wait_in_view(page, f"#run-{run_id(redo)}", f"#run-{run_id(first)} .recap")
    exchange = page.locator(".exchange").last
    expect(exchange.locator('[data-lineage="redo"]')).to_contain_text("Redo of step 2 of the earlier version")
    expect(exchange.locator('[data-lineage="redo"] a')).to_have_attribute("href", f"#run-{run_id(first)}")
    expect(exchange.locator(".message-text")).to_contain_text(INSTRUCTION)
    expect(redo.locator('[data-step="1"]')).to_have_attribute("data-carried-over", "true")
    expect(redo.locator('[data-step="3"]')).to_have_attribute("data-carried-over", "true")
    expect(redo.locator('[data-step="2"]')).not_to_have_attribute("data-carried-over", "true")
    expect(redo.locator('[data-step="2"]')).to_have_attribute("data-badge", "passed_after_rerender")
    expect(redo.locator('[data-step="2"]')).to_contain_text("within 24 h of detection")
    expect(redo.locator('[data-step="1"] .step-carried')).to_contain_text("Carried over unchanged")
    expect(redo.locator("[data-document-version]")).to_have_attribute("data-document-version", "2")
    shot(page, "chat-redo-step")
    exported = page.request.get(daphne.base + redo.locator("[data-export=client-md]").get_attribute("href")).text()
    assert "Scope: every system we run." in exported and "within 24 h of detection" in exported
    assert "Review: once a year." in exported and "Report incidents soon." not in exported
    record = record_of(env, run_id(redo))
    assert (record["redo_of"], record["redo_step"]) == (run_id(first), 2)
    assert [s["carried_over"] for s in record["steps"]] == [True, False, True]
    assert not [c for c in record["calls"] if c["role"] == "planner"]
    assert all(INSTRUCTION in c["given"] for c in record["calls"] if c["role"] == "executor")
    assert not any(INSTRUCTION in c["given"] for c in record["calls"] if c["role"] == "verifier")
    before = record_of(env, run_id(first))
    assert before["steps"][1]["content"] == "Report incidents soon." and before["steps"][1]["badge"] == "warning"

    # Regenerate the redo's run: the same task, drafted anew.
    _switch(env, tmp_path, "regenerate", scripting.script(_steps(["Report within 24 h."], [PASS]), task=TASK))
    redo.locator('[data-action="regenerate"]').click()
    expect(runs).to_have_count(3)
    regenerated = page.locator(f"#{runs.nth(2).get_attribute('id')}")
    expect(regenerated).to_have_attribute("data-run-status", "completed", timeout=30_000)
    expect(page.locator(".exchange").last.locator('[data-lineage="regenerates"] a')).to_have_attribute(
        "href", f"#run-{run_id(redo)}")
    assert record_of(env, run_id(regenerated))["regenerates"] == run_id(redo)

    # Edit and resend the last task: only the last exchange offers it.
    expect(page.locator('[data-action="edit-task"]')).to_have_count(1)
    page.locator(".exchange").last.locator('[data-action="edit-task"]').click()
    page.locator(".exchange").last.locator('textarea[name="message"]').fill(TASK + " for the Lyon office")
    page.locator(".exchange").last.locator('[data-action="edit-resend"]').click()
    expect(runs).to_have_count(4)
    edited = page.locator(f"#{runs.nth(3).get_attribute('id')}")
    expect(edited).to_have_attribute("data-run-status", "completed", timeout=30_000)
    expect(page.locator(".exchange").last.locator('[data-lineage="edited"] a')).to_have_attribute(
        "href", f"#run-{run_id(regenerated)}")
    expect(page.locator(".exchange").last.locator(".message-text")).to_have_text(TASK + " for the Lyon office")
    assert record_of(env, run_id(edited))["edited_from"] == run_id(regenerated)
    expect(page.locator('[data-action="edit-task"]')).to_have_count(1)

    # The audit record keeps every earlier run and links them both ways.
    first, redo, regenerated, edited = run_id(first), run_id(redo), run_id(regenerated), run_id(edited)
    page.goto(f"{daphne.base}/w/redoing/audit/runs/{first}/")
    later = page.locator('[data-lineage="later"]')
    expect(later).to_contain_text(f"run {redo}")
    expect(later).to_contain_text("redoes a step")
    page.goto(f"{daphne.base}/w/redoing/audit/runs/{redo}/")
    expect(page.locator('[data-lineage="redo_of"]')).to_contain_text(f"step 2 of run {first}")
    expect(page.locator('[data-lineage="redo_of"]')).to_contain_text(INSTRUCTION)
    expect(page.locator("#step-1 [data-carried-over]")).to_contain_text(f"run {first}")
    expect(page.locator('[data-lineage="later"]')).to_contain_text("regenerates it")
    page.goto(f"{daphne.base}/w/redoing/audit/runs/{edited}/")
    expect(page.locator('[data-lineage="edited_from"]')).to_contain_text(f"run {regenerated}")
    # Exit 1 (CalledProcessError) if any record of the four runs no longer matched its chain.
    assert "record intact: 1 workspace, 4 runs" in run_script(env, "manage.py", "beyond_audit", "verify",
                                                                 "--workspace", "redoing")


def test_a_new_run_comes_into_view_mid_run_and_after_run_again(page, server_parts, tmp_path):
    """A long conversation: the run a task starts is in view while it runs (not the earlier run's
    recap), and so is the run Run again starts, however far up its button was."""
    daphne, env, _ = server_parts
    add_scripted_workspace(env, "following", scripting.script(_steps([SCOPE], [PASS])), tmp_path)
    login(page, daphne.base, "alice")
    page.goto(f"{daphne.base}/w/following/")
    first = send(page, TASK)
    expect(first).to_have_attribute("data-run-status", "completed", timeout=30_000)
    # The next runs take a few seconds, and halt at step 2 (no verdict): they can be run again.
    _switch(env, tmp_path, "slow", scripting.script({
        1: {"executor": [{"content": SCOPE, "delay_s": 1.5}], "verifier": [PASS]},
        2: {"executor": [{"content": "Report incidents.", "delay_s": 3}],
            "verifier": [{"error": "timeout"}, {"error": "timeout"}]}}, n_steps=2), slug="following")
    second = send(page, "Draft our access note")
    expect(second.locator('[data-step="1"]')).to_have_attribute("data-step-status", "released", timeout=30_000)
    expect(second).to_have_attribute("data-run-status", "running")  # mid-run
    _wait_in_view(page, f"#run-{run_id(second)} [data-step='1']", f"#run-{run_id(first)} .recap")
    expect(second).to_have_attribute("data-run-status", "halted", timeout=30_000)
    second.locator('[data-step="1"] .step-title').scroll_into_view_if_needed()  # the member reads up the page
    second.locator('button[data-action="run-again"]').click()
    runs = page.locator("[data-run-status]")
    expect(runs).to_have_count(3)
    third = page.locator(f"#{runs.nth(2).get_attribute('id')}")
    expect(third.locator('[data-step="1"]')).to_have_attribute("data-step-status", "released", timeout=30_000)
    _wait_in_view(page, f"#run-{run_id(third)} [data-step='1']", f"#run-{run_id(second)} [data-step='1'] .step-title")
