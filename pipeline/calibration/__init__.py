"""Calibrating the blind verifier: a corpus with known ground truth, a runner, and the report.

Plain Python, no Django.
- `build_corpus(seed, runs=..., size=...)`: clean drafts (shipped seed corpus and a workspace's
  own runs) and drafts with one planted violation each;
- `run_calibration(corpus, provider, cfg, ...)`: the verifier over the corpus under the narrow and
  the widened contract, bounded, budgeted and resumable;
- `calibration_report(corpus, results)`: the figures per contract, and the gate's apart;
- `compare_topologies(traces)`: evaluation runs aggregated per topology.
"""
from __future__ import annotations

from .contracts import CONTRACTS, NARROW, WIDENED, verifier_request
from .corpus import CITATION_TYPES, MODEL_ONLY_TYPES, VIOLATION_TYPES, build_corpus, seed_drafts, workspace_drafts
from .drafts import CLEAN, CorpusDraft, Truth, draft_id
from .report import calibration_report, issue_matches, mechanical_findings, wilson
from .runner import Budget, CallResult, Progress, RunOutcome, run_calibration
from .topologies import compare_topologies, read_tasks, wall_time_s

__all__ = [
    "build_corpus", "seed_drafts", "workspace_drafts", "draft_id", "CorpusDraft", "Truth",
    "CLEAN", "VIOLATION_TYPES", "CITATION_TYPES", "MODEL_ONLY_TYPES",
    "CONTRACTS", "NARROW", "WIDENED", "verifier_request",
    "run_calibration", "Budget", "CallResult", "Progress", "RunOutcome",
    "calibration_report", "issue_matches", "mechanical_findings", "wilson",
    "compare_topologies", "read_tasks", "wall_time_s",
]
