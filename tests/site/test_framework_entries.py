"""The framework entries a run's context lists (workspaces/frameworks.py `select_entries`): found
through the packs' index of title words, they are exactly the entries that reading every entry
of every pack chose, for tasks that name frameworks, share words with titles, or neither."""
from __future__ import annotations

import pytest

from beyond_site.workspaces import frameworks as fw
from pipeline.frameworks import named_frameworks
from pipeline.words import stem, topic_words

TASKS = [
    "Draft our ISO/IEC 27001:2022 asset-register overview",
    "Write an access control policy covering passwords and multi-factor authentication",
    "Records of processing under GDPR Article 30 for our clinics",
    "NIST SP 800-53 audit and accountability: log retention plan",
    "Map our incident response to NIST CSF 2.0 and SOC 2",
    "Prepare a stakeholder email about the office move",
    "Supplier security, cryptography, backup and physical security for ISO 27001 and GDPR",
    "",
]


def every_entry_read(task, keys, budget, packs):
    """The selection as it was made before the index: every listable entry of every pack looked at."""
    enabled = [(key, packs[key]) for key in keys if key in packs]
    stems = {stem(w) for w in topic_words(task)}
    named = {pack.key for pack in named_frameworks(task, dict(enabled))}
    candidates = {}
    for pack_no, (key, pack) in enumerate(enabled):
        for position, entry in enumerate(pack.entries.values()):
            if entry.withdrawn or not entry.title:
                continue
            title_stems = {stem(w) for w in topic_words(entry.title)}
            depth = fw._depth(entry, pack)
            if fw._is_structure(entry, pack):
                priority = (0, 0, 0)
            elif shared := len(stems & title_stems):
                priority = (1, -shared, depth)
            elif key in named and entry.kind != "recital":
                priority = (2, depth, 0)
            else:
                continue
            candidates[(pack_no, position)] = (priority, fw._line(pack, entry))
    chosen, used, left_out = [], 0, 0
    for place, (priority, line) in sorted(candidates.items(), key=lambda kv: (kv[1][0], kv[0])):
        cost = fw.line_tokens(line)
        if used + cost > budget:
            left_out += priority[0] == 2
            continue
        chosen.append(place)
        used += cost
    return tuple(candidates[place][1] for place in sorted(chosen)), left_out


@pytest.mark.parametrize("task", TASKS)
def test_the_index_chooses_what_reading_every_entry_chose(task):
    packs = fw.available_packs({})
    keys = list(packs)
    for budget in (0, 60, 400, 3000, 10**7):
        for enabled in (keys, keys[:2], keys[::-1][:3]):
            assert fw.select_entries(task, enabled, budget, packs) == every_entry_read(task, enabled, budget, packs)


def test_a_task_sharing_title_words_reaches_those_entries_first():
    packs = fw.available_packs({})
    entries, _ = fw.select_entries("Our backup policy", list(packs), 4000, packs)
    assert any("backup" in e.title.lower() for e in entries)
