"""Research against a loopback web: a SearXNG-compatible endpoint and a small site served here."""
from __future__ import annotations

import gzip
import hashlib
import json
import re
import zlib

import pytest

from pipeline.context import Context
from pipeline.net import AddressPolicy
from pipeline.research import (USER_AGENT, FetchPolicy, SearxngBackend, StaticBackend, run_research)
from tests.pipeline.loopback_web import LoopbackSite, Route, html

PRICING_HTML = html("Vendor pricing", "<p>The Pro plan costs $49 per user per month, billed yearly.</p>"
                                      "<table><tr><td>Team</td><td>€1 200,50 a year</td></tr></table>"
                                      "<p>Enterprise plans start at CHF 1'200 per month for 50 users.</p>")


def searxng(urls: list[str]):
    def answer(query: dict) -> Route:
        assert query["format"] == ["json"]
        results = [{"url": u, "title": f"Result {n}", "content": "snippet"} for n, u in enumerate(urls)]
        return Route(json.dumps({"query": query["q"][0], "results": results}).encode(),
                     content_type="application/json")
    return answer


@pytest.fixture
def web():
    with LoopbackSite() as site, LoopbackSite() as forbidden, LoopbackSite() as search:
        big = html("Big", "<p>" + "word " * 80_000 + "</p>")
        site.routes.update({
            "/robots.txt": Route(b"User-agent: *\nDisallow: /private/\n", content_type="text/plain"),
            "/pricing": Route(PRICING_HTML),
            "/plans.txt": Route("Team plan: 1 200,50 € par an.\nPro: $49.".encode(), content_type="text/plain"),
            "/hop": Route(status=301, headers={"Location": "/pricing"}),
            "/moved": Route(status=302, headers={"Location": forbidden.url("/secret")}),
            "/big": Route(big),
            "/big-stream": Route(big, no_length=True),
            "/report.pdf": Route(b"%PDF-1.7 ...", content_type="application/pdf"),
            "/archive.zip": Route(b"PK\x03\x04", content_type="application/zip"),
            "/slow": Route(html("Slow", "<p>" + "late " * 400 + "</p>"), trickle_s=0.2),
            "/private/page": Route(html("Private", "<p>Not for robots, $1.</p>")),
            "/empty": Route(b"<html><body><script>var x = 1;</script></body></html>"),
        })
        forbidden.routes.update({"/secret": Route(html("Secret", "<p>internal</p>")),
                                 "/robots.txt": Route(b"", content_type="text/plain")})
        paths = ["/pricing", "/plans.txt", "/hop", "/moved", "/big", "/big-stream", "/report.pdf", "/archive.zip",
                 "/slow", "/private/page", "/missing", "/empty"]
        urls = [site.url(p) for p in paths] + [forbidden.url("/direct"), site.url("/pricing?utm_source=dup")]
        search.routes["/search"] = searxng(urls)
        yield site, forbidden, search


def policy(site: LoopbackSite, **limits) -> FetchPolicy:
    defaults = dict(max_bytes=100_000, total_timeout_s=1.0, max_pages=20, results_per_query=20)
    return FetchPolicy(address_policy=AddressPolicy.from_setting(site.host_port), **(defaults | limits))


async def test_every_page_is_recorded_with_its_outcome_and_the_forbidden_host_is_never_contacted(web):
    site, forbidden, search = web
    events: list[dict] = []
    result = await run_research(Context(task="Compare the Vendor Example Pro and Team plan prices"),
                                backend=SearxngBackend(search.origin), fetch_policy=policy(site),
                                on_event=events.append)
    outcome = {item.url.replace(site.origin, "").replace(forbidden.origin, "forbidden"): (item.status, item.reason)
               for item in result.items}
    assert outcome == {
        "/pricing": ("ok", None), "/plans.txt": ("ok", None), "/hop": ("ok", None),
        "/moved": ("refused", "refused_by_policy"), "/big": ("failed", "too_big"),
        "/big-stream": ("failed", "too_big"), "/report.pdf": ("failed", "not_html"),
        "/archive.zip": ("failed", "not_html"), "/slow": ("failed", "timeout"),
        "/private/page": ("refused", "robots"), "/missing": ("failed", "http_404"),
        "/empty": ("failed", "no_text"), "forbidden/direct": ("refused", "refused_by_policy"),
    }
    assert forbidden.requests == []                         # not even its robots.txt
    assert site.paths().count("/robots.txt") == 1           # cached per host per run
    assert "/private/page" not in site.paths()
    assert {r["user_agent"] for r in site.requests} == {USER_AGENT}
    assert len(result.items) == 13                          # the utm_source duplicate is fetched once


async def test_usable_pages_carry_their_text_hash_and_fetch_record(web):
    site, _, search = web
    result = await run_research(Context(task="Vendor pricing"), backend=SearxngBackend(search.origin),
                                fetch_policy=policy(site))
    assert [i.id for i in result.items] == [f"E{n}" for n in range(1, 14)]
    pricing, plans, hop = result.items[:3]
    assert pricing.title == "Vendor pricing" and "$49 per user per month" in pricing.text
    assert "€1 200,50" in pricing.text and "CHF 1'200" in pricing.text
    assert "Home | Pricing" not in pricing.text              # main text, not the navigation
    assert pricing.sha256 == hashlib.sha256(pricing.text.encode()).hexdigest()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00", pricing.fetched_at)
    assert pricing.http_status == 200 and pricing.bytes == len(PRICING_HTML) and pricing.elapsed_s > 0
    assert plans.text == "Team plan: 1 200,50 € par an.\nPro: $49." and plans.content_type.startswith("text/plain")
    assert hop.final_url == site.url("/pricing") and hop.hops == [site.url("/hop"), site.url("/pricing")]
    assert [e.id for e in result.for_context()] == ["E1", "E2", "E3"]
    assert result.for_context()[2].url == site.url("/pricing")
    big_stream = next(i for i in result.items if i.url.endswith("/big-stream"))
    assert big_stream.text == "" and big_stream.sha256 == "" and big_stream.bytes > 100_000
    moved = next(i for i in result.items if i.url.endswith("/moved"))
    assert moved.http_status == 302 and moved.final_url.endswith("/secret")


async def test_progress_events_come_in_order_and_account_for_every_page(web):
    site, _, search = web
    events: list[dict] = []
    result = await run_research(Context(task="Compare Vendor Example plans"), backend=SearxngBackend(search.origin),
                                fetch_policy=policy(site), on_event=events.append)
    types = [e["type"] for e in events]
    assert types[0] == "research_started" and types[-1] == "research_done"
    assert events[0]["backend"] == f"searxng:{search.origin}" and events[0]["query_source"] == "task_reader"
    assert events[0]["queries"] == result.queries == ["Vendor Example plans", "Vendor Example"]
    # The searches run at once: each is announced as it ends, in whatever order they end.
    assert sorted(e["query"] for e in events if e["type"] == "search_done") == sorted(result.queries)
    pages = [e for e in events if e["type"] in ("page_fetched", "page_refused")]
    assert sorted(e["id"] for e in pages) == sorted(i.id for i in result.items)
    assert all((e["type"] == "page_refused") == (e["status"] == "refused") for e in pages)
    assert "text" not in pages[0]
    assert events[-1] | {"elapsed_s": 0} == {"type": "research_done", "pages": 13, "usable": 3, "failed": 7,
                                              "refused": 3, "elapsed_s": 0, "notes": []}


async def test_pages_of_one_host_are_fetched_a_few_at_a_time(tmp_path):
    with LoopbackSite({f"/p{n}": Route(html(f"Page {n}", "<p>Enough text to read.</p>"), delay_s=0.2)
                       for n in range(6)}) as site:
        results = tmp_path / "results.json"
        results.write_text(json.dumps({"results": {"*": [{"url": site.url(f"/p{n}"), "title": f"P{n}",
                                                           "snippet": ""} for n in range(6)]}}))
        result = await run_research(Context(task="pages of text"), backend=StaticBackend(results),
                                    fetch_policy=policy(site, per_host_concurrency=2, total_timeout_s=5))
    assert [i.status for i in result.items] == ["ok"] * 6
    assert site.max_in_flight == 2


async def test_a_robots_txt_that_cannot_be_read_forbids_the_host_for_this_run(tmp_path):
    with LoopbackSite({"/robots.txt": Route(b"down", status=503, content_type="text/plain"),
                       "/a": Route(html("A", "<p>text</p>"))}) as site:
        results = tmp_path / "results.json"
        results.write_text(json.dumps({"results": {"*": [{"url": site.url("/a")}]}}))
        result = await run_research(Context(task="alpha"), backend=StaticBackend(results),
                                    fetch_policy=policy(site))
    assert [(i.status, i.reason) for i in result.items] == [("failed", "robots_unavailable")]
    assert site.paths() == ["/robots.txt"]


async def test_a_search_that_fails_is_a_note_and_an_event_not_a_crash(web):
    site, _, search = web
    search.routes["/search"] = Route(b"oops", status=500, content_type="text/plain")
    events: list[dict] = []
    result = await run_research(Context(task="Vendor pricing"), backend=SearxngBackend(search.origin),
                                fetch_policy=policy(site), on_event=events.append)
    assert result.items == [] and result.notes == ["Search for 'Vendor pricing' failed: HTTP 500"]
    assert [e for e in events if e["type"] == "search_done"] == [
        {"type": "search_done", "query": "Vendor pricing", "results": 0, "urls": [], "error": "HTTP 500"}]


async def test_compressed_pages_are_read_and_stacked_or_unknown_encodings_are_refused(tmp_path):
    page = html("Compressed", "<p>The Pro plan costs $49 per user per month.</p>")
    with LoopbackSite({"/gzip": Route(gzip.compress(page), headers={"Content-Encoding": "gzip"}),
                       "/deflate": Route(zlib.compress(page), headers={"Content-Encoding": "deflate"}),
                       "/stacked": Route(gzip.compress(gzip.compress(page)), headers={"Content-Encoding": "gzip, gzip"}),
                       "/br": Route(page, headers={"Content-Encoding": "br"})}) as site:
        results = tmp_path / "results.json"
        results.write_text(json.dumps({"results": {"*": [{"url": site.url(p)} for p in
                                                         ("/gzip", "/deflate", "/stacked", "/br")]}}))
        result = await run_research(Context(task="compressed pages"), backend=StaticBackend(results),
                                    fetch_policy=policy(site))
        asked = {r["accept_encoding"] for r in site.requests}
    assert [(i.status, i.reason) for i in result.items] == [("ok", None), ("ok", None), ("failed", "bad_encoding"),
                                                            ("failed", "bad_encoding")]
    assert "$49 per user per month" in result.items[0].text and result.items[0].bytes == len(page)
    assert asked == {"gzip, deflate"}  # never an encoding Beyond cannot decode under a bound


async def test_a_search_reply_over_its_limit_is_a_failed_search(web):
    site, _, search = web
    search.routes["/search"] = Route(gzip.compress(bytes(50_000_000)), content_type="application/json",
                                     headers={"Content-Encoding": "gzip"})
    result = await run_research(Context(task="Vendor pricing"), backend=SearxngBackend(search.origin),
                                fetch_policy=policy(site))
    assert result.items == []
    assert result.notes == ["Search for 'Vendor pricing' failed: the reply was not read: the body is larger than "
                            "2,000,000 bytes"]
