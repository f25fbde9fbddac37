"""The server-sent events reader under the chat-completion streams."""
from __future__ import annotations

from pipeline.providers.sse import iter_sse_data


async def collect(lines: list[str]) -> list[str]:
    async def source():
        for line in lines:
            yield line

    return [data async for data in iter_sse_data(source())]


async def test_it_skips_keep_alive_comments_and_blank_lines():
    lines = [": OPENROUTER PROCESSING", "", "", 'data: {"a": 1}', "", ":", "data: [DONE]", ""]
    assert await collect(lines) == ['{"a": 1}', "[DONE]"]


async def test_it_joins_multi_line_data_and_ignores_other_fields():
    lines = ["event: message", "id: 7", "data: first", "data:second", "retry: 10", ""]
    assert await collect(lines) == ["first\nsecond"]


async def test_it_keeps_a_last_event_without_its_blank_line():
    assert await collect(["data: a", "", "data: b"]) == ["a", "b"]
