"""List a text's specifics against the sources: the unsourced ones, and where the others came from."""
from __future__ import annotations

from dataclasses import dataclass, field

import asyncio
import logging
from collections.abc import Callable

from pipeline import events as ev
from pipeline.context import Context
from pipeline.frameworks.packset import PackSet
from pipeline.schemas import Brief

from .extract import find_specifics
from .found import fold
from .sources import SourceIndex


@dataclass
class Listing:
    """`unsourced`: [{"text", "kind"}], each specific found in no source, once per spelling.
    `sources`: [{"kind", "ref", "text", "specifics"}], one per passage that states at least one of
    the text's specifics (`text` is the passage, `specifics` what it states, as written)."""

    unsourced: list[dict] = field(default_factory=list)
    sources: list[dict] = field(default_factory=list)


def list_specifics(text: str, index: SourceIndex, packs: PackSet | None = None) -> Listing:
    listing = Listing()
    seen: set[tuple[str, str]] = set()
    by_passage: dict[tuple[int, str], dict] = {}
    for specific in find_specifics(text, packs):
        written = (specific.kind, " ".join(fold(specific.text).split()))
        if written in seen:
            continue
        seen.add(written)
        place = index.find(specific)
        if place is None:
            listing.unsourced.append({"text": specific.text, "kind": specific.kind})
            continue
        source = index.sources[place.source]
        passage = index.passage(place)
        entry = by_passage.get((place.source, passage))
        if entry is None:
            entry = by_passage[(place.source, passage)] = {"kind": source.kind, "ref": source.ref, "text": passage,
                                                           "specifics": []}
            listing.sources.append(entry)
        entry["specifics"].append(specific.text)
    return listing


class SpecificsReader:
    """Reads a run's released steps and recap against what its executor calls were given.

    The index of a context is built once and kept while that context is in use (a run's executor
    calls share one), so each step costs its own reading and a few look-ups."""

    def __init__(self, packs: PackSet | None = None):
        self.packs = packs
        self._index: tuple[Context, Brief | None, SourceIndex] | None = None

    def index(self, ctx: Context, brief: Brief | None) -> SourceIndex:
        if self._index is None or self._index[0] is not ctx or self._index[1] is not brief:
            self._index = (ctx, brief, SourceIndex.of(ctx, brief))
        return self._index[2]

    def read(self, text: str, ctx: Context, brief: Brief | None) -> Listing:
        return list_specifics(text, self.index(ctx, brief), self.packs)


class RunListing:
    """A run's specifics, as advisory events: what the executors are given (the run's context and
    its brief) indexed on a thread while the steps render (on a large context this is the costly
    part, and the event loop, which may be serving pages, stays free meanwhile), then each release
    and the recap read against it. Nothing here, a failure included, can change what was released
    or what any model is sent."""

    def __init__(self, reader: SpecificsReader | None, emit: Callable):
        self._reader, self._emit = reader, emit
        self._indexed: asyncio.Future | None = None

    def index(self, ctx: Context, brief: Brief) -> None:
        if self._reader is not None:
            self._indexed = asyncio.ensure_future(asyncio.to_thread(self._reader.index, ctx, brief))

    async def read(self, step: int | None, text: str, given: Context | None, brief: Brief | None) -> None:
        """Step `step`'s released text (None: the recap) against what its executor was given."""
        if self._reader is None or given is None:
            return
        try:
            if self._indexed is not None and not self._indexed.done():
                await self._indexed  # only when the steps came faster than the index
            listing = self._reader.read(text or "", given, brief)
        except Exception as exc:  # advisory: a bug here is reported on the record, never a halt
            logging.getLogger("beyond.pipeline").exception("reading the specifics of step %s failed", step)
            self._emit(ev.SpecificsListed(step=step, error=f"internal error ({type(exc).__name__})"))
            return
        self._emit(ev.SpecificsListed(step=step, unsourced=listing.unsourced, sources=listing.sources))
