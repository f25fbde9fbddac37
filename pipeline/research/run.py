"""The research phase of a run: queries, search, fetch, extract; every page recorded as evidence.

`run_research` is self-contained: it reports progress as plain dicts through `on_event` and
returns a `ResearchResult`; the caller decides how to persist and show them.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from pipeline.context import Context, Evidence
from pipeline.integrity.urls import normalise_url
from pipeline.net import ACCEPT_ENCODING
from pipeline.parsing import ReplyError
from pipeline.providers.base import Provider, ProviderError, declared
from pipeline.topology import RoleConfig

from .backends import SearchBackend, SearchError, SearchResult
from .evidence import FAILED, OK, REFUSED, EvidenceItem, text_sha256, utc_now_iso
from .extract import extract_page
from .fetch import USER_AGENT, Fetched, Fetcher, FetchPolicy
from .queries import build_query_request, parse_queries, task_queries

OnEvent = Callable[[dict], None]


@dataclass
class ResearchResult:
    backend: str
    queries: list[str]
    query_source: str                      # "model" or "task_reader"
    items: list[EvidenceItem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)   # e.g. a search that failed, a model reply unused

    def usable(self) -> list[EvidenceItem]:
        return [item for item in self.items if item.usable]

    def for_context(self) -> tuple[Evidence, ...]:
        """The usable pages, for `Context.evidence`."""
        return tuple(item.for_context() for item in self.usable())

    def as_json(self, *, with_text: bool = True) -> dict:
        return {"backend": self.backend, "queries": self.queries, "query_source": self.query_source,
                "notes": self.notes, "evidence": [i.as_json(with_text=with_text) for i in self.items]}


async def choose_queries(ctx: Context, query_provider: Provider | None, role_cfg: RoleConfig | None,
                         notes: list[str]) -> tuple[list[str], str]:
    """(queries, source): the model's when it gives a usable reply, else the task reader's."""
    if query_provider is not None and role_cfg is not None and not declared(query_provider, "offline"):
        try:
            completion = await query_provider.complete(build_query_request(ctx, role_cfg))
            return parse_queries(completion.text), "model"
        except (ProviderError, ReplyError) as exc:
            notes.append(f"The search queries were read from the task: the model's reply was unusable ({exc}).")
    return task_queries(ctx.task), "task_reader"


async def _search_all(backend: SearchBackend, queries: list[str], client: httpx.AsyncClient, limit: int,
                      emit: OnEvent, notes: list[str]) -> list[tuple[str, SearchResult]]:
    async def one(query: str) -> list[SearchResult]:
        try:
            results = await backend.search(query, client=client, limit=limit)
        except SearchError as exc:
            notes.append(f"Search for {query!r} failed: {exc}")
            emit({"type": "search_done", "query": query, "results": 0, "urls": [], "error": str(exc)})
            return []
        emit({"type": "search_done", "query": query, "results": len(results), "urls": [r.url for r in results],
              "error": None})
        return results

    per_query = await asyncio.gather(*(one(q) for q in queries))
    # Round-robin across queries, so each query's best result comes before any query's second.
    picked: list[tuple[str, SearchResult]] = []
    seen: set[str] = set()
    for rank in range(max((len(r) for r in per_query), default=0)):
        for query, results in zip(queries, per_query):
            if rank < len(results):
                key = normalise_url(results[rank].url)
                if key not in seen:
                    seen.add(key)
                    picked.append((query, results[rank]))
    return picked


async def _item(evidence_id: str, query: str, result: SearchResult, fetched: Fetched, max_chars: int) -> EvidenceItem:
    item = EvidenceItem(id=evidence_id, url=result.url, final_url=fetched.final_url or result.url,
                        title=result.title, fetched_at=utc_now_iso(), status=fetched.status, reason=fetched.reason,
                        http_status=fetched.http_status, bytes=fetched.bytes_read, elapsed_s=fetched.elapsed_s,
                        content_type=fetched.content_type, query=query, hops=fetched.hops)
    if fetched.status == OK:
        # Extraction is CPU work of a few hundred milliseconds: off the event loop.
        title, text = await asyncio.to_thread(extract_page, fetched.body, fetched.content_type, item.final_url)
        item.title = title or result.title
        if not text:
            item.status, item.reason = FAILED, "no_text"
        else:
            # Cut at the limit rather than dropped: the planner reads the start of a long page,
            # and the integrity gate checks against exactly the text the models were given.
            item.text = text[:max_chars]
            item.sha256 = text_sha256(item.text)
    return item


def _event(item: EvidenceItem) -> dict:
    kind = "page_refused" if item.status == REFUSED else "page_fetched"
    return {"type": kind, "id": item.id, "url": item.url, "final_url": item.final_url, "title": item.title,
            "status": item.status, "reason": item.reason, "http_status": item.http_status, "bytes": item.bytes,
            "elapsed_s": item.elapsed_s, "sha256": item.sha256 or None, "fetched_at": item.fetched_at}


async def run_research(ctx: Context, *, backend: SearchBackend, fetch_policy: FetchPolicy,
                       query_provider: Provider | None = None, role_cfg: RoleConfig | None = None,
                       on_event: OnEvent | None = None, search_client: httpx.AsyncClient | None = None,
                       fetcher: Fetcher | None = None) -> ResearchResult:
    """Search the web for `ctx.task` and fetch the top results under `fetch_policy`.

    Events, in order: research_started, one search_done per query, one page_fetched or
    page_refused per page (as each finishes), research_done. Never raises for a search or a page
    that fails: that is recorded. `search_client` and `fetcher` are for tests and for callers that
    reuse clients; the ones made here are closed here.
    """
    emit = on_event or (lambda event: None)
    started = time.monotonic()
    notes: list[str] = []
    queries, source = await choose_queries(ctx, query_provider, role_cfg, notes)
    result = ResearchResult(backend=backend.label, queries=queries, query_source=source, notes=notes)
    emit({"type": "research_started", "backend": backend.label, "queries": queries, "query_source": source,
          "notes": list(notes)})
    own_client = search_client is None
    client = search_client or httpx.AsyncClient(timeout=fetch_policy.total_timeout_s,
                                                headers={"User-Agent": USER_AGENT, "Accept-Encoding": ACCEPT_ENCODING})
    own_fetcher = fetcher is None
    fetcher = fetcher or Fetcher(fetch_policy)
    try:
        picked = await _search_all(backend, queries, client, fetch_policy.results_per_query, emit, notes)
        picked = picked[:fetch_policy.max_pages]

        async def fetch_one(n: int, query: str, hit: SearchResult) -> EvidenceItem:
            item = await _item(f"E{n}", query, hit, await fetcher.fetch(hit.url), fetch_policy.max_text_chars)
            emit(_event(item))
            return item

        result.items = list(await asyncio.gather(*(fetch_one(n, q, hit) for n, (q, hit) in enumerate(picked, 1))))
    finally:
        if own_client:
            await client.aclose()
        if own_fetcher:
            await fetcher.aclose()
    counts = {status: sum(1 for i in result.items if i.status == status) for status in (OK, FAILED, REFUSED)}
    emit({"type": "research_done", "pages": len(result.items), "usable": len(result.usable()),
          "failed": counts[FAILED], "refused": counts[REFUSED], "elapsed_s": round(time.monotonic() - started, 3),
          "notes": list(notes)})
    return result
