"""How many calls may be in flight at once at one endpoint, across every run of this process.

A single-slot server (llama.cpp, a small Ollama) given eight requests at once queues them until
they time out, or (llama-cpp-python) cuts the running one short. Each call holds a slot of its
endpoint while its HTTP attempt runs, not while it backs off between attempts.

Not `asyncio.Semaphore`: its size is fixed when it is made, while the size comes from each role's
configuration, which an admin may change between two runs of a long-lived process. Here every
waiter brings its own size and starts once fewer than that many calls are in flight. Slots are
kept per event loop, since asyncio primitives belong to the loop they were first used in.
"""
from __future__ import annotations

import asyncio
import weakref
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class EndpointSlots:
    """In-flight calls at one endpoint, admitted first come first served."""

    def __init__(self) -> None:
        self.busy = 0
        self._waiting: deque[tuple[int, asyncio.Future]] = deque()

    async def acquire(self, size: int) -> None:
        if not self._waiting and self.busy < size:
            self.busy += 1
            return
        admitted = asyncio.get_running_loop().create_future()
        self._waiting.append((size, admitted))
        try:
            await admitted
        except asyncio.CancelledError:
            if admitted.done() and not admitted.cancelled():
                self.release()  # admitted just as it was cancelled: hand the slot on
            else:
                self._admit()  # it may have been holding up the ones behind it
            raise

    def release(self) -> None:
        self.busy -= 1
        self._admit()

    def _admit(self) -> None:
        while self._waiting:
            size, admitted = self._waiting[0]
            if admitted.done():  # its caller was cancelled while waiting
                self._waiting.popleft()
                continue
            if self.busy >= size:
                return
            self._waiting.popleft()
            self.busy += 1
            admitted.set_result(None)


_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, EndpointSlots]] = weakref.WeakKeyDictionary()


def endpoint_slots(key: str) -> EndpointSlots:
    """The slots of one endpoint in the running event loop."""
    per_loop = _slots.setdefault(asyncio.get_running_loop(), {})
    return per_loop.setdefault(key, EndpointSlots())


@asynccontextmanager
async def endpoint_slot(key: str, size: int | None) -> AsyncIterator[None]:
    """Hold one of the endpoint's slots for the block; `size` None: no limit."""
    if size is None:
        yield
        return
    slots = endpoint_slots(key)
    await slots.acquire(size)
    try:
        yield
    finally:
        slots.release()
