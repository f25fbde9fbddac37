"""Framework packs: ids, short titles, hierarchy and status of each supported framework.

Plain Python, no Django. Packs are JSON files in `data/`; the two NIST packs are generated from
the public-domain OSCAL catalogues by `build_packs.py`, the others are hand-maintained (ids and
short titles only, never copyrighted requirement text). A pack may also name sub-provisions that
have no entry of their own (`point_names`: the GDPR's principles, lawful bases, security measures),
so that a draft naming the wrong one can be caught; those names are facts, not requirement text.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from .refs import canonical_ref, catalogue_ref, detect_scheme

DATA_DIR = Path(__file__).parent / "data"

# Every shipped pack, in display order; a workspace enables all but the superseded 2013 edition.
ALL_FRAMEWORKS = ["iso27001-2022", "gdpr", "nist-800-53r5", "nist-csf-2.0", "soc2-tsc-2017", "iso27001-2013"]
SHIPPED_FRAMEWORKS = [key for key in ALL_FRAMEWORKS if key != "iso27001-2013"]

__all__ = [
    "Entry", "Pack", "load_packs", "get_pack", "pack_for_framework_name", "canonical_ref",
    "pack_from_file", "pack_from_dict", "named_frameworks", "SHIPPED_FRAMEWORKS", "ALL_FRAMEWORKS",
]


@dataclass(frozen=True)
class Entry:
    framework_key: str
    ref: str
    kind: str
    parent: str | None
    title: str
    status: str = "active"
    replaced_by: tuple[str, ...] = ()

    @property
    def withdrawn(self) -> bool:
        return self.status == "withdrawn"


class Pack:
    """One framework's catalogue. `entries` maps canonical ref -> Entry in catalogue order.

    `scheme` names the shipped pack whose way of writing ids this pack shares (a shipped pack's
    own key; for an imported 800-53 or CSF catalogue the shipped NIST key), or None when its ids
    follow no shipped grammar. `point_names` maps a sub-provision's canonical ref to the names
    people give it, first the usual one.
    """

    def __init__(self, key: str, name: str, aliases: list[str], entries: dict[str, Entry], *,
                 scheme: str | None = None, point_names: dict[str, tuple[str, ...]] | None = None):
        self.key = key
        self.name = name
        self.aliases = list(aliases)
        self.entries = entries
        self.scheme = scheme
        self.point_names = dict(point_names or {})
        self._refs = list(entries)
        self._order = {ref: i for i, ref in enumerate(self._refs)}

    def get(self, ref: str) -> Entry | None:
        """The entry for an exact canonical ref, or None."""
        return self.entries.get(ref)

    def lookup(self, ref: str) -> Entry | None:
        """The entry a canonical ref (possibly with sub-parts like `(1)(a)`) belongs to."""
        return self.entries.get(ref) or self.entries.get(catalogue_ref(self.scheme, ref))

    def between(self, first: str, last: str) -> list[Entry]:
        """Entries from `first` to `last` inclusive at the same kind and parent (for ranges)."""
        start, end = self._order.get(first), self._order.get(last)
        if start is None or end is None or end < start:
            return []
        head = self.entries[first]
        refs = self._refs[start:end + 1]
        return [self.entries[r] for r in refs if self.entries[r].kind == head.kind]

    def __repr__(self) -> str:
        return f"Pack({self.key!r}, {len(self.entries)} entries)"


def pack_from_dict(data: dict) -> Pack:
    """Build a Pack from the JSON pack format."""
    key = data["key"]
    entries: dict[str, Entry] = {}
    for raw in data["entries"]:
        entries[raw["ref"]] = Entry(
            framework_key=key, ref=raw["ref"], kind=raw["kind"], parent=raw.get("parent"),
            title=raw.get("title") or "", status=raw.get("status", "active"),
            replaced_by=tuple(raw.get("replaced_by") or ()),
        )
    scheme = data.get("scheme") or (key if key in ALL_FRAMEWORKS else detect_scheme(list(entries)))
    point_names = {ref: tuple(names) for ref, names in (data.get("point_names") or {}).items()}
    return Pack(key, data["name"], data.get("aliases", []), entries, scheme=scheme, point_names=point_names)


def pack_from_file(path: str | Path) -> Pack:
    """Load a pack JSON file (as shipped in data/ or written by the OSCAL importer)."""
    with open(path, encoding="utf-8") as handle:
        return pack_from_dict(json.load(handle))


@lru_cache(maxsize=1)
def load_packs() -> dict[str, Pack]:
    """All shipped packs by key (cached)."""
    return {key: pack_from_file(DATA_DIR / f"{key}.json") for key in ALL_FRAMEWORKS}


def get_pack(key: str) -> Pack:
    """The shipped pack `key`; KeyError if unknown."""
    return load_packs()[key]


def _squash(name: str) -> str:
    return re.sub(r"[\s\-_.,/:()]+", "", name.lower()).replace("iec", "")


@lru_cache(maxsize=1)
def _shipped_by_squashed_name() -> dict[str, str]:
    """Each shipped pack's name, key and aliases, squashed, to its key (the first pack wins)."""
    found: dict[str, str] = {}
    for pack in load_packs().values():
        for name in (pack.name, pack.key, *pack.aliases):
            found.setdefault(_squash(name), pack.key)
    return found


@lru_cache(maxsize=512)
def pack_for_framework_name(name: str) -> Pack | None:
    """The pack a framework display name refers to ("ISO 27001:2022", "GDPR", "SOC 2", ...), or None.

    An ISO 27001/27002 name without an edition means the current (2022) edition.
    """
    if not name or not name.strip():
        return None
    packs = load_packs()
    found = _shipped_by_squashed_name().get(_squash(name))
    if found is not None:
        return packs[found]
    wanted, lowered = _squash(name), name.lower()
    if re.search(r"2700[12]", lowered):
        return packs["iso27001-2013" if "2013" in lowered else "iso27001-2022"]
    if "800-53" in lowered or "80053" in wanted:
        return packs["nist-800-53r5"]
    if re.search(r"\bcsf\b|cybersecurity framework", lowered):
        return packs["nist-csf-2.0"]
    if "gdpr" in lowered or "2016/679" in lowered or "general data protection" in lowered:
        return packs["gdpr"]
    if re.search(r"\bsoc ?2\b|\btsc\b|trust services", lowered):
        return packs["soc2-tsc-2017"]
    return None


#: How many words a framework's name may span when written loosely ("NIST Cybersecurity Framework 2.0").
_NAME_WORDS = 4
#: Only so much of a long text is read for names: tasks name their frameworks early.
_READ_WORDS = 400


@lru_cache(maxsize=1024)
def _name_pattern(lowered_name: str) -> re.Pattern:
    # "(?!:\d)": "ISO 27001" inside "ISO 27001:2013" is that edition's name, not this one.
    return re.compile(rf"(?<![\w/]){re.escape(lowered_name)}(?!\w|:\d)")


def named_frameworks(text: str, packs: Mapping[str, Pack] | None = None) -> list[Pack]:
    """The frameworks a text names ("ISO 27001", "GDPR", "NIST CSF 2.0", "SOC 2", an imported
    pack's name or alias), among `packs` (default: every shipped pack), in the order of `packs`.

    A name with an edition names that edition only: "ISO 27001:2013" is not the 2022 edition.
    """
    packs = load_packs() if packs is None else packs
    named: set[str] = set()
    words = text.split()[:_READ_WORDS]
    for size in range(1, _NAME_WORDS + 1):
        for start in range(len(words) - size + 1):
            pack = pack_for_framework_name(" ".join(words[start:start + size]).strip(",.;:()"))
            if pack is not None and pack.key in packs:
                named.add(pack.key)
    lowered = f" {' '.join(words).lower()} "
    for key, pack in packs.items():
        for name in (pack.name, key, *pack.aliases):
            if name and name.lower() in lowered and _name_pattern(name.lower()).search(lowered):
                named.add(key)
    return [pack for key, pack in packs.items() if key in named]
