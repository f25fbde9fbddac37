"""Web research in Chromium: the toggle beside Send, the Sources panel, evidence ids on links."""
from __future__ import annotations

import json
import re

from playwright.sync_api import expect

from tests.browser.conftest import Daphne, add_scripted_workspace, login, seeded_database
from tests.pipeline.loopback_web import LoopbackSite, Route
from tests.scripting import PASS, brief

FETCHED = re.compile(r"^\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4}, \d{2}:\d{2} UTC$")
PRICING = ("<html><head><title>Vendor pricing</title></head><body><main><h1>Pricing</h1><p>The Pro plan costs $49 "
           "per user per month, billed yearly, with single sign-on and audit logs for every team.</p></main></body></html>")


def script(pricing: str) -> dict:
    plan = brief(2)
    plan["evidence"] = [{"id": "E1", "url": pricing, "title": "Vendor pricing"}]
    return {"planner": [json.dumps(plan)],
            "steps": {"1": {"executor": [f"Pro costs $49 per user per month ([vendor pricing]({pricing}))."],
                            "verifier": [PASS]},
                      "2": {"executor": ["Budget for the team accordingly."], "verifier": [PASS]}},
            "summarizer": ["Two parts."]}


def test_the_toggle_the_sources_panel_and_evidence_ids(page, tmp_path):
    with LoopbackSite() as site, LoopbackSite() as search:
        site.routes.update({"/robots.txt": Route(b"User-agent: *\nAllow: /\n", content_type="text/plain"),
                            "/pricing": Route(PRICING.encode())})
        search.routes["/search"] = lambda q: Route(json.dumps({"results": [
            {"url": site.url("/pricing"), "title": "Vendor pricing", "content": "Pro plan"},
            {"url": "http://10.0.0.1/internal", "title": "Internal", "content": "no"}]}).encode(),
            content_type="application/json")
        env, _ = seeded_database(tmp_path)
        env.update(BEYOND_SEARCH=f"searxng:{search.origin}", BEYOND_RESEARCH_ALLOW_HOSTS=site.host_port)
        add_scripted_workspace(env, "research", script(site.url("/pricing")), tmp_path)
        daphne = Daphne(env, tmp_path / "daphne.log").start()
        try:
            login(page, daphne.base, "alice")
            page.goto(f"{daphne.base}/w/research/")
            toggle = page.locator("input[data-research-toggle]")
            expect(toggle).not_to_be_checked()
            toggle.check()
            page.fill("#chat-form textarea[name=message]", "Compare helpdesk tools for our budget")
            page.press("#chat-form textarea[name=message]", "Enter")
            run = page.locator("[data-run-status]").last
            expect(run).to_have_attribute("data-run-status", "completed", timeout=30_000)
            sources = run.locator(".sources-list li")
            expect(sources).to_have_count(2)
            expect(run.locator('[data-source="E1"]')).to_have_attribute("data-source-status", "used")
            expect(run.locator('[data-source="E2"]')).to_have_attribute("data-source-status", "refused")
            # When the page was read, in words (it once read "fetched 2026-12-0307:01").
            expect(run.locator('[data-source="E1"] time')).to_have_text(FETCHED)
            assert run.locator('[data-source="E1"] time').get_attribute("datetime").endswith("+00:00")
            link = run.locator('[data-step="1"] a[data-evidence="E1"]')
            expect(link).to_have_attribute("href", site.url("/pricing"))
            expect(run.locator('[data-step="1"] sup.evidence-id')).to_have_text("E1")
            page.reload()  # the toggle is remembered for this conversation
            expect(page.locator("input[data-research-toggle]")).to_be_checked()
            assert site.paths().count("/pricing") == 1
            run_id = page.locator("[data-run-status]").last.get_attribute("id").removeprefix("run-")
            page.goto(f"{daphne.base}/w/research/audit/runs/{run_id}/")
            fetched = page.locator("#research table time").first
            expect(fetched).to_have_text(re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \S+$"))  # the audit pages' form
            assert fetched.get_attribute("title").endswith("(UTC)")
        finally:
            daphne.stop()


def test_without_a_search_backend_the_toggle_says_research_is_not_configured(page, server):
    base, _ = server
    login(page, base, "alice")
    page.goto(f"{base}/w/offline/")
    expect(page.locator("[data-research-unavailable]")).to_contain_text("not configured")
    expect(page.locator("input[data-research-toggle]")).to_have_count(0)
