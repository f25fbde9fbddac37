"""List a text's specifics against the sources: the unsourced ones, and where the others came from."""
from __future__ import annotations

from dataclasses import dataclass, field

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
