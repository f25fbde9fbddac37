"""The calibration corpus: clean drafts and drafts carrying one known violation each.

Clean drafts come from the shipped seed corpus and, where the caller passes them, from a
workspace's own completed runs. Each violation draft is made mechanically from a clean one
(`mutations.py`) and carries its ground truth. Everything is deterministic for a given seed, and
a draft's id depends only on its brief, step and text, so results stay keyed to the same drafts
across runs of the corpus builder.
"""
from __future__ import annotations

import random
from collections.abc import Iterable

from pipeline.citations import CitationGate
from pipeline.citations.gate import Packs, pack_set
from pipeline.schemas import Brief

from .drafts import CLEAN, CorpusDraft, Truth, draft_id
from .mutations import make_violation
from .seed import seed_cases

#: The violation types, each made from a clean draft by one mechanical change.
CITATION_TYPES = ("altered_id", "altered_title", "altered_wording", "unapproved_citation")
MODEL_ONLY_TYPES = ("contradicted_judgment", "removed_requirement")
VIOLATION_TYPES = CITATION_TYPES + MODEL_ONLY_TYPES


def seed_drafts() -> list[CorpusDraft]:
    """The shipped clean drafts."""
    drafts = []
    for case in seed_cases():
        for seed in case.drafts:
            drafts.append(CorpusDraft(draft_id(case.brief, seed.step, seed.text), "seed", case.id, case.framework,
                                      case.doc_type, case.brief, seed.step, seed.text, Truth(),
                                      tuple(seed.items.items()), case.contradictions))
    return drafts


def workspace_drafts(runs: Iterable[tuple[Brief | dict, int, str]], *, packs: Packs = None) -> list[CorpusDraft]:
    """Clean drafts from a workspace's completed runs: (brief, step index, released draft) tuples.

    Pass drafts released with the badge `passed`. A draft the citation gate finds fault with is
    left out (it is not clean), and so is a repeat. A draft the same verifier already passed is a
    friendly sample for that verifier: the report keeps seed and workspace figures apart.
    """
    extra = pack_set(packs)
    drafts, seen = [], set()
    for brief, step, text in runs:
        brief = brief if isinstance(brief, Brief) else Brief.model_validate(brief)
        if not text or not text.strip() or not 1 <= step <= len(brief.steps):
            continue
        key = draft_id(brief, step, text)
        if key in seen or CitationGate(brief, extra).check(text):
            continue
        seen.add(key)
        framework = brief.citations[0].framework if brief.citations else ""
        drafts.append(CorpusDraft(key, "workspace", "run", framework, "workspace run", brief, step, text))
    return drafts


def build_corpus(seed: int = 0, *, runs: Iterable[tuple[Brief | dict, int, str]] = (), size: int | None = None,
                 kinds: Iterable[str] = VIOLATION_TYPES, packs: Packs = None) -> list[CorpusDraft]:
    """Clean drafts (seed corpus, then the workspace's runs) and one violation draft per clean draft
    and violation type where that type applies to it.

    `size` keeps that many drafts, half of them clean and the rest spread evenly over the
    violation types (as far as there are drafts of each), chosen with `seed`.
    """
    extra = pack_set(packs)
    kinds = [kind for kind in kinds if kind in VIOLATION_TYPES]
    corpus: list[CorpusDraft] = []
    for clean in seed_drafts() + workspace_drafts(runs, packs=extra):
        corpus.append(clean)
        for kind in kinds:
            violation = make_violation(clean, kind, random.Random(f"{seed}:{clean.draft_id}:{kind}"), extra)
            if violation is not None:
                corpus.append(violation)
    return corpus if size is None else _sample(corpus, size, random.Random(f"{seed}:sample"))


def _sample(corpus: list[CorpusDraft], size: int, rng: random.Random) -> list[CorpusDraft]:
    strata: dict[str, list[CorpusDraft]] = {}
    for item in corpus:
        strata.setdefault(item.truth.kind, []).append(item)
    for items in strata.values():
        rng.shuffle(items)
    violation_kinds = [kind for kind in VIOLATION_TYPES if kind in strata]
    pattern = [kind for violation in violation_kinds for kind in (CLEAN, violation)] or [CLEAN]
    picked: list[CorpusDraft] = []
    while len(picked) < size and any(strata.values()):
        for kind in pattern:
            if len(picked) < size and strata.get(kind):
                picked.append(strata[kind].pop())
    order = {item.draft_id: i for i, item in enumerate(corpus)}
    return sorted(picked, key=lambda item: order[item.draft_id])
