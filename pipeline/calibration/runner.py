"""Run a verifier over the calibration corpus, one call per draft and contract.

Bounded concurrency, a budget (calls and/or cost), a progress callback, and resumable: results
already obtained (keyed by draft id and contract) are skipped, and each new result is handed to
`on_result` as soon as it exists, so the caller can store results one by one and pick up after a
crash or a budget stop. The verifier gets exactly what it gets in a run: the request of
`build_verifier_request` (widened by one rule under the widened contract).
"""
from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field

from pipeline.parsing import ReplyError, parse_verdict
from pipeline.providers.base import CompletionRequest, Provider, ProviderError
from pipeline.requests import verifier_placeholders
from pipeline.topology import RoleConfig

from .contracts import CONTRACTS, verifier_request
from .drafts import CorpusDraft

UNPARSEABLE, PARSED, ERROR = "unparseable", "parsed", "error"


@dataclass
class CallResult:
    """One verifier call on one draft under one contract, as plain JSON-ready data."""

    draft_id: str
    contract: str
    status: str                      # "parsed", "unparseable" or "error" (no reply at all)
    verdict: dict | None = None      # {"pass", "issues"} when parsed
    raw: str | None = None
    error: str | None = None
    latency_s: float = 0.0
    usage: dict = field(default_factory=dict)
    cost: float | None = None
    model_served: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return self.draft_id, self.contract

    def as_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> CallResult:
        return cls(**{name: data.get(name) for name in cls.__dataclass_fields__ if name in data})


@dataclass(frozen=True)
class Budget:
    """Stop starting calls once `max_calls` were made or `max_cost_usd` was spent by this run.
    Calls already in flight finish, so cost may pass its limit by at most `concurrency` calls."""

    max_calls: int | None = None
    max_cost_usd: float | None = None


@dataclass(frozen=True)
class Progress:
    done: int          # results for this corpus and these contracts, earlier ones included
    total: int
    calls: int         # calls made by this run
    cost_usd: float    # spent by this run (calls reporting no cost count as 0)
    left_s: float | None = None  # time left at this run's pace so far (None: nothing done yet)


@dataclass
class RunOutcome:
    results: list[CallResult]       # every result for the corpus and contracts: given and new
    new: int
    not_run: int                    # calls the budget did not allow
    stopped: str | None = None      # "budget" when the budget stopped the run


async def run_calibration(corpus: Iterable[CorpusDraft], provider: Provider, cfg: RoleConfig, *,
                          contracts: Iterable[str] = CONTRACTS, concurrency: int = 4, budget: Budget = Budget(),
                          done: Iterable[CallResult | dict] = (), on_result: Callable | None = None,
                          on_progress: Callable | None = None, call_timeout_s: float = 600.0) -> RunOutcome:
    """Verify every (draft, contract) pair not in `done`; `on_result(result)` and
    `on_progress(Progress)` may be plain or async callables."""
    corpus, contracts = list(corpus), list(contracts)
    known = {r.key: r for r in (CallResult.from_json(d) if isinstance(d, dict) else d for d in done)}
    wanted = [(item, contract) for item in corpus for contract in contracts]
    # Asked one contract after the other, not draft by draft: consecutive calls then share their
    # instructions, a prefix an endpoint's prompt cache reuses (llama.cpp re-reads only what follows
    # it), and a run stopped by its budget has measured the narrow contract, the one runs use, first.
    todo = [(item, contract) for contract in contracts for item in corpus
            if (item.draft_id, contract) not in known]
    new: dict[tuple[str, str], CallResult] = {}
    state = {"calls": 0, "cost": 0.0, "not_run": 0}
    semaphore = asyncio.Semaphore(max(1, concurrency))
    total, already = len(wanted), len(wanted) - len(todo)
    started = time.monotonic()

    def left_s() -> float:
        # This run's own pace (calls at once included): earlier results of a resumed report took no time here.
        return round((time.monotonic() - started) / len(new) * (total - already - len(new)), 1)

    def exhausted() -> bool:
        return ((budget.max_calls is not None and state["calls"] >= budget.max_calls)
                or (budget.max_cost_usd is not None and state["cost"] >= budget.max_cost_usd))

    async def one(item: CorpusDraft, contract: str) -> None:
        async with semaphore:
            if exhausted():
                state["not_run"] += 1
                return
            state["calls"] += 1
            request = verifier_request(contract, item.brief, item.step, item.text, cfg)
            result = await _verify(provider, request, item.draft_id, contract, call_timeout_s)
            state["cost"] += result.cost or 0.0
            new[result.key] = result
            await _call(on_result, result)
            await _call(on_progress, Progress(already + len(new), total, state["calls"], round(state["cost"], 6),
                                              left_s()))

    await asyncio.gather(*(one(item, contract) for item, contract in todo))
    results = [r for key in ((i.draft_id, c) for i, c in wanted) if (r := known.get(key) or new.get(key))]
    return RunOutcome(results, len(new), state["not_run"], "budget" if state["not_run"] else None)


async def _verify(provider: Provider, request: CompletionRequest, draft_id: str, contract: str,
                  timeout_s: float) -> CallResult:
    started = time.monotonic()
    try:
        async with asyncio.timeout(timeout_s):
            completion = await provider.complete(request)
    except TimeoutError:
        return CallResult(draft_id, contract, ERROR, error=f"timeout: no reply within {timeout_s:g} s",
                          latency_s=round(time.monotonic() - started, 4))
    except ProviderError as exc:
        return CallResult(draft_id, contract, ERROR, error=str(exc), latency_s=round(time.monotonic() - started, 4))
    except Exception as exc:  # a provider bug is this call's failure, not the calibration's
        return CallResult(draft_id, contract, ERROR, error=f"crash: {type(exc).__name__}",
                          latency_s=round(time.monotonic() - started, 4))
    usage = completion.usage  # None: the endpoint did not report it
    common = dict(raw=completion.text, latency_s=round(completion.latency_s or time.monotonic() - started, 4),
                  usage={"input": usage.input, "cache_read": usage.cache_read, "cache_write": usage.cache_write,
                         "output": usage.output, "reasoning": usage.reasoning} if usage else None,
                  cost=completion.cost, model_served=completion.model_served)
    try:
        verdict = parse_verdict(completion.text, placeholders=verifier_placeholders())
    except ReplyError as exc:
        return CallResult(draft_id, contract, UNPARSEABLE, error=str(exc), **common)
    return CallResult(draft_id, contract, PARSED, verdict=verdict.as_json(), **common)


async def _call(callback: Callable | None, value) -> None:
    if callback is not None:
        outcome = callback(value)
        if inspect.isawaitable(outcome):
            await outcome
