"""robots.txt, fetched once per host per run through the same guarded client as the pages.

As robots.txt's own standard (RFC 9309) says: a robots.txt that does not exist (any 4xx) allows
everything; one that cannot be read (5xx, timeout, connection failure) forbids everything for now.
"""
from __future__ import annotations

import asyncio
from urllib.parse import urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import httpx

from pipeline.net import AddressRefused, BodyRefused, read_body

ROBOTS_MAX_BYTES = 500_000
#: Redirects followed to a robots.txt (RFC 9309 asks for at least five).
ROBOTS_MAX_REDIRECTS = 5
_REDIRECTS = (301, 302, 303, 307, 308)


class RobotsVerdict:
    ALLOWED, DISALLOWED, UNAVAILABLE, REFUSED = "allowed", "disallowed", "unavailable", "refused"


class RobotsCache:
    def __init__(self, client: httpx.AsyncClient, agent: str, timeout_s: float):
        self.client = client
        self.agent = agent
        self.timeout_s = timeout_s
        self._rules: dict[str, asyncio.Task] = {}

    async def aclose(self) -> None:
        """Stop robots.txt fetches still under way (the run was stopped or timed out)."""
        pending = [task for task in self._rules.values() if not task.done()]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    async def verdict(self, url: str) -> str:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}".lower()
        if origin not in self._rules:   # one fetch per origin, shared by concurrent pages
            self._rules[origin] = asyncio.ensure_future(self._load(origin))
        rules = await asyncio.shield(self._rules[origin])
        if isinstance(rules, str):
            return rules
        return RobotsVerdict.ALLOWED if rules.can_fetch(self.agent, url) else RobotsVerdict.DISALLOWED

    async def _load(self, origin: str) -> RobotFileParser | str:
        parser = RobotFileParser()
        try:
            async with asyncio.timeout(self.timeout_s):
                body = await self._read(origin + "/robots.txt")
        except AddressRefused:
            return RobotsVerdict.REFUSED
        except (httpx.HTTPError, TimeoutError, BodyRefused, ValueError):
            return RobotsVerdict.UNAVAILABLE
        if isinstance(body, str):
            return body
        parser.parse(body.decode("utf-8", errors="replace").splitlines())
        return parser

    async def _read(self, url: str) -> bytes | str:
        """robots.txt's text (empty when it does not exist), or UNAVAILABLE. Redirects are followed
        here, not by the client, which would read each redirect's own body whole and uncapped; a
        redirect's body is never read. The transport checks every hop's address."""
        for _ in range(ROBOTS_MAX_REDIRECTS + 1):
            async with self.client.stream("GET", url) as response:
                location = response.headers.get("location")
                if response.status_code in _REDIRECTS and location:
                    url = urljoin(url, location)
                    continue
                if 400 <= response.status_code < 500:
                    return b""
                if response.status_code != 200:
                    return RobotsVerdict.UNAVAILABLE
                # RFC 9309: the first 500 KiB at least are read; what follows is ignored.
                return await read_body(response, max_bytes=ROBOTS_MAX_BYTES, cut=True)
        return RobotsVerdict.UNAVAILABLE
