"""What the embedded channel layer costs per doorbell, with many run pages open.

    .venv/bin/python bench/layer.py [--pages 100 200] [--doorbells 4000]

Each page is a channel waiting on `receive` and the only member of its run's group; doorbells are
sent to random runs' groups, as recorded batches ring them. Prints the event loop's CPU time for
all of them with channels' stock in-memory layer and with ours (runtime/channel_layer.py), which
sweeps for expired messages at most once a second instead of at every call.
"""
from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from channels.layers import InMemoryChannelLayer as StockLayer  # noqa: E402

from beyond_site.runtime.channel_layer import InMemoryChannelLayer  # noqa: E402


async def doorbells(layer_class, pages: int, count: int) -> float:
    """CPU seconds for `count` doorbells delivered among `pages` waiting pages."""
    layer = layer_class()
    channels = [await layer.new_channel() for _ in range(pages)]
    for n, channel in enumerate(channels):
        await layer.group_add(f"run-{n}", channel)
    delivered = 0

    async def page(channel):
        nonlocal delivered
        while True:
            await layer.receive(channel)
            delivered += 1

    waiting = [asyncio.create_task(page(channel)) for channel in channels]
    await asyncio.sleep(0)
    started = time.process_time()
    for n in range(count):
        await layer.group_send(f"run-{random.randrange(pages)}", {"type": "run.doorbell"})
        if n % 50 == 0:
            await asyncio.sleep(0)  # let the pages read, as the event loop would between batches
    while delivered < count:
        await asyncio.sleep(0)
    spent = time.process_time() - started
    for task in waiting:
        task.cancel()
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, nargs="+", default=[100, 200])
    parser.add_argument("--doorbells", type=int, default=4000)
    args = parser.parse_args()
    for pages in args.pages:
        stock = asyncio.run(doorbells(StockLayer, pages, args.doorbells))
        ours = asyncio.run(doorbells(InMemoryChannelLayer, pages, args.doorbells))
        print(f"{pages} pages, {args.doorbells} doorbells: stock layer {stock * 1000:.0f} ms CPU "
              f"({stock / args.doorbells * 1e6:.0f} µs each), ours {ours * 1000:.0f} ms ({ours / args.doorbells * 1e6:.0f} µs each)")


if __name__ == "__main__":
    main()
