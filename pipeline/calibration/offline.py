"""What Beyond's offline checks catch, measured on the shipped calibration corpus.

The offline engine's verifier is not a language model: a step it lets through is badged `checked`
(docs/verifier-contract.md, "Who checked"), and wherever that badge is explained its figures are
given beside it, so nobody takes a mechanical check for a reading. They are measured by `measure()`
as a run applies the checks (the offline verifier's verdict and the citation gate's findings
together, under the narrow contract) on the whole shipped corpus. Measuring takes most of a second,
too long for a page, so the figures are kept here as numbers: tests/pipeline/test_offline_
calibration.py measures them again and fails when they drift.
"""
from __future__ import annotations

from dataclasses import dataclass

from .contracts import NARROW
from .corpus import CITATION_TYPES, build_corpus
from .report import calibration_report
from .runner import run_calibration


@dataclass(frozen=True)
class OfflineFigures:
    drafts: int
    clean: int
    clean_flagged: int
    citations: int  # planted citation errors: an altered id, title or wording, an unapproved citation
    citations_caught: int
    judgments: int  # contradicted judgments
    judgments_caught: int
    removed: int  # required items removed
    removed_caught: int

    @property
    def planted(self) -> int:
        return self.citations + self.judgments + self.removed

    @property
    def caught(self) -> int:
        return self.citations_caught + self.judgments_caught + self.removed_caught


#: `measure()` on the shipped corpus (seed 0, every draft).
FIGURES = OfflineFigures(drafts=181, clean=34, clean_flagged=3, citations=81, citations_caught=81,
                         judgments=32, judgments_caught=0, removed=34, removed_caught=5)


async def measure() -> OfflineFigures:
    """The offline checks on the shipped corpus, through the calibration's own runner and report."""
    from pipeline.providers.offline import OfflineProvider
    from pipeline.topology import parse_shorthand

    corpus = build_corpus(0)
    outcome = await run_calibration(corpus, OfflineProvider(), parse_shorthand("offline").verifier,
                                    contracts=(NARROW,))
    block = calibration_report(corpus, outcome.results)["contracts"][NARROW]["with_mechanical"]
    kinds = block["violations"]

    def count(names, what):
        return sum(kinds[name][what] for name in names if name in kinds)

    return OfflineFigures(
        drafts=len(corpus), clean=block["clean"]["n"], clean_flagged=block["clean"]["flagged"],
        citations=count(CITATION_TYPES, "n"), citations_caught=count(CITATION_TYPES, "caught"),
        judgments=count(("contradicted_judgment",), "n"), judgments_caught=count(("contradicted_judgment",), "caught"),
        removed=count(("removed_requirement",), "n"), removed_caught=count(("removed_requirement",), "caught"))


def sentence(figures: OfflineFigures = FIGURES) -> str:
    """The figures in one sentence, as the `checked` badge's explanation and the Calibration page give them."""
    f = figures
    citations = ("every planted citation error" if f.citations_caught == f.citations else
                 f"{f.citations_caught} of {f.citations} planted citation errors")
    return (f"On Beyond's calibration corpus the offline checks caught {f.caught} of {f.planted} planted "
            f"violations: {citations} ({f.citations_caught} of {f.citations}), but {f.judgments_caught} of "
            f"{f.judgments} contradicted judgments and {f.removed_caught} of {f.removed} removed requirements; "
            f"they also failed {f.clean_flagged} of {f.clean} faithful drafts.")
