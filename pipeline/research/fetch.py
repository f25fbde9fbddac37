"""Fetch one page under the fetch policy: guarded addresses, robots.txt, redirects re-checked,
size, time and content-type limits. Every outcome is an answer with a reason, never an exception."""
from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import httpcore
import httpx

from pipeline.net import (ACCEPT_ENCODING, AddressPolicy, AddressRefused, BodyTooLarge, EncodingRefused, Resolver,
                         guarded_client, iter_body, parse_address, system_resolver)

from .evidence import FAILED, OK, REFUSED
from .extract import HTML_TYPES, TEXT_TYPES, media_type
from .robots import RobotsCache, RobotsVerdict

USER_AGENT = "BeyondResearch/1.0 (+docs/research.md)"
#: The name robots.txt rules are matched against.
ROBOTS_AGENT = "BeyondResearch"
_REDIRECTS = (301, 302, 303, 307, 308)


@dataclass(frozen=True)
class FetchPolicy:
    """Limits for one run's fetching. `address_policy`: public addresses, plus the operator's
    `host:port` entries that may be on this machine or a private network
    (BEYOND_RESEARCH_ALLOW_HOSTS)."""

    address_policy: AddressPolicy = AddressPolicy()
    max_bytes: int = 2_000_000
    total_timeout_s: float = 15.0
    connect_timeout_s: float = 5.0
    max_redirects: int = 5
    per_host_concurrency: int = 2
    max_pages: int = 8
    results_per_query: int = 5
    max_text_chars: int = 40_000
    user_agent: str = USER_AGENT
    respect_robots: bool = True

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ, **overrides) -> FetchPolicy:
        policy = AddressPolicy.from_setting(env.get("BEYOND_RESEARCH_ALLOW_HOSTS", ""))
        return cls(address_policy=policy, **overrides)


@dataclass
class Fetched:
    url: str
    status: str = FAILED
    reason: str | None = None
    final_url: str = ""
    http_status: int | None = None
    content_type: str = ""
    body: bytes = b""
    bytes_read: int = 0
    elapsed_s: float = 0.0
    hops: list[str] = field(default_factory=list)


_HOSTNAME = re.compile(r"(?=.{1,253}\.?$)(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.)*"
                       r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.?", re.I)


def _valid_host(host: str) -> bool:
    """An IP address or a DNS name (IDNA allowed); anything else is never sent to a resolver."""
    if parse_address(host) is not None:
        return True
    try:
        return _HOSTNAME.fullmatch(host.encode("idna").decode("ascii")) is not None
    except UnicodeError:
        return False


class _Stop(Exception):
    def __init__(self, status: str, reason: str):
        self.status, self.reason = status, reason


class Fetcher:
    """One run's fetching: a guarded client, a robots.txt cache and per-host limits. `aclose()` it."""

    def __init__(self, policy: FetchPolicy, *, resolver: Resolver = system_resolver,
                 inner: httpcore.AsyncNetworkBackend | None = None):
        self.policy = policy
        self.client = guarded_client(
            policy.address_policy, resolver=resolver, inner=inner,
            timeout=httpx.Timeout(policy.total_timeout_s, connect=policy.connect_timeout_s),
            headers={"User-Agent": policy.user_agent, "Accept": "text/html, application/xhtml+xml, text/plain;q=0.9",
                     "Accept-Encoding": ACCEPT_ENCODING})
        self.robots = RobotsCache(self.client, ROBOTS_AGENT, policy.total_timeout_s)
        self._hosts: dict[str, asyncio.Semaphore] = {}

    async def aclose(self) -> None:
        await self.robots.aclose()
        await self.client.aclose()

    def _host_slot(self, url: str) -> asyncio.Semaphore:
        host = (urlsplit(url).hostname or "").lower()
        return self._hosts.setdefault(host, asyncio.Semaphore(max(1, self.policy.per_host_concurrency)))

    async def fetch(self, url: str) -> Fetched:
        result = Fetched(url)
        started = time.monotonic()
        try:
            async with asyncio.timeout(self.policy.total_timeout_s):
                await self._follow(url, result)
            result.status, result.reason = OK, None
        except _Stop as stop:
            result.status, result.reason = stop.status, stop.reason
        except TimeoutError:
            result.status, result.reason = FAILED, "timeout"
        except (ValueError, httpx.InvalidURL):    # a search result or a Location that is no URL
            result.status, result.reason = FAILED, "bad_url"
        result.elapsed_s = round(time.monotonic() - started, 3)
        return result

    async def _follow(self, url: str, result: Fetched) -> None:
        for _ in range(self.policy.max_redirects + 1):
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not _valid_host(parts.hostname or ""):
                raise _Stop(REFUSED if result.hops else FAILED, "bad_url")
            result.hops.append(url)
            result.final_url = url
            if self.policy.respect_robots:
                await self._check_robots(url)
            async with self._host_slot(url):
                location = await self._get(url, result)
            if location is None:
                return
            url = location
        raise _Stop(FAILED, "too_many_redirects")

    async def _check_robots(self, url: str) -> None:
        verdict = await self.robots.verdict(url)
        if verdict == RobotsVerdict.REFUSED:
            raise _Stop(REFUSED, "refused_by_policy")
        if verdict == RobotsVerdict.DISALLOWED:
            raise _Stop(REFUSED, "robots")
        if verdict == RobotsVerdict.UNAVAILABLE:
            raise _Stop(FAILED, "robots_unavailable")

    async def _get(self, url: str, result: Fetched) -> str | None:
        """One request; the next hop's URL for a redirect, None when the page is read."""
        try:
            async with self.client.stream("GET", url) as response:
                result.http_status = response.status_code
                if response.status_code in _REDIRECTS and response.headers.get("location"):
                    return urljoin(url, response.headers["location"])
                if response.status_code != 200:
                    raise _Stop(FAILED, f"http_{response.status_code}")
                result.content_type = response.headers.get("content-type", "")
                if media_type(result.content_type) not in HTML_TYPES + TEXT_TYPES:
                    raise _Stop(FAILED, "not_html")
                result.body = await self._read_limited(response, result)
                return None
        except AddressRefused:
            raise _Stop(REFUSED, "refused_by_policy") from None
        except httpx.TimeoutException:
            raise _Stop(FAILED, "timeout") from None
        except httpx.HTTPError:
            raise _Stop(FAILED, "connection_error") from None

    async def _read_limited(self, response: httpx.Response, result: Fetched) -> bytes:
        """The page, decoded under the size limit (pipeline.net.bodies: compressed bytes are
        decoded a bounded piece at a time and counted as they come)."""
        chunks: list[bytes] = []
        try:
            async for piece in iter_body(response, max_bytes=self.policy.max_bytes):
                result.bytes_read += len(piece)
                chunks.append(piece)
        except BodyTooLarge as exc:
            result.bytes_read = exc.read or result.bytes_read
            raise _Stop(FAILED, "too_big") from None
        except EncodingRefused:
            raise _Stop(FAILED, "bad_encoding") from None
        return b"".join(chunks)
