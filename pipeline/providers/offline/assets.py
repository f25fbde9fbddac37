"""The workspace's most sensitive assets, for documents that need a starting list when the
workspace keeps no list of their own (risks, services to test, systems to review).

Sensitivity is read from the asset register's classification: by the order of the file's own
legend when it has one (its last level the most sensitive), else by common level words.
"""
from __future__ import annotations

from dataclasses import dataclass

from .legends import legend_for
from .reading import Reading
from .text import lower_first

_LEVEL_WORDS = ("public", "internal", "personal", "confidential", "restricted", "sensitive", "health", "secret")
_RETIRED = ("retired", "disposed", "decommissioned", "archived")
_SYSTEM_WORDS = ("software", "service", "application", "system", "platform", "saas", "information", "database", "data")


@dataclass(frozen=True)
class Asset:
    name: str
    category: str
    owner: str
    classification: str
    rank: int


def _rank(value: str, levels: list[str]) -> int:
    lowered = value.strip().lower()
    if lowered in levels:
        return levels.index(lowered) + 1
    return max((n + 1 for n, word in enumerate(_LEVEL_WORDS) if word in lowered), default=0)


def key_assets(reading: Reading, limit: int = 6, *, systems_only: bool = False) -> list[Asset]:
    """The in-service assets of the register, most sensitive first (register order on a tie)."""
    register = reading.register("assets")
    if register is None:
        return []
    cols = register.columns
    legend = legend_for(reading, "assets", "Classification")
    levels = [row[0].strip().lower() for row in legend.rows] if legend else []

    def cell(row, column):
        return row[cols.index(column)] if column in cols and row[cols.index(column)] != "—" else ""

    found = []
    for row in register.rows:
        if any(word in cell(row, "Status").lower() for word in _RETIRED):
            continue
        category = cell(row, "Category")
        if systems_only and category and not any(w in category.lower() for w in _SYSTEM_WORDS):
            continue
        classification = cell(row, "Classification")
        found.append(Asset(cell(row, "Asset"), category, cell(row, "Owner"), classification, _rank(classification, levels)))
    return sorted(found, key=lambda a: -a.rank)[:limit]


def threat_for(asset: Asset) -> str:
    """A first risk scenario for an asset, by its category (the document says it is a starting point)."""
    category = asset.category.lower()
    name = lower_first(asset.name)
    if any(w in category for w in ("hardware", "device", "equipment", "laptop")):
        return f"Loss, theft or failure of {name}"
    if any(w in category for w in ("software", "service", "application", "platform", "saas")):
        return f"Outage or compromise of {name}"
    return f"Unauthorised access to or disclosure of {name}"
