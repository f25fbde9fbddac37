"""The calibration corpus: clean drafts and drafts carrying one known violation each.

Clean drafts come from the shipped seed corpus and, where the caller passes them, from a
workspace's own completed runs. Each violation draft is made mechanically from a clean one
(`mutations.py`) and carries its ground truth. Everything is deterministic for a given seed, and
a draft's id depends only on its brief, step and text, so results stay keyed to the same drafts
across runs of the corpus builder.
"""
from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from pipeline.citations import CitationGate
from pipeline.citations.gate import Packs, pack_set
from pipeline.schemas import Brief

from .seed import seed_cases

CLEAN = "clean"
#: The violation types, each made from a clean draft by one mechanical change.
CITATION_TYPES = ("altered_id", "altered_title", "altered_wording", "unapproved_citation")
MODEL_ONLY_TYPES = ("contradicted_judgment", "removed_requirement")
VIOLATION_TYPES = CITATION_TYPES + MODEL_ONLY_TYPES


@dataclass(frozen=True)
class Truth:
    """What a draft is: clean, or which violation was planted and where.

    `changed` is the text the violation put into the draft (for a removed item, the text taken
    out); `context` is the line of the draft around it; `reported_as` lists the verdict issue
    types that report this violation.
    """

    kind: str = CLEAN
    detail: str = ""
    changed: str = ""
    context: str = ""
    reported_as: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        return self.kind == CLEAN

    def as_json(self) -> dict:
        return {"kind": self.kind, "detail": self.detail, "changed": self.changed, "context": self.context,
                "reported_as": list(self.reported_as)}


@dataclass(frozen=True)
class CorpusDraft:
    """One step draft to verify, with the brief it was written from and its ground truth."""

    draft_id: str
    source: str          # "seed" or "workspace"
    case: str            # the seed case id, or "run"
    framework: str
    doc_type: str
    brief: Brief
    step: int
    text: str
    truth: Truth = field(default_factory=Truth)
    #: for seed drafts: content-spec item -> the line that delivers it
    items: tuple[tuple[str, str], ...] = ()
    #: for seed drafts: one sentence contradicting each judgment
    contradictions: tuple[str, ...] = ()

    def as_json(self) -> dict:
        return {"draft_id": self.draft_id, "source": self.source, "case": self.case, "framework": self.framework,
                "doc_type": self.doc_type, "brief": self.brief.model_dump(mode="json", exclude_none=True),
                "step": self.step, "text": self.text, "truth": self.truth.as_json()}


def draft_id(brief: Brief, step: int, text: str) -> str:
    """A stable id: the same brief, step and text always give the same id."""
    body = json.dumps([brief.model_dump(mode="json", exclude_none=True), step, text], sort_keys=True, ensure_ascii=False)
    return "d" + hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]


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
    from .mutations import make_violation

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
