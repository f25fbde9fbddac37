"""Score calibration results against the corpus's ground truth.

Per contract: clean drafts flagged, violations caught per type, unparseable verdicts, issues raised
and how many were false, cost, latency and tokens; and, apart from the model's verdicts, what the
mechanical citation gate finds on the same drafts.

Rules, so that the figures mean one thing:
- Rates are over parsed verdicts; unparseable replies and failed calls are counted on their own.
- A draft is flagged when its verdict fails it. A violation is caught when the verdict raises an
  issue that reports the planted violation: an issue of a type that reports it (citation
  violations: `altered_citation` or `invented_citation`; a contradicted judgment:
  `contradiction`; a removed item: `step_contract`) whose quote, if it has one, points at the
  change (it lies within the changed sentence, or contains the changed text). For a removed item
  the type alone counts: the removed text is no longer there to quote.
- An issue is false when it is raised on a clean draft, or on a violation draft without reporting
  the planted violation. Every issue raised on a clean draft is false; a violation draft can hold
  more than one real issue (the same change reported twice).
- Intervals are Wilson 95% score intervals; with no draft the interval is [0, 1] and the rate null.
"""
from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable

from pipeline.citations import CitationGate
from pipeline.citations.gate import Packs, pack_set

from .corpus import VIOLATION_TYPES
from .drafts import CorpusDraft, Truth
from .runner import ERROR, PARSED, CallResult

Z95 = 1.959963984540054


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of k successes in n trials (default 95%)."""
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    # At 0/n and n/n the bound is exactly 0 or 1; floating point would leave a hair off it.
    return (0.0 if k == 0 else max(0.0, centre - half)), (1.0 if k == n else min(1.0, centre + half))


def proportion(k: int, n: int) -> dict:
    lo, hi = wilson(k, n)
    return {"n": n, "rate": round(k / n, 4) if n else None, "ci95": [round(lo, 4), round(hi, 4)]}


_MARKUP = re.compile(r"[\"“”„«»‘’'`*|#_]+")


def _norm(text: str) -> str:
    return " ".join(_MARKUP.sub(" ", text or "").lower().split())


def issue_matches(issue: dict, truth: Truth) -> bool:
    """Whether `issue` (a verdict issue as JSON) reports the violation `truth` planted."""
    if truth.clean or issue.get("type") not in truth.reported_as:
        return False
    quote = _norm(issue.get("quote", ""))
    if not quote or truth.kind == "removed_requirement":
        return True
    changed, context = _norm(truth.changed), _norm(truth.context)
    return quote in context or (bool(changed) and changed in quote)


def _judged(drafts: list[CorpusDraft], issues_of: dict[str, list[dict]]) -> dict:
    """Clean drafts flagged and violations caught, for drafts whose issues are known."""
    clean = [d for d in drafts if d.truth.clean]
    flagged = sum(bool(issues_of[d.draft_id]) for d in clean)
    block = {"clean": {"flagged": flagged, **proportion(flagged, len(clean))}, "violations": {}}
    for kind in VIOLATION_TYPES:
        of_kind = [d for d in drafts if d.truth.kind == kind]
        if not of_kind:
            continue
        caught = sum(any(issue_matches(i, d.truth) for i in issues_of[d.draft_id]) for d in of_kind)
        block["violations"][kind] = {"caught": caught, **proportion(caught, len(of_kind)),
                                     "flagged": sum(bool(issues_of[d.draft_id]) for d in of_kind)}
    raised = false = 0
    by_type: dict[str, dict[str, int]] = {}
    for d in drafts:
        for issue in issues_of[d.draft_id]:
            wrong = not issue_matches(issue, d.truth)
            raised, false = raised + 1, false + wrong
            counts = by_type.setdefault(issue.get("type", "?"), {"raised": 0, "false": 0})
            counts["raised"] += 1
            counts["false"] += wrong
    block["issues"] = {"raised": raised, "false": false,
                       "false_share": round(false / raised, 4) if raised else None, "by_type": by_type}
    return block


def _contract(drafts: dict[str, CorpusDraft], results: list[CallResult], mechanical: dict[str, list[dict]]) -> dict:
    parsed = [r for r in results if r.status == PARSED]
    judged = [drafts[r.draft_id] for r in parsed]
    model_issues = {r.draft_id: list(r.verdict.get("issues", [])) for r in parsed}
    block = _judged(judged, model_issues)
    failed = [r for r in results if r.status != PARSED]
    block["unparseable"] = {"n": len(failed), "rate": round(len(failed) / len(results), 4) if results else None,
                            "errors": sum(r.status == ERROR for r in failed)}
    combined = {key: model_issues[key] + mechanical[key] for key in model_issues}
    with_gate = _judged(judged, combined)
    block["with_mechanical"] = {"clean": with_gate["clean"], "violations": with_gate["violations"]}
    sources = sorted({d.source for d in judged})
    if len(sources) > 1:
        block["by_source"] = {source: _judged([d for d in judged if d.source == source], model_issues)["clean"]
                              for source in sources}
    block["cost"] = _cost(results)
    block["latency"] = _latency(results)
    block["tokens"] = _tokens(results)
    block["drafts"] = len(results)
    return block


def _cost(results: list[CallResult]) -> dict:
    known = [r.cost for r in results if r.cost is not None]
    return {"usd": round(sum(known), 6), "calls": len(results), "unknown": len(results) - len(known),
            "per_call_usd": round(sum(known) / len(known), 6) if known else None}


def _latency(results: list[CallResult]) -> dict:
    values = sorted(r.latency_s for r in results if r.latency_s)
    if not values:
        return {"mean_s": None, "p50_s": None, "p95_s": None, "max_s": None}
    p95 = values[min(len(values) - 1, math.ceil(0.95 * len(values)) - 1)]
    return {"mean_s": round(statistics.fmean(values), 3), "p50_s": round(statistics.median(values), 3),
            "p95_s": round(p95, 3), "max_s": round(values[-1], 3)}


def _tokens(results: list[CallResult]) -> dict:
    buckets = ("input", "cache_read", "cache_write", "output", "reasoning")
    totals = {b: sum(int((r.usage or {}).get(b) or 0) for r in results) for b in buckets}
    return {**totals, "total": sum(totals.values())}


def mechanical_findings(corpus: Iterable[CorpusDraft], *, packs: Packs = None) -> dict[str, list[dict]]:
    """The citation gate's issues on every draft, by draft id (as verdict issue JSON)."""
    extra = pack_set(packs)
    return {d.draft_id: [i.model_dump() for i in CitationGate(d.brief, extra).check(d.text)] for d in corpus}


def calibration_report(corpus: Iterable[CorpusDraft], results: Iterable[CallResult | dict], *,
                       packs: Packs = None) -> dict:
    """The report: `{"contracts": {"narrow": {...}, "widened": {...}}, "mechanical": {...}, "corpus": {...}}`.

    Each contract has `clean` {n, flagged, rate, ci95}, `violations` {type: {n, caught, rate,
    ci95, flagged}}, `unparseable` {n, rate, errors}, `issues` {raised, false, false_share,
    by_type}, `with_mechanical` (model and gate together, as a run releases), `cost`, `latency`,
    `tokens`, and `by_source` when workspace drafts are in the corpus. Only contracts with results
    appear.
    """
    corpus = list(corpus)
    drafts = {d.draft_id: d for d in corpus}
    results = [CallResult.from_json(r) if isinstance(r, dict) else r for r in results]
    results = [r for r in results if r.draft_id in drafts]
    mechanical = mechanical_findings(corpus, packs=packs)
    contracts = {}
    for contract in dict.fromkeys(r.contract for r in results):
        contracts[contract] = _contract(drafts, [r for r in results if r.contract == contract], mechanical)
    gate = _judged(corpus, mechanical)
    kinds: dict[str, int] = {}
    for d in corpus:
        if not d.truth.clean:
            kinds[d.truth.kind] = kinds.get(d.truth.kind, 0) + 1
    sources: dict[str, int] = {}
    for d in corpus:
        sources[d.source] = sources.get(d.source, 0) + 1
    return {"contracts": contracts,
            "mechanical": gate,
            "corpus": {"drafts": len(corpus), "clean": sum(d.truth.clean for d in corpus), "violations": kinds,
                       "sources": sources}}

