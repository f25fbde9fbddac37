"""Framework packs as a workspace sees them: the shipped packs plus those imported into the database,
and the slice of them relevant to a task (ids and short titles, within a token share)."""
from __future__ import annotations

from pipeline.context import FrameworkEntry
from pipeline.frameworks import Entry, Pack, load_packs, named_frameworks, pack_from_dict
from pipeline.words import stem, topic_words
from beyond_site.workspaces.chunking import estimate_tokens
from beyond_site.workspaces.models import FrameworkPack


def imported_packs() -> dict[str, Pack]:
    return {row.key: pack_from_dict(row.data) for row in FrameworkPack.objects.order_by("key")}


def available_packs() -> dict[str, Pack]:
    """Every pack a workspace may enable, in display order: shipped first, then imported by key."""
    packs = dict(load_packs())
    packs.update((key, pack) for key, pack in imported_packs().items() if key not in packs)
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
    candidates: dict[tuple[int, int], tuple[tuple, FrameworkEntry]] = {}
    for pack_no, (key, pack) in enumerate(enabled):
        for position, entry in enumerate(pack.entries.values()):
            if entry.withdrawn or not entry.title:
                continue
            shared = len(stems & {stem(w) for w in topic_words(entry.title)})
            if _is_structure(entry, pack):
                priority = (0, 0, 0)
            elif shared:
                priority = (1, -shared, _depth(entry, pack))
            elif key in named and entry.kind != "recital":
                priority = (2, _depth(entry, pack), 0)
            else:
                continue
            candidates[(pack_no, position)] = (priority, _line(pack, entry))
    chosen: list[tuple[int, int]] = []
    used = 0
    left_out = 0
    for place, (priority, item) in sorted(candidates.items(), key=lambda kv: (kv[1][0], kv[0])):
        cost = line_tokens(item)
        if used + cost > budget_tokens:
            left_out += priority[0] == 2
            continue
        chosen.append(place)
        used += cost
    return tuple(candidates[place][1] for place in sorted(chosen)), left_out
