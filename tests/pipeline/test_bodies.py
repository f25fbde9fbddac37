"""pipeline.net.bodies: a response body read under a cap, whatever its Content-Encoding says, in
the pieces the network delivers it (the bombs themselves are in test_bombs.py)."""
from __future__ import annotations

import gzip
import zlib

import httpx
import pytest

from pipeline.net import BodyTooLarge, EncodingRefused, iter_lines, read_body
from pipeline.net.bodies import PIECE


class Chunks(httpx.AsyncByteStream):
    """A received body, in exactly these raw chunks."""

    def __init__(self, *chunks: bytes):
        self.chunks = chunks

    async def __aiter__(self):
        for chunk in self.chunks:
            yield chunk


def received(*chunks: bytes, encoding: str | None = None, **headers: str) -> httpx.Response:
    if encoding:
        headers["content-encoding"] = encoding
    return httpx.Response(200, headers=headers, stream=Chunks(*chunks))


def pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)]


TEXT = ("Access is requested through the service desk and approved by the owner.\n" * 2000).encode()


@pytest.mark.parametrize("encoding, packed", [
    (None, TEXT), ("identity", TEXT), ("gzip", gzip.compress(TEXT)), ("x-gzip", gzip.compress(TEXT)),
    ("deflate", zlib.compress(TEXT)),
    ("deflate", zlib.compress(TEXT)[2:-4]),   # "deflate" as some servers send it: no zlib header
    ("GZIP", gzip.compress(TEXT)),
])
async def test_a_body_is_decoded_whole_whatever_the_chunk_boundaries(encoding, packed):
    for size in (1, 7, 4096, len(packed)):
        assert await read_body(received(*pieces(packed, size), encoding=encoding), max_bytes=len(TEXT)) == TEXT


async def test_decoded_and_raw_bytes_are_capped_apart():
    with pytest.raises(BodyTooLarge) as decoded:
        await read_body(received(gzip.compress(bytes(10_000_000)), encoding="gzip"), max_bytes=100_000)
    assert decoded.value.read <= 100_000 + PIECE
    with pytest.raises(BodyTooLarge) as raw:
        await read_body(received(*pieces(bytes(300_000), 1000)), max_bytes=100_000)
    assert 100_000 < raw.value.read <= 101_000
    with pytest.raises(BodyTooLarge) as declared:
        await read_body(received(b"x", **{"content-length": "5000000"}), max_bytes=100_000)
    assert declared.value.read == 5_000_000


@pytest.mark.parametrize("encoding", ["gzip, gzip", "gzip, identity, deflate", "br", "zstd", "compress", "snappy"])
async def test_stacked_and_unknown_encodings_are_refused_before_any_decoding(encoding):
    with pytest.raises(EncodingRefused):
        await read_body(received(gzip.compress(gzip.compress(TEXT)), encoding=encoding), max_bytes=len(TEXT))


async def test_a_body_that_is_not_what_its_encoding_says_is_refused():
    with pytest.raises(EncodingRefused):
        await read_body(received(b"plain text, not gzip", encoding="gzip"), max_bytes=1000)


async def test_cut_keeps_the_start_of_a_long_body_without_reading_the_rest():
    bomb = gzip.compress(bytes(50_000_000))
    assert await read_body(received(bomb, encoding="gzip"), max_bytes=1000, cut=True) == bytes(1000)


async def test_lines_are_split_at_every_line_ending_even_across_pieces():
    body = b"data: one\r\n\r\ndata: two\n\ndata: th\xc3\xa9\rdata: last"
    for size in (1, 2, 3, 5, len(body)):
        lines = [line async for line in iter_lines(received(*pieces(body, size)), max_line_chars=100)]
        assert lines == ["data: one", "", "data: two", "", "data: thé", "data: last"], size


async def test_a_line_longer_than_its_cap_is_refused_while_it_arrives():
    endless = gzip.compress(b"data: " + b"x" * 20_000_000)
    with pytest.raises(BodyTooLarge):
        async for _ in iter_lines(received(endless, encoding="gzip"), max_line_chars=1_000_000):
            pass
