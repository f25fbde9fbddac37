"""The packs one check runs against: every shipped pack plus the ones a workspace imported."""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from . import Pack, _squash, load_packs, pack_for_framework_name


class PackSet:
    """Shipped packs and imported ones, looked up by key or by the framework name a brief writes.

    An imported pack never replaces a shipped one with the same key (the importer refuses those
    keys anyway); a brief's framework name is matched against the imported packs' own names first,
    so "NIST SP 800-53 Rev. 5.1.1" finds the workspace's import rather than the shipped 5.0.1.
    """

    def __init__(self, extra: Iterable[Pack] | Mapping[str, Pack] = ()):
        shipped = load_packs()
        extra = extra.values() if isinstance(extra, Mapping) else extra
        self.extra = [pack for pack in extra if pack.key not in shipped]
        self.by_key: dict[str, Pack] = {**shipped, **{pack.key: pack for pack in self.extra}}
        self._names = {name: pack for pack in reversed(self.extra)
                       for name in map(_squash, (pack.name, pack.key, *pack.aliases))}
        #: The imported packs' names and aliases, as a text may write them (before the shipped names).
        self.extra_names = tuple(name for pack in self.extra for name in (pack.name, *pack.aliases))

    def get(self, key: str) -> Pack:
        """The pack `key`; KeyError if neither shipped nor given."""
        return self.by_key[key]

    def for_framework_name(self, name: str) -> Pack | None:
        """The pack a brief's framework name refers to: an imported pack by its own name, key or
        alias, else a shipped pack (by name or the usual heuristics), else None."""
        if name and (pack := self._names.get(_squash(name))):
            return pack
        return pack_for_framework_name(name)

    def sharing_scheme(self, scheme: str) -> list[Pack]:
        """The packs whose ids are written like `scheme`'s: the shipped one first, then imports."""
        return [pack for pack in self.by_key.values() if pack.scheme == scheme]

    def own_scheme(self) -> list[Pack]:
        """Imported packs whose ids follow no shipped grammar (read from their own catalogue)."""
        return [pack for pack in self.extra if pack.scheme is None]
