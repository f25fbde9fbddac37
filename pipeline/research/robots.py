"""robots.txt, fetched once per host per run through the same guarded client as the pages.

As robots.txt's own standard (RFC 9309) says: a robots.txt that does not exist (any 4xx) allows
everything; one that cannot be read (5xx, timeout, connection failure) forbids everything for now.
"""
from __future__ import annotations

import asyncio
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser

import httpx

from pipeline.net import AddressRefused, BodyRefused, read_body

ROBOTS_MAX_BYTES = 500_000


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
                # The transport checks every hop's address, so following redirects here is safe.
                async with self.client.stream("GET", origin + "/robots.txt", follow_redirects=True) as response:
                    if 400 <= response.status_code < 500:
                        parser.parse([])
                        return parser
                    if response.status_code != 200:
                        return RobotsVerdict.UNAVAILABLE
                    # RFC 9309: the first 500 KiB at least are read; what follows is ignored.
                    body = await read_body(response, max_bytes=ROBOTS_MAX_BYTES, cut=True)
        except AddressRefused:
            return RobotsVerdict.REFUSED
        except (httpx.HTTPError, TimeoutError, BodyRefused):
            return RobotsVerdict.UNAVAILABLE
        parser.parse(body.decode("utf-8", errors="replace").splitlines())
        return parser
