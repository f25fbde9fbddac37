"""A run's model calls and their accounting: every call recorded as a model_call event whatever its
outcome, reserved against the run's budget before it starts and settled after (pipeline/budget.py).

The orchestrator makes one `ModelCalls` per run; the planner, the step inspections, the recap and
the research queries all call models through it, so none of them can leave a call unrecorded or
unbudgeted."""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping

from pipeline import events as ev
from pipeline.budget import Budget, Spending, token_bound
from pipeline.providers.base import Completion, CompletionRequest, Provider, ProviderError, declared
from pipeline.topology import Topology

log = logging.getLogger("beyond.pipeline")


class BudgetExceeded(Exception):
    """The run reached its budget: it halts as a whole; the message is the reason ("budget: ...")."""


class ModelCalls:
    """Calls the roles' models for one run. `emit` records an event (with the messages sent);
    `halt_all(reason)` stops every other part of the run for its budget and says whether it did
    (False: the run was already stopping for another reason)."""

    def __init__(self, topology: Topology, providers: Mapping[str, Provider], *, budget: Budget,
                 call_timeout_s: float, emit: Callable, halt_all: Callable[[str], bool]):
        self.topology, self.providers = topology, providers
        self.budget, self.call_timeout_s = budget, call_timeout_s
        self._emit, self._halt_all = emit, halt_all
        self._spending = Spending(budget)
        #: Why the run halts over its budget, once it does.
        self.budget_reason: str | None = None

    def over_budget(self, reason: str) -> BudgetExceeded:
        """Halt the whole run over its budget: like a stop, every step is cancelled at once (their
        calls in flight are recorded as cancelled), and nothing that was not yet released will
        be. The caller raises the result in its own task."""
        if self.budget_reason is None and self._halt_all(reason):
            self.budget_reason = reason
        return BudgetExceeded(self.budget_reason or reason)

    async def call(self, request: CompletionRequest) -> Completion:
        """One model call; BudgetExceeded instead of a call that may not start or of a reply that
        went over, ProviderError when it failed."""
        cfg = self.topology.role(request.role)
        provider = self.providers[request.role]
        free = declared(provider, "offline")
        refused = self.budget_reason or self._spending.before_call()
        if refused:
            raise self.over_budget(refused)
        reservation = None
        if not free:  # may wait for the calls in flight to leave room under the budget
            reservation = await self._spending.reserve(f"{_a(request.role)} call ({cfg.provider} {cfg.model})",
                                                       f"{cfg.provider} {cfg.model}",
                                                       token_bound(request, request.max_tokens or cfg.max_tokens))
            if isinstance(reservation, str):
                raise self.over_budget(reservation)
        started = time.monotonic()
        completion, error = None, None
        try:
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a cancellation
            # that arrives as the call completes, and a cancelled step would go on paying.
            async with asyncio.timeout(self.call_timeout_s):
                completion = await provider.complete(request)
        except TimeoutError:
            error = ProviderError("timeout", f"no reply within {self.call_timeout_s:g} s")
        except asyncio.CancelledError:
            # A later step stopped by a halt: the call still happened, may have been paid for, and
            # the record says so.
            self._spending.settle(reservation, None, cancelled=True, free=free)
            counted = (f" (counted against the run's budget as {reservation.describe()})"
                       if reservation is not None and self.budget.limited else "")
            self._record(request, started, None, ProviderError("cancelled", f"the run no longer needs this call{counted}"))
            raise
        except ProviderError as exc:
            error = exc
        except Exception as exc:  # a provider bug is that call's crash, not the run's
            log.exception("provider %s crashed", cfg.provider)
            error = ProviderError("crash", f"the provider failed unexpectedly ({type(exc).__name__})")
        self._record(request, started, completion, error)
        over = self._spending.settle(reservation, completion, free=free)
        if over:
            raise self.over_budget(over)
        if error:
            raise error
        return completion

    def _record(self, request: CompletionRequest, started: float, completion: Completion | None,
                error: ProviderError | None) -> None:
        cfg = self.topology.role(request.role)
        usage = completion.usage if completion else None  # None: not reported, which is not zero
        self._emit(ev.ModelCall(
            role=request.role, step=request.step_index, attempt=request.attempt,
            provider=cfg.provider, model=cfg.model, effort=_effort_sent(self.providers[request.role], request),
            model_served=completion.model_served if completion else None,
            latency_s=round(completion.latency_s if completion and completion.latency_s else time.monotonic() - started, 4),
            usage={"input": usage.input, "cache_read": usage.cache_read, "cache_write": usage.cache_write,
                   "output": usage.output, "reasoning": usage.reasoning} if usage else None,
            cost=completion.cost if completion else None,
            cost_source=completion.cost_source if completion else None,
            transport_retries=(completion or error).transport_retries,
            finish_reason=completion.finish_reason if completion else None,
            error=str(error) if error else None,
        ), messages=request.messages)

    def as_provider(self, role: str) -> RecordedCalls:
        """The role's provider seen through these calls, for a helper that calls a model on the
        run's behalf (the research queries): its calls are recorded like every other."""
        return RecordedCalls(self, self.providers[role])


class RecordedCalls:
    """A provider whose calls go through a run's `ModelCalls`."""

    def __init__(self, calls: ModelCalls, provider: Provider):
        self._calls = calls
        self.offline = declared(provider, "offline")

    async def complete(self, request: CompletionRequest) -> Completion:
        return await self._calls.call(request)


def _a(role: str) -> str:
    return f"an {role}" if role[0] in "aeiou" else f"a {role}"


def _effort_sent(provider: Provider, request: CompletionRequest) -> str | None:
    return declared(provider, "effort_sent")(request)
