"""The mechanical checks of one run, in one place: they need no facts outside their own inputs.

- Citations against the brief's closed set (pipeline.citations), with the workspace's imported
  catalogues read like the shipped ones.
- On runs that did web research, every URL and price against the evidence the brief approved
  (pipeline.integrity). A run without research has no evidence set, and this check does not run.

The same checks run on every step draft and on the recap; their findings are issues of source
`mechanical` (docs/verifier-contract.md). `empty_draft_issue` is the orchestrator's own check,
outside this class so that nothing can replace it: a draft with nothing to read is never released.
"""
from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

from pipeline.citations import check_brief_citations, check_recap, draft_gate
from pipeline.citations.gate import Packs, pack_set
from pipeline.integrity import IntegrityGate, check_brief_evidence
from pipeline.schemas import Brief, Issue

Gate = Callable[[Brief, str], list[Issue]]


class MechanicalChecks:
    def __init__(self, packs: Packs = None, *, evidence: Sequence[Any] | None = None,
                 citation_gate: Gate | None = None):
        """`packs`: the workspace's imported framework packs, beside the shipped ones (read once
        here: building their id readers is the costly part). `evidence`: the run's evidence items,
        None when the run did no research. `citation_gate` replaces the citation check of step
        drafts (tests inject faults through it)."""
        self.packs = pack_set(packs)
        self.evidence = list(evidence) if evidence is not None else None
        self._citations = citation_gate or draft_gate(self.packs)

    def with_evidence(self, evidence: Sequence[Any]) -> MechanicalChecks:
        checks = copy.copy(self)
        checks.evidence = list(evidence)
        return checks

    def brief_warnings(self, brief: Brief) -> list[str]:
        """Run-level warnings about the brief itself; they never stop a run."""
        return check_brief_citations(brief, packs=self.packs) + check_brief_evidence(brief, self.evidence)

    def draft_issues(self, brief: Brief, draft: str) -> list[Issue]:
        return self._citations(brief, draft) + self._integrity(brief, draft)

    def recap_issues(self, brief: Brief, text: str) -> list[Issue]:
        return check_recap(brief, text, packs=self.packs) + self._integrity(brief, text)

    def _integrity(self, brief: Brief, text: str) -> list[Issue]:
        if self.evidence is None:
            return []
        return IntegrityGate(brief, self.evidence).check(text)


#: A draft the model's output limit cut off (`finish_reason: length`): the verifier may find nothing
#: wrong with the part it reads, but the step is not what its contract asked for.
TRUNCATED_DRAFT = Issue(type="truncated_draft", detail="the model's output limit cut this draft off before its "
                                                        "end: the step is incomplete")


#: A draft that came through a gateway that can end a cut stream as if complete (LiteLLM streamed):
#: the verifier may pass what it reads, but nothing tells whether the step ends where it should.
COMPLETENESS_UNKNOWN = Issue(type="completeness_unknown", detail="this draft was streamed through a gateway that "
                                                                 "can hide a cut: whether it is whole is unknown")


def cut_issue(truncated: bool | None) -> Issue | None:
    """The mechanical finding a draft's completeness gives (`Completion.truncated`), or None."""
    return TRUNCATED_DRAFT if truncated else COMPLETENESS_UNKNOWN if truncated is None else None


def empty_draft_issue(draft: str) -> Issue | None:
    """An `empty_draft` issue when the draft has no letter and no digit in any script (nothing, white
    space, zero-width characters, punctuation or Markdown marks alone), else None. What a stream cut
    short behind a gateway looks like, whatever the verifier says of it."""
    if any(ch.isalnum() for ch in draft):
        return None
    return Issue(type="empty_draft", detail="the draft is empty: the executor's reply has no text to read "
                                            "(a reply cut short, or a model that answered nothing)")
