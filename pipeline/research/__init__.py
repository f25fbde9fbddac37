"""Web research before the brief: search, fetch under a safe policy, extract, record as evidence.

Plain Python, no Django. Entry points: `run_research(ctx, backend=..., fetch_policy=...)`,
`search_setting(env)` / `parse_search_setting(value)` for BEYOND_SEARCH, `FetchPolicy.from_env(env)`.
"""
from __future__ import annotations

from .backends import (BraveBackend, SearchBackend, SearchConfigError, SearchError, SearchResult, SearchSetting,
                       SearxngBackend, StaticBackend, parse_search_setting, search_setting)
from .evidence import FAILED, OK, REFUSED, EvidenceItem
from .fetch import USER_AGENT, Fetched, Fetcher, FetchPolicy
from .queries import build_query_request, parse_queries, task_queries
from .run import ResearchResult, run_research

__all__ = ["BraveBackend", "EvidenceItem", "FAILED", "Fetched", "Fetcher", "FetchPolicy", "OK", "REFUSED",
           "ResearchResult", "SearchBackend", "SearchConfigError", "SearchError", "SearchResult", "SearchSetting",
           "SearxngBackend", "StaticBackend", "USER_AGENT", "build_query_request", "parse_queries",
           "parse_search_setting", "run_research", "search_setting", "task_queries"]
