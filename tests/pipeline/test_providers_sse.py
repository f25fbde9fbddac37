"""The server-sent events reader under the chat-completion streams."""
from __future__ import annotations

import pytest

from pipeline.net import BodyTooLarge
from pipeline.providers.sse import iter_sse_data


async def collect(lines, max_event_chars: int = 1_000_000) -> list[str]:
    async def source():
        for line in lines:
            yield line

    return [data async for data in iter_sse_data(source(), max_event_chars=max_event_chars)]


async def test_an_event_that_never_ends_is_refused_once_its_data_passes_the_cap():
    pulled = 0

    def endless():  # short data lines and never the blank line that ends an event
        nonlocal pulled
        while True:
            pulled += 1
            yield "data: x"

    with pytest.raises(BodyTooLarge):
        await collect(endless(), max_event_chars=1000)
    assert pulled <= 501  # counted as the lines arrive: 2 characters each ("x" and its newline)


async def test_events_under_the_cap_pass_whatever_their_number():
    lines = ["data: " + "y" * 90, ""] * 1000
    assert len(await collect(lines, max_event_chars=100)) == 1000


async def test_it_skips_keep_alive_comments_and_blank_lines():
    lines = [": OPENROUTER PROCESSING", "", "", 'data: {"a": 1}', "", ":", "data: [DONE]", ""]
    assert await collect(lines) == ['{"a": 1}', "[DONE]"]


async def test_it_joins_multi_line_data_and_ignores_other_fields():
    lines = ["event: message", "id: 7", "data: first", "data:second", "retry: 10", ""]
    assert await collect(lines) == ["first\nsecond"]


async def test_it_keeps_a_last_event_without_its_blank_line():
    assert await collect(["data: a", "", "data: b"]) == ["a", "b"]
