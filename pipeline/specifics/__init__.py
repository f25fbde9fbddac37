"""Unsourced specifics (docs/verifier-contract.md, "Unsourced specifics"): advisory, never a gate.

Every released step and the recap are read for specifics: numbers with their units, percentages,
amounts, dates, durations and deadlines, people's names, organisations, e-mail addresses and phone
numbers. Each is looked for in what the executor was given, allowing for other spellings of the
same fact and for nothing else: a specific found nowhere is unsourced, one found is linked to the
passage that states it. The verifier never sees any of it, and nothing here holds a step back.

Plain Python, no Django. Entry points: `find_specifics(text)`, `SourceIndex.of(ctx, brief)`,
`list_specifics(text, index)`, and `SpecificsReader`, which keeps a run's index between steps.
"""
from __future__ import annotations

from .extract import find_specifics
from .found import KIND_LABELS, KINDS, Specific
from .listing import Listing, RunListing, SpecificsReader, list_specifics
from .sources import SOURCE_KINDS, Source, SourceIndex, context_sources

__all__ = ["find_specifics", "list_specifics", "Listing", "RunListing", "SpecificsReader", "Specific", "Source", "SourceIndex",
           "context_sources", "KINDS", "KIND_LABELS", "SOURCE_KINDS"]
