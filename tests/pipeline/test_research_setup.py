"""Research settings, search backends and search queries, without a network."""
from __future__ import annotations

import json

import httpx
import pytest

from pipeline.context import Context, HistoryMessage
from pipeline.net import AddressPolicy
from pipeline.providers.offline import OfflineProvider
from pipeline.providers.scripted import ScriptedProvider
from pipeline.research import (BraveBackend, Fetcher, FetchPolicy, SearchConfigError, SearchError, SearchResult,
                               SearxngBackend, StaticBackend, parse_queries, parse_search_setting, search_setting,
                               task_queries)
from pipeline.research.run import choose_queries
from pipeline.parsing import ReplyError
from pipeline.topology import RoleConfig


def test_the_search_setting_names_one_backend(tmp_path):
    results = tmp_path / "r.json"
    results.write_text("{}")
    assert parse_search_setting(None) is None and parse_search_setting("  ") is None
    assert parse_search_setting("searxng:http://127.0.0.1:8888/") == SearxngBackend("http://127.0.0.1:8888")
    assert parse_search_setting("brave", env={"BRAVE_API_KEY": "k"}) == BraveBackend("k")
    assert parse_search_setting(f"static:{results}") == StaticBackend(results)
    assert "secret" not in repr(BraveBackend("secret-key"))


@pytest.mark.parametrize("value, message", [
    ("searxng:", "needs the instance's http(s) URL"), ("searxng:ftp://x", "needs the instance's http(s) URL"),
    ("brave", "needs BRAVE_API_KEY"), ("static:", "needs the path"), ("static:/no/such/file.json", "no such file"),
    ("google", "expected searxng:URL, brave or static:PATH"),
])
def test_a_wrong_search_setting_says_what_is_wrong(value, message):
    with pytest.raises(SearchConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_search_setting(value, env={})


def test_the_page_can_say_whether_research_is_available():
    unset = search_setting({})
    assert not unset.configured
    assert unset.message == "Web research is not configured on this server (BEYOND_SEARCH is not set)."
    wrong = search_setting({"BEYOND_SEARCH": "brave"})
    assert not wrong.configured and "BRAVE_API_KEY" in wrong.message
    good = search_setting({"BEYOND_SEARCH": "searxng:http://search.internal:8080"})
    assert good.configured and good.message == "Web research uses searxng:http://search.internal:8080."


def test_the_fetch_policy_reads_the_operator_allow_list():
    policy = FetchPolicy.from_env({"BEYOND_RESEARCH_ALLOW_HOSTS": "intranet.local:8080, 127.0.0.1:9000"})
    assert policy.address_policy == AddressPolicy(frozenset({("intranet.local", 8080), ("127.0.0.1", 9000)}))
    assert FetchPolicy.from_env({}).address_policy.allow == frozenset()


async def test_brave_is_asked_with_its_key_header_and_read_from_web_results():
    seen: list[httpx.Request] = []

    def brave(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"web": {"results": [
            {"url": "https://vendor.example/pricing", "title": "Pricing", "description": "Plans"},
            {"url": "javascript:alert(1)", "title": "bad"}, {"title": "no url"},
            {"url": "https://vendor.example/docs", "title": "Docs"}]}})

    async with httpx.AsyncClient(transport=httpx.MockTransport(brave)) as client:
        results = await BraveBackend("the-key").search("vendor pricing", client=client, limit=5)
    assert results == [SearchResult("https://vendor.example/pricing", "Pricing", "Plans"),
                       SearchResult("https://vendor.example/docs", "Docs", "")]
    assert seen[0].url.host == "api.search.brave.com" and seen[0].url.path == "/res/v1/web/search"
    assert seen[0].headers["X-Subscription-Token"] == "the-key" and seen[0].url.params["q"] == "vendor pricing"


async def test_searxng_results_are_read_and_cut_at_the_limit():
    def searx(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/searx/search" and request.url.params["format"] == "json"
        return httpx.Response(200, json={"results": [{"url": f"https://e.example/{n}", "title": str(n),
                                                      "content": "c"} for n in range(9)]})

    async with httpx.AsyncClient(transport=httpx.MockTransport(searx)) as client:
        results = await SearxngBackend("http://search.internal/searx").search("q", client=client, limit=3)
    assert [r.url for r in results] == ["https://e.example/0", "https://e.example/1", "https://e.example/2"]


@pytest.mark.parametrize("response, error", [
    (httpx.Response(500), "HTTP 500"), (httpx.Response(200, text="<html>"), "the reply is not JSON"),
    (httpx.Response(200, json=[1, 2]), "the reply is not a JSON object"),
])
async def test_a_search_backend_failure_is_a_search_error(response, error):
    async with httpx.AsyncClient(transport=httpx.MockTransport(lambda request: response)) as client:
        with pytest.raises(SearchError, match=error):
            await SearxngBackend("http://search.internal").search("q", client=client, limit=3)


async def test_the_static_backend_answers_the_exact_query_or_the_star_list(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"results": {
        "vendor pricing": [{"url": "https://vendor.example/pricing", "title": "Pricing", "snippet": "s"}],
        "*": [{"url": "https://fallback.example/", "title": "Any"}]}}))
    backend = StaticBackend(path)
    async with httpx.AsyncClient() as client:
        assert [r.url for r in await backend.search("vendor pricing", client=client, limit=5)] == [
            "https://vendor.example/pricing"]
        assert [r.title for r in await backend.search("other", client=client, limit=5)] == ["Any"]
        path.write_text("[]")
        with pytest.raises(SearchError, match='no "results" object'):
            await backend.search("other", client=client, limit=5)


# ---- queries -----------------------------------------------------------------------------------

@pytest.mark.parametrize("task, queries", [
    ("Compare the prices of Slack and Microsoft Teams for a 50-person company and draft a recommendation email",
     ["prices Slack Microsoft Teams 50-person company recommendation email", "Slack", "Microsoft Teams"]),
    ("Draft an access control policy for ISO 27001", ["access control policy ISO 27001", "ISO 27001"]),
    ('Write a note on "Google Workspace Business Plus" pricing',
     ["note Google Workspace Business Plus pricing", "Google Workspace Business Plus"]),
    ("Prepare a record of processing for payroll", ["record processing payroll"]),
    ("please", []),
])
def test_the_task_reader_picks_the_task_s_own_words(task, queries):
    assert task_queries(task) == queries
    assert task_queries(task) == task_queries(task)


def test_query_replies_are_checked():
    assert parse_queries('{"queries": ["  a  b ", "A B", "c", "d", "e", "f"]}') == ["a b", "c", "d", "e"]
    assert parse_queries('```json\n{"queries": []}\n```') == []
    for bad in ('{"queries": "a"}', '{"queries": [1]}', '{"q": []}', '{"queries": [], "more": 1}', "no"):
        with pytest.raises(ReplyError):
            parse_queries(bad)


CTX = Context(task="Compare Vendor Example plans", memories=("Our CFO is Jane Roe; budget EUR 90k.",),
              history=(HistoryMessage("user", "We use Vendor Example today."),), enabled_frameworks=("GDPR",))
PLANNER = RoleConfig(provider="scripted", model="m", path="unused")


async def test_the_planner_model_writes_the_queries_without_seeing_the_workspace_memories(tmp_path):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"research": ['{"queries": ["Vendor Example pricing", "Vendor Example SLA"]}']}))
    provider = ScriptedProvider(path)
    notes: list[str] = []
    assert await choose_queries(CTX, provider, PLANNER, notes) == (["Vendor Example pricing", "Vendor Example SLA"],
                                                                   "model")
    request = provider.calls[0]
    sent = "\n".join(m.content for m in request.messages)
    assert "Compare Vendor Example plans" in sent and "We use Vendor Example today." in sent and "GDPR" in sent
    assert "Jane Roe" not in sent and request.json_schema["properties"]["queries"]["maxItems"] == 4
    assert request.role == "planner" and notes == []


async def test_an_unusable_model_reply_falls_back_to_the_task_reader_and_says_so(tmp_path):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"research": ["Sure! Here are some queries: ..."]}))
    notes: list[str] = []
    queries, source = await choose_queries(CTX, ScriptedProvider(path), PLANNER, notes)
    assert (queries, source) == (task_queries(CTX.task), "task_reader")
    assert notes[0].startswith("The search queries were read from the task: the model's reply was unusable")


async def test_the_offline_engine_uses_the_task_reader():
    notes: list[str] = []
    assert await choose_queries(CTX, OfflineProvider(), RoleConfig(provider="offline"), notes) == (
        task_queries(CTX.task), "task_reader")


@pytest.mark.parametrize("url", ["http://[::1", "http://exa mple.com/", "http://a..b/", "http://-x-.example/", "javascript:alert(1)",
                                 "http:///nohost", "http://" + "a" * 64 + ".example/"])
async def test_a_result_that_is_not_a_url_is_recorded_as_bad_url(url):
    async def no_lookup(host: str, port: int) -> list[str]:
        raise AssertionError(f"{host!r} was sent to the resolver")

    fetcher = Fetcher(FetchPolicy(), resolver=no_lookup)
    try:
        fetched = await fetcher.fetch(url)
    finally:
        await fetcher.aclose()
    assert (fetched.status, fetched.reason) == ("failed", "bad_url")
