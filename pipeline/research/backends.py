"""Search backends behind one small interface, chosen by one setting string.

`BEYOND_SEARCH` is `searxng:URL` (a SearXNG instance's JSON API), `brave` (Brave Search API, key in
BRAVE_API_KEY) or `static:PATH` (a JSON file of canned results, for tests and demos). Unset, research
is not configured, and `search_setting` says so in words the page can show.

A backend is configured by the server's operator, not by a workspace, so its HTTP client is an
ordinary one: a self-hosted SearXNG on the operator's own network is the common case.
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import httpx

from pipeline.net import BodyRefused, read_body

BRAVE_URL = "https://api.search.brave.com/res/v1/web/search"
#: A results page larger than this is not read (a SearXNG page of results is a few tens of KB).
SEARCH_MAX_BYTES = 2_000_000


@dataclass(frozen=True)
class SearchResult:
    url: str
    title: str = ""
    snippet: str = ""


class SearchError(Exception):
    """A search that gave no results list: the backend failed or answered something unreadable."""


class SearchConfigError(ValueError):
    """A `BEYOND_SEARCH` value that names no usable backend."""


class SearchBackend(Protocol):
    #: Short and safe to show ("searxng:http://127.0.0.1:8888", "brave", "static:demo.json").
    label: str

    async def search(self, query: str, *, client: httpx.AsyncClient, limit: int) -> list[SearchResult]: ...


def _results(items, url_key: str, title_key: str, snippet_key: str, limit: int) -> list[SearchResult]:
    out: list[SearchResult] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        url = item.get(url_key)
        if isinstance(url, str) and url.startswith(("http://", "https://")):
            out.append(SearchResult(url, str(item.get(title_key) or ""), str(item.get(snippet_key) or "")))
        if len(out) >= limit:
            break
    return out


async def _get_json(client: httpx.AsyncClient, url: str, **kwargs) -> dict:
    try:
        async with client.stream("GET", url, **kwargs) as response:
            if response.status_code != 200:
                raise SearchError(f"HTTP {response.status_code}")
            raw = await read_body(response, max_bytes=SEARCH_MAX_BYTES)
    except httpx.HTTPError as exc:
        raise SearchError(f"{type(exc).__name__}: {exc}") from None
    except BodyRefused as exc:
        raise SearchError(f"the reply was not read: {exc}") from None
    try:
        body = json.loads(raw)
    except ValueError:
        raise SearchError("the reply is not JSON") from None
    if not isinstance(body, dict):
        raise SearchError("the reply is not a JSON object")
    return body


@dataclass(frozen=True)
class SearxngBackend:
    base_url: str

    @property
    def label(self) -> str:
        return f"searxng:{self.base_url}"

    async def search(self, query: str, *, client: httpx.AsyncClient, limit: int) -> list[SearchResult]:
        body = await _get_json(client, self.base_url.rstrip("/") + "/search", params={"q": query, "format": "json"})
        return _results(body.get("results"), "url", "title", "content", limit)


@dataclass(frozen=True)
class BraveBackend:
    api_key: str
    url: str = BRAVE_URL
    label: str = "brave"

    def __repr__(self) -> str:  # the key never reaches a log line
        return "BraveBackend()"

    async def search(self, query: str, *, client: httpx.AsyncClient, limit: int) -> list[SearchResult]:
        body = await _get_json(client, self.url, params={"q": query, "count": min(limit, 20)},
                               headers={"X-Subscription-Token": self.api_key, "Accept": "application/json"})
        web = body.get("web")
        return _results(web.get("results") if isinstance(web, dict) else None, "url", "title", "description", limit)


@dataclass(frozen=True)
class StaticBackend:
    """`{"results": {"<query>": [...], "*": [...]}}`: the exact query's list, else the "*" list."""

    path: Path

    @property
    def label(self) -> str:
        return f"static:{self.path.name}"

    async def search(self, query: str, *, client: httpx.AsyncClient, limit: int) -> list[SearchResult]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SearchError(f"cannot read {self.path.name}: {exc}") from None
        table = data.get("results") if isinstance(data, dict) else None
        if not isinstance(table, dict):
            raise SearchError(f"{self.path.name} has no \"results\" object")
        return _results(table.get(query, table.get("*")), "url", "title", "snippet", limit)


def parse_search_setting(value: str | None, *, env: Mapping[str, str] = os.environ) -> SearchBackend | None:
    """The backend `value` names, None when it is unset or blank; SearchConfigError when it is wrong."""
    value = (value or "").strip()
    if not value:
        return None
    kind, _, arg = value.partition(":")
    kind, arg = kind.strip().lower(), arg.strip()
    if kind == "searxng":
        if not arg.startswith(("http://", "https://")):
            raise SearchConfigError("BEYOND_SEARCH=searxng:URL needs the instance's http(s) URL")
        return SearxngBackend(arg.rstrip("/"))
    if kind == "brave":
        key = env.get("BRAVE_API_KEY", "").strip()
        if not key:
            raise SearchConfigError("BEYOND_SEARCH=brave needs BRAVE_API_KEY set in the environment")
        return BraveBackend(key)
    if kind == "static":
        if not arg:
            raise SearchConfigError("BEYOND_SEARCH=static:PATH needs the path of a JSON results file")
        path = Path(arg).expanduser()
        if not path.is_file():
            raise SearchConfigError(f"BEYOND_SEARCH=static:{arg}: no such file")
        return StaticBackend(path)
    raise SearchConfigError(f"BEYOND_SEARCH={value!r}: expected searxng:URL, brave or static:PATH")


@dataclass(frozen=True)
class SearchSetting:
    """What the page says about research: available or not, and why."""

    backend: SearchBackend | None
    message: str

    @property
    def configured(self) -> bool:
        return self.backend is not None


def search_setting(env: Mapping[str, str] = os.environ) -> SearchSetting:
    """The operator's BEYOND_SEARCH, read once, never raising: a bad value is "not configured" with
    the reason, so a settings page can show it."""
    try:
        backend = parse_search_setting(env.get("BEYOND_SEARCH"), env=env)
    except SearchConfigError as exc:
        return SearchSetting(None, f"Web research is not available: {exc}.")
    if backend is None:
        return SearchSetting(None, "Web research is not configured on this server (BEYOND_SEARCH is not set).")
    return SearchSetting(backend, f"Web research uses {backend.label}.")
