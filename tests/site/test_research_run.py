"""A full `beyond_run --research` on a loopback web: the evidence is recorded, URLs and prices in the
drafts are held to the approved pages, and a host the operator did not allow is never contacted."""
from __future__ import annotations

import io
import re
import json

import pytest
from django.core.management import CommandError, call_command

from beyond_site.runs.models import Run
from beyond_site.workspaces.models import Blob
from tests import scripting
from tests.pipeline.loopback_web import LoopbackSite, Route
from tests.scripting import PASS

pytestmark = pytest.mark.django_db(transaction=True)

PRICING = ("<html><head><title>Vendor pricing</title></head><body><main><h1>Pricing</h1>"
           "<p>The Pro plan costs $49 per user per month, billed yearly. Support is included for every team "
           "that signs up this year, and the plan covers single sign-on and audit logs.</p></main></body></html>")
ABOUT = ("<html><head><title>About the vendor</title></head><body><main><p>The vendor was founded in Lyon and "
         "serves two thousand customers across Europe with its ticketing product.</p></main></body></html>")


@pytest.fixture
def web(monkeypatch):
    with LoopbackSite() as site, LoopbackSite() as forbidden, LoopbackSite() as search:
        site.routes.update({"/robots.txt": Route(b"User-agent: *\nAllow: /\n", content_type="text/plain"),
                            "/pricing": Route(PRICING.encode()), "/about": Route(ABOUT.encode())})
        forbidden.routes["/secret"] = Route(b"<p>internal $1</p>")
        urls = [site.url("/pricing"), site.url("/about"), forbidden.url("/secret")]

        def answer(query):
            results = [{"url": u, "title": f"Result {n}", "content": "snippet"} for n, u in enumerate(urls)]
            return Route(json.dumps({"results": results}).encode(), content_type="application/json")

        search.routes["/search"] = answer
        monkeypatch.setenv("BEYOND_SEARCH", f"searxng:{search.origin}")
        monkeypatch.setenv("BEYOND_RESEARCH_ALLOW_HOSTS", site.host_port)
        yield site, forbidden


def research_script(pricing: str) -> dict:
    brief = scripting.brief(3)
    brief["evidence"] = [{"id": "E1", "url": pricing, "title": "Vendor pricing"}]
    return {
        "planner": [json.dumps(brief)],
        "steps": {
            "1": {"executor": [f"The Pro plan costs $49 per user per month ([pricing]({pricing}))."],
                  "verifier": [PASS]},
            "2": {"executor": ["Compare https://cheap.example/deal for offers.",
                               "See https://cheap.example/deal again."],
                  "verifier": [PASS, PASS]},
            "3": {"executor": ["The Pro plan costs $39 per user.", "The Pro plan costs $49 per user."],
                  "verifier": [PASS, PASS]},
        },
        "summarizer": [f"Pro costs $49 per user ({pricing})."],
    }


def run_research(tmp_path, data: dict) -> dict:
    path = scripting.write(tmp_path, data)
    out = io.StringIO()
    call_command("beyond_run", "--workspace", "acme", "--task", "Compare helpdesk tools for our budget",
                 "--research", "--provider", f"scripted:{path}", "--json", stdout=out)
    return json.loads(out.getvalue())


def mechanical(step: dict, attempt: int) -> list[str]:
    verdicts = step["attempts"][attempt - 1]["verdicts"]
    return [i["type"] for v in verdicts if v["source"] == "mechanical" for i in v["parsed"]["issues"]]


def test_a_research_run_records_its_evidence_and_holds_urls_and_prices_to_it(workspace, web, tmp_path):
    site, forbidden = web
    trace = run_research(tmp_path, research_script(site.url("/pricing")))
    assert trace["run"]["status"] == "completed" and trace["run"]["research"] is True
    evidence = {e["id"]: e for e in trace["evidence"]}
    assert evidence["E1"]["url"] == site.url("/pricing") and evidence["E1"]["status"] == "ok"
    assert evidence["E2"]["status"] == "ok" and evidence["E3"]["status"] == "refused"
    assert evidence["E3"]["reason"]  # why the page was not used, never silently dropped
    assert forbidden.requests == []  # the host the operator did not list was never contacted
    assert Blob.objects.filter(sha256=evidence["E1"]["sha256"], kept_for_audit=True).exists()

    one, two, three = trace["steps"]
    assert one["badge"] == "passed" and mechanical(one, 1) == []
    assert two["badge"] == "warning"
    assert mechanical(two, 1) == ["unapproved_url"] and mechanical(two, 2) == ["unapproved_url"]
    assert three["badge"] == "passed_after_rerender"
    assert mechanical(three, 1) == ["unsupported_price"] and mechanical(three, 2) == []
    assert trace["summary_findings"] == []

    run = Run.objects.get(pk=trace["run"]["id"])
    planner_given = "\n".join(m["content"] for m in _given(run, "planner"))
    assert "# Evidence E1: " in planner_given and "$49 per user per month" in planner_given
    assert all("$49 per user per month, billed yearly" not in m["content"] for m in _given(run, "verifier"))


def _given(run: Run, role: str) -> list[dict]:
    from beyond_site.runs.contexts import context_messages

    return [m for call in run.model_calls.filter(role=role).exclude(context=None) for m in context_messages(call.context)]


def test_a_recap_with_an_unsupported_price_is_flagged(workspace, web, tmp_path):
    site, _ = web
    data = research_script(site.url("/pricing"))
    data["summarizer"] = ["Pro costs $19 per user."]
    trace = run_research(tmp_path, data)
    assert [f["type"] for f in trace["summary_findings"]] == ["unsupported_price"]


def test_research_without_a_search_backend_is_a_clear_error(workspace, tmp_path, monkeypatch):
    monkeypatch.delenv("BEYOND_SEARCH", raising=False)
    with pytest.raises(CommandError, match="not configured"):
        run_research(tmp_path, research_script("https://example.org/pricing"))
    assert not Run.objects.exists()


def _research_page(workspace, web, tmp_path, user, role, path) -> tuple[str, str]:
    """(the page at `path`, formatted with the run's trace, as `user` with `role` sees it; the
    evidence link as marked) for a research run whose step links to its first source."""
    from django.test import Client

    from beyond_site.workspaces.models import Membership

    site, _ = web
    trace = run_research(tmp_path, research_script(site.url("/pricing")))
    Membership.objects.create(user=user, workspace=workspace, role=role)
    client = Client()
    client.force_login(user)
    page = client.get(path.format(run=trace["run"]["id"], conversation=trace["run"]["conversation"]))
    return page.content.decode(), f'<a href="{site.url("/pricing")}" data-evidence="E1"'


def test_the_page_shows_the_sources_and_marks_links_to_them(workspace, web, tmp_path, alice):
    page, marked = _research_page(workspace, web, tmp_path, alice, "member", "/w/acme/c/{conversation}/")
    assert 'data-source="E1" data-source-status="used"' in page
    assert 'data-source="E2" data-source-status="not-used"' in page
    assert 'data-source="E3" data-source-status="refused"' in page and "not used: " in page
    assert marked in page and '<sup class="evidence-id">E1</sup>' in page


def test_the_audit_page_marks_the_links_to_sources_as_the_chat_does(workspace, web, tmp_path, carol):
    page, marked = _research_page(workspace, web, tmp_path, carol, "auditor", "/w/acme/audit/runs/{run}/")
    assert marked in page and '<sup class="evidence-id">E1</sup>' in page


def test_a_source_that_is_not_a_web_address_is_never_a_link():
    from beyond_site.runs.sources import source_views

    [evil] = source_views([{"id": "E1", "url": "javascript:alert(1)", "status": "failed", "reason": "bad_url"}], None)
    assert evil.link == "" and not evil.approved


def test_the_exports_carry_the_sources_and_a_checked_recap_warning(workspace, web, tmp_path):
    import docx

    site, _ = web
    data = research_script(site.url("/pricing"))
    data["summarizer"] = ["Pro costs $19 per user."]
    trace = run_research(tmp_path, data)
    markdown, document = tmp_path / "out.md", tmp_path / "out.docx"
    call_command("beyond_export", str(trace["run"]["id"]), "--format", "md", "--out", str(markdown))
    call_command("beyond_export", str(trace["run"]["id"]), "--format", "docx", "--out", str(document))
    text = markdown.read_text()
    assert "## Appendix: sources" in text and re.search(r"\| E1 \| [^|]+ \| http://127\.0\.0\.1:\d+/pricing \|[^|]+\| used \|", text)
    assert r"\[unsupported\_price\]" in text.split("### Recap of the run")[1]  # escaped Markdown
    word = docx.Document(str(document))
    headings = [p.text for p in word.paragraphs if p.style.name.startswith("Heading")]
    assert "Appendix: sources" in headings
    assert any("E1" in cell.text for table in word.tables for row in table.rows for cell in row.cells)
    assert any("[unsupported_price]" in p.text for p in word.paragraphs)


def test_auditors_see_every_fetch_and_the_text_extracted_from_each_page(workspace, web, tmp_path, alice, bob):
    from django.test import Client

    from beyond_site.workspaces.models import Membership

    site, forbidden = web
    trace = run_research(tmp_path, research_script(site.url("/pricing")))
    run_id = trace["run"]["id"]
    Membership.objects.create(user=alice, workspace=workspace, role="auditor")
    client = Client()
    client.force_login(alice)
    page = client.get(f"/w/acme/audit/runs/{run_id}/").content.decode()
    section = page[page.index('id="research"'):page.index("</section>", page.index('id="research"'))]
    assert section.count("<tr>") == 4  # the header and the three pages asked for
    assert site.url("/pricing") in section and forbidden.url("/secret") in section
    assert "refused (refused_by_policy)" in section and "About the vendor" in section
    assert section.count("extracted text</a>") == 2  # the refused page has none

    text = client.get(f"/w/acme/audit/runs/{run_id}/sources/E1/").content.decode()
    assert "The Pro plan costs $49 per user per month" in text and "<main>" not in text
    refused = client.get(f"/w/acme/audit/runs/{run_id}/sources/E3/").content.decode()
    assert "No text was extracted" in refused
    assert client.get(f"/w/acme/audit/runs/{run_id}/sources/E9/").status_code == 404

    client.force_login(bob)  # not a member of acme
    assert client.get(f"/w/acme/audit/runs/{run_id}/sources/E1/").status_code == 404
