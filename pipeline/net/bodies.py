"""Reading an HTTP response body under a cap, whatever its Content-Encoding says.

httpx decodes a compressed body a network chunk at a time with no bound on what one chunk
expands to, and applies stacked encodings (`gzip, gzip`) one after the other: 822 bytes can
become 400 MB in one step, so counting the output of `aiter_bytes()` caps nothing and `aread()`
caps nothing at all. Every response Beyond reads (pages, robots.txt, search results, model
replies, streams, error bodies) goes through here instead:

- the raw bytes are read with `aiter_raw()` and counted against their own cap;
- one encoding at most is decoded (`gzip` or `deflate`, the ones `ACCEPT_ENCODING` asks for),
  incrementally, at most `PIECE` bytes of output per step, and the decoded bytes are counted
  against the cap as they come; a stacked or unknown encoding is refused before any decoding;
- between two decoded pieces the event loop gets a turn, so a concurrent task never waits for
  more than one piece's work (the network already delivers raw chunks of 64 KB at most).

What the process holds for one response is then the cap plus one piece, not what the sender chose.
"""
from __future__ import annotations

import asyncio
import codecs
import zlib
from collections.abc import AsyncIterator, Iterator

import httpx

#: The encodings Beyond can decode with an output bound; sent as Accept-Encoding on every request.
ACCEPT_ENCODING = "gzip, deflate"
#: Decoded bytes produced per step at most.
PIECE = 64 * 1024


class BodyRefused(Exception):
    """A response body that was not read to its end; `reason` is short and stable."""

    reason = "refused"


class BodyTooLarge(BodyRefused):
    reason = "too_large"

    def __init__(self, limit: int, what: str = "body", *, unit: str = "bytes", read: int | None = None):
        super().__init__(f"the {what} is larger than {limit:,} {unit}")
        #: How far the body was read when it was refused (the declared length, when that said it).
        self.limit, self.read = limit, read


class EncodingRefused(BodyRefused):
    """A Content-Encoding that is stacked, unknown or not what it says it is."""

    reason = "bad_encoding"


class _Inflater:
    """zlib with an output bound: gzip, or deflate with or without its zlib header. What follows
    the end of the compressed data is ignored, as httpx does."""

    def __init__(self, encoding: str):
        self.encoding = encoding
        self.engine = zlib.decompressobj(16 + zlib.MAX_WBITS) if encoding == "gzip" else None
        self.head = b""

    def _choose_deflate(self, data: bytes) -> bytes:
        """"deflate" should be zlib-wrapped; some servers send it bare. Its first two bytes say
        which (a zlib header is a multiple of 31 with compression method 8)."""
        self.head += data
        if len(self.head) < 2:
            return b""
        cmf, flg = self.head[0], self.head[1]
        wrapped = cmf & 0x0F == 8 and (cmf * 256 + flg) % 31 == 0
        self.engine = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
        data, self.head = self.head, b""
        return data

    def pieces(self, data: bytes) -> Iterator[bytes]:
        if self.engine is None:
            data = self._choose_deflate(data)
            if self.engine is None:
                return
        try:
            while not self.engine.eof:
                out = self.engine.decompress(data, PIECE)
                data = self.engine.unconsumed_tail
                if out:
                    yield out
                # A full piece may leave output inside zlib even with all input taken: ask again.
                if not data and len(out) < PIECE:
                    break
        except zlib.error as exc:
            raise EncodingRefused(f"the body is not valid {self.encoding} ({exc})") from None


def content_coding(response: httpx.Response) -> str | None:
    """The one encoding to undo (None for none); EncodingRefused for stacked or unknown ones."""
    codings = [c.strip().lower() for c in response.headers.get_list("content-encoding", split_commas=True)]
    codings = [c for c in codings if c and c != "identity"]
    if not codings:
        return None
    if len(codings) > 1:
        raise EncodingRefused(f"stacked content encodings ({', '.join(codings)}) are refused")
    coding = {"x-gzip": "gzip"}.get(codings[0], codings[0])
    if coding not in ("gzip", "deflate"):
        raise EncodingRefused(f"the content encoding {coding!r} is not one Beyond asked for")
    return coding


async def iter_body(response: httpx.Response, *, max_bytes: int | None,
                    max_raw_bytes: int | None = None) -> AsyncIterator[bytes]:
    """The decoded body in pieces; BodyTooLarge once more than `max_bytes` decoded (or
    `max_raw_bytes` raw, by default the same) would be read, EncodingRefused for an encoding that
    cannot be decoded under a bound. None: no cap of that kind (a stream read line by line, whose
    lines are capped instead)."""
    raw_limit = max_bytes if max_raw_bytes is None else max_raw_bytes
    declared = response.headers.get("content-length", "")
    if raw_limit is not None and declared.isdigit() and int(declared) > raw_limit:
        raise BodyTooLarge(raw_limit, read=int(declared))
    in_memory = _content(response)
    coding = None if in_memory is not None else content_coding(response)
    inflater = _Inflater(coding) if coding else None
    raw_total = decoded_total = 0
    async for raw in (_once(in_memory) if in_memory is not None else response.aiter_raw()):
        raw_total += len(raw)
        if raw_limit is not None and raw_total > raw_limit:
            raise BodyTooLarge(raw_limit, read=raw_total)
        for piece in (inflater.pieces(raw) if inflater else _split(raw)):
            decoded_total += len(piece)
            if max_bytes is not None and decoded_total > max_bytes:
                raise BodyTooLarge(max_bytes, read=decoded_total)
            yield piece
            if inflater:
                await asyncio.sleep(0)


def _content(response: httpx.Response) -> bytes | None:
    """The body of a response built in memory rather than received (`httpx.Response(content=...)`
    from a MockTransport): httpx has read and decoded it already. None for a received one."""
    try:
        return response.content
    except httpx.ResponseNotRead:
        return None


async def _once(content: bytes) -> AsyncIterator[bytes]:
    yield content


def _split(raw: bytes) -> Iterator[bytes]:
    for start in range(0, len(raw), PIECE):
        yield raw[start:start + PIECE]


async def read_body(response: httpx.Response, *, max_bytes: int, cut: bool = False) -> bytes:
    """The whole decoded body, at most `max_bytes`: BodyTooLarge beyond that, or with `cut` its
    first `max_bytes` (robots.txt's rule, an error body's message)."""
    chunks: list[bytes] = []
    held = 0
    limit = None if cut else max_bytes
    async for piece in iter_body(response, max_bytes=limit, max_raw_bytes=limit):
        chunks.append(piece[:max_bytes - held])
        held += len(chunks[-1])
        if cut and held >= max_bytes:
            break
    return b"".join(chunks)


async def iter_lines(response: httpx.Response, *, max_line_chars: int) -> AsyncIterator[str]:
    """The decoded body as text lines (UTF-8, line endings removed), as `aiter_lines()` gives them;
    BodyTooLarge for a line longer than `max_line_chars`. The body as a whole is not capped: a
    stream is read line by line, and its reader caps what it keeps."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    line: list[str] = []   # the pieces of the line not yet ended
    held = 0
    carry_cr = False       # a \r ended the last piece: a \n may follow in the next one
    async for piece in iter_body(response, max_bytes=None, max_raw_bytes=None):
        text = ("\r" if carry_cr else "") + decoder.decode(piece)
        carry_cr = text.endswith("\r")
        parts = _split_lines(text[:-1] if carry_cr else text)
        if len(parts) > 1:
            yield "".join(line) + parts[0]
            for whole in parts[1:-1]:
                yield whole
            line, held = [], 0
        line.append(parts[-1])
        held += len(parts[-1])
        if held > max_line_chars:
            raise BodyTooLarge(max_line_chars, "line", unit="characters")
    parts = _split_lines(("\r" if carry_cr else "") + decoder.decode(b"", final=True))
    last = ["".join(line) + parts[0], *parts[1:]]
    for text in last[:-1] if last[-1] == "" else last:
        yield text


def _split_lines(text: str) -> list[str]:
    """`text` split at \\n, \\r\\n and \\r; the last element is what follows the last line ending."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
