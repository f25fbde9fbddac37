"""Framework packs as a workspace sees them: the shipped packs plus those imported into the database,
and the slice of them relevant to a task (ids and short titles, within a token share)."""
from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

from pipeline.context import FrameworkEntry
from pipeline.frameworks import Entry, Pack, load_packs, named_frameworks, pack_from_dict
from pipeline.words import stem, topic_words
from beyond_site.workspaces.chunking import estimate_tokens
from beyond_site.workspaces.models import FrameworkPack


#: Imported packs as built from their rows, by key, with the row's last change: a run reads its
#: workspace's packs at every start, and building a catalogue of a thousand controls from JSON
#: each time cost more than the rest of the run's context.
_imported: dict[str, tuple[object, Pack]] = {}
_imported_lock = threading.Lock()


def imported_packs() -> dict[str, Pack]:
    """Every imported pack by key; built again only when its row changed since it was last read."""
    versions = list(FrameworkPack.objects.order_by("key").values_list("pk", "key", "updated_at"))
    stale = [pk for pk, key, changed in versions if _imported.get(key, (None,))[0] != (pk, changed)]
    built = {row.key: ((row.pk, row.updated_at), pack_from_dict(row.data))
             for row in FrameworkPack.objects.filter(pk__in=stale)} if stale else {}
    with _imported_lock:
        _imported.update(built)
    # A pack built just now is as new as its row (or newer, if it changed between the two reads);
    # a stale row deleted between them is left out.
    found = {key: built.get(key) or _imported.get(key) for _, key, _ in versions}
    return {key: entry[1] for key, entry in found.items() if entry is not None}


def available_packs(imported: dict[str, Pack] | None = None) -> dict[str, Pack]:
    """Every pack a workspace may enable, in display order: shipped first, then imported by key
    (`imported`, when the caller already read them with `imported_packs`)."""
    packs = dict(load_packs())
    imported = imported_packs() if imported is None else imported
    packs.update((key, pack) for key, pack in imported.items() if key not in packs)
    return packs


def canonical_keys(keys, packs: dict[str, Pack] | None = None) -> list[str]:
    """`keys` validated, deduplicated and in display order; ValueError naming any unknown key."""
    packs = packs if packs is not None else available_packs()
    unknown = sorted({str(k) for k in keys} - set(packs))
    if unknown:
        raise ValueError(f"unknown framework pack(s): {', '.join(unknown)}; available: {', '.join(packs)}")
    wanted = set(keys)
    return [key for key in packs if key in wanted]


def _is_structure(entry: Entry, pack: Pack) -> bool:
    """Top-level structure: clauses, chapters, families, functions, and an annex's themes."""
    if entry.parent is None:
        return entry.kind != "recital"
    parent = pack.get(entry.parent)
    return parent is not None and parent.parent is None and parent.kind == "annex"


def _depth(entry: Entry, pack: Pack) -> int:
    depth, parent = 0, entry.parent
    while parent is not None and depth < 10:
        depth += 1
        found = pack.get(parent)
        parent = found.parent if found else None
    return depth


def _line(pack: Pack, entry: Entry) -> FrameworkEntry:
    return FrameworkEntry(framework=pack.name, ref=entry.ref, title=entry.title, kind=entry.kind)


def line_tokens(item: FrameworkEntry) -> int:
    return estimate_tokens(f"- {item.framework} {item.ref}: {item.title}\n")


@dataclass(frozen=True, slots=True)
class _Candidate:
    """What choosing an entry needs that does not depend on the task, worked out once per pack."""

    position: int
    stems: frozenset[str]
    structure: bool
    depth: int
    recital: bool
    line: FrameworkEntry
    cost: int


@dataclass(frozen=True, slots=True)
class _PackIndex:
    """A pack's listable entries, and which of them a task can reach by a word of its title."""

    candidates: tuple[_Candidate, ...]  # in catalogue order
    structure: tuple[int, ...]  # indexes into `candidates`
    by_stem: dict[str, tuple[int, ...]]  # a title's stem -> the candidates whose titles have it
    listable: tuple[int, ...]  # all but recitals: what a task that names the pack may list


_indexes: weakref.WeakKeyDictionary[Pack, _PackIndex] = weakref.WeakKeyDictionary()


def pack_index(pack: Pack) -> _PackIndex:
    """The pack's candidates with their title stems, level and cost, indexed by stem (worked out
    once per pack object: the shipped packs live as long as the process, an imported one until
    its row changes). A run looks up the task's words instead of reading every entry."""
    found = _indexes.get(pack)
    if found is None:
        candidates = tuple(
            _Candidate(position, frozenset(stem(w) for w in topic_words(entry.title)), _is_structure(entry, pack),
                       _depth(entry, pack), entry.kind == "recital", line := _line(pack, entry), line_tokens(line))
            for position, entry in enumerate(pack.entries.values()) if not entry.withdrawn and entry.title)
        by_stem: dict[str, list[int]] = {}
        for n, c in enumerate(candidates):
            for word in c.stems:
                by_stem.setdefault(word, []).append(n)
        found = _PackIndex(candidates, tuple(n for n, c in enumerate(candidates) if c.structure),
                           {word: tuple(ns) for word, ns in by_stem.items()},
                           tuple(n for n, c in enumerate(candidates) if not c.recital))
        _indexes[pack] = found
    return found


def select_entries(task: str, keys: list[str], budget_tokens: int,
                   packs: dict[str, Pack] | None = None) -> tuple[tuple[FrameworkEntry, ...], int]:
    """The enabled frameworks' entries relevant to `task`, within `budget_tokens`.

    Priority: top-level structure of every enabled pack, then entries whose titles share the
    task's words (most shared first), then the rest of the packs the task names (shallow levels
    first). Returned in display order (pack, then catalogue order), so the rendering is stable;
    the second value counts the named packs' entries left out for lack of room.
    """
    packs = packs if packs is not None else available_packs()
    enabled = [(key, packs[key]) for key in keys if key in packs]
    stems = {stem(w) for w in topic_words(task)}
    named = {pack.key for pack in named_frameworks(task, dict(enabled))}
    candidates: dict[tuple[int, int], tuple[tuple, _Candidate]] = {}
    for pack_no, (key, pack) in enumerate(enabled):
        index = pack_index(pack)
        shared: dict[int, int] = {}
        for word in stems:
            for n in index.by_stem.get(word, ()):
                shared[n] = shared.get(n, 0) + 1
        priorities = {n: (0, 0, 0) for n in index.structure}
        for n, count in shared.items():
            priorities.setdefault(n, (1, -count, index.candidates[n].depth))
        if key in named:
            for n in index.listable:
                priorities.setdefault(n, (2, index.candidates[n].depth, 0))
        for n, priority in priorities.items():
            c = index.candidates[n]
            candidates[(pack_no, c.position)] = (priority, c)
    chosen: list[tuple[int, int]] = []
    used = 0
    left_out = 0
    for place, (priority, c) in sorted(candidates.items(), key=lambda kv: (kv[1][0], kv[0])):
        cost = c.cost
        if used + cost > budget_tokens:
            left_out += priority[0] == 2
            continue
        chosen.append(place)
        used += cost
    return tuple(candidates[place][1].line for place in sorted(chosen)), left_out
