"""Run by bombs.measure in a child process: read one bomb the way Beyond does, print a JSON report.

`python -m tests.pipeline.bomb_child KIND ORIGIN`, KIND one of: `page` (the research fetcher reads
ORIGIN/bomb), `robots` (the fetcher reads ORIGIN/small, whose robots.txt is the bomb),
`provider-json`, `provider-stream`, `provider-error` (a model provider calls ORIGIN/<form>/v1).
Before the bomb, the same code reads a small answer once, so that imports and first-use costs are
in the baseline; then VmHWM (the peak resident set) is read before and after.
"""
from __future__ import annotations

import asyncio
import json
import sys
import time

from pipeline.net import AddressPolicy
from pipeline.providers.base import CompletionRequest, Message, ProviderError
from pipeline.providers.openai_compat import OpenAICompatibleProvider, ProviderOptions
from pipeline.research import FetchPolicy
from pipeline.research.fetch import Fetcher


def peak_kb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/self/status")


async def fetch(origin: str, path: str, *, robots: bool) -> dict:
    host = origin.removeprefix("http://")
    fetcher = Fetcher(FetchPolicy(address_policy=AddressPolicy.from_setting(host), respect_robots=robots,
                                  total_timeout_s=60))
    try:
        result = await fetcher.fetch(origin + path)
    finally:
        await fetcher.aclose()
    return {"status": result.status, "reason": result.reason, "bytes_read": result.bytes_read,
            "body_bytes": len(result.body)}


async def call(origin: str, form: str) -> dict:
    provider = OpenAICompatibleProvider(f"{origin}/{form}/v1", model="m", options=ProviderOptions(max_retries=0))
    request = CompletionRequest(role="executor", model="m", messages=(Message("user", "Write."),))
    try:
        completion = await provider.complete(request)
        return {"text_chars": len(completion.text), "finish_reason": completion.finish_reason}
    except ProviderError as exc:
        return {"error_kind": exc.kind, "error": str(exc)[:300]}
    finally:
        await provider.aclose()


async def read(kind: str, origin: str, *, warm_up: bool) -> dict:
    if kind in ("page", "robots"):
        if warm_up:
            return await fetch(origin, "/small", robots=False)
        return await fetch(origin, "/bomb" if kind == "page" else "/small", robots=kind == "robots")
    return await call(origin, "ok" if warm_up else kind.removeprefix("provider-"))


async def main(kind: str, origin: str) -> dict:
    await read(kind, origin, warm_up=True)
    before = peak_kb()
    lags: list[float] = []
    stop = asyncio.Event()

    async def ticker() -> None:
        while not stop.is_set():
            expected = time.monotonic() + 0.005
            await asyncio.sleep(0.005)
            lags.append(time.monotonic() - expected)

    ticking = asyncio.create_task(ticker())
    try:
        outcome = await read(kind, origin, warm_up=False)
    finally:
        stop.set()
        await ticking
    return {"outcome": outcome, "peak_before_kb": before, "peak_after_kb": peak_kb(),
            "max_lag_s": round(max(lags, default=0.0), 3)}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2]))))
