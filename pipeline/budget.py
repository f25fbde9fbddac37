"""A run's spending limits: tokens and cost per run, reserved before each model call and settled
after it.

The orchestrator asks `reserve` before it starts a model call and `settle` once the call has
ended; either answers with a reason (starting with "budget:") when the run must halt.

Why reserve: steps run concurrently, and a limit checked only before each call lets eight calls
start while one more would fit, so a run could pass its limit by eight calls. A reservation holds
an upper bound of what the call may use until it is settled, and a call starts only when its bound
fits beside the bounds of the calls in flight; otherwise it waits for them to settle.

- A call's token bound is its prompt's size in UTF-8 bytes (no tokenizer makes more tokens than
  bytes, plus a few per message for the chat template, plus the JSON schema it sends) and the
  role's `max_tokens` (a ceiling on everything generated, reasoning included). Without a
  `max_tokens` a call has no bound: it starts only when no other call is in flight, and may pass
  the limit on its own, which halts the run.
- A call's cost bound is its token bound at the highest price per token this run has paid for
  that model so far: an estimate, since prices differ between input and output. A model's first
  call has none, and runs alone.
- A bounded call that does not fit even with nothing else in flight is not made: the run halts,
  saying how much the call might use and how much remains.

What is counted, and what is not known:

- A call's tokens are every bucket its endpoint reported (input, cache read and write, output,
  reasoning); its cost is the figure the endpoint reported or estimated (`Completion.cost`).
- A call cancelled in flight (a stop, a halt, the budget) may have been paid for: it counts its
  whole reservation, and without a bound, everything that remained.
- The built-in offline engine uses no model: its calls cost nothing and use no tokens.
- A call that failed is counted as nothing: endpoints report no usage for it, and most charge
  nothing for a refused or broken request.
- A call that succeeded without reporting its usage (or its cost) makes the limit impossible to
  keep, so the run halts at once, as if it had gone over: a limit that cannot be checked is not
  kept by hoping. Set a cost limit only for endpoints that report a cost (OpenRouter reports its
  charge, a LiteLLM proxy its estimate); a local endpoint that reports neither is best left
  without one.
"""
from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

from pipeline.providers.base import Completion, CompletionRequest, Usage

PREFIX = "budget:"
#: Tokens a chat template may add per message (role markers), and once per reply.
MESSAGE_OVERHEAD = 16


@dataclass(frozen=True)
class Budget:
    """Per-run limits; None means no limit."""

    max_tokens: int | None = None
    max_cost: float | None = None

    @property
    def limited(self) -> bool:
        return self.max_tokens is not None or self.max_cost is not None

    def as_json(self) -> dict:
        return {"max_tokens": self.max_tokens, "max_cost": self.max_cost}


def usage_tokens(usage: Usage) -> int:
    return usage.input + usage.cache_read + usage.cache_write + usage.output + usage.reasoning


def token_bound(request: CompletionRequest, max_tokens: int | None) -> int | None:
    """The most tokens `request` can use: its prompt's UTF-8 bytes with the template's overhead and
    the schema it sends, plus `max_tokens`; None without a `max_tokens` (no bound)."""
    if max_tokens is None:
        return None
    prompt = sum(len(m.content.encode("utf-8")) + MESSAGE_OVERHEAD for m in request.messages) + MESSAGE_OVERHEAD
    if request.json_schema is not None:
        prompt += len(json.dumps(request.json_schema).encode("utf-8"))
    return prompt + max_tokens


@dataclass
class Reservation:
    """What one call in flight holds: its bounds (None: it may use all that remains)."""

    what: str
    model: str
    tokens: int | None
    cost: float | None

    def describe(self) -> str:
        parts = [f"up to {self.tokens:,} tokens" if self.tokens is not None else None,
                 f"up to {_usd(self.cost)}" if self.cost is not None else None]
        return " and ".join(p for p in parts if p) or "all that remained"


class Spending:
    """What a run has used so far, and what its calls in flight hold, against its budget."""

    def __init__(self, budget: Budget):
        self.budget = budget
        self.tokens = 0
        self.cost = 0.0
        self._in_flight: list[Reservation] = []
        #: The highest price per token paid so far, per model.
        self._rates: dict[str, float] = {}
        self._settled: asyncio.Event | None = None

    def before_call(self) -> str | None:
        """Why no further call may start (a limit already reached), or None."""
        b = self.budget
        if b.max_tokens is not None and self.tokens >= b.max_tokens:
            return f"{PREFIX} the limit of {b.max_tokens:,} tokens per run is reached ({self.tokens:,} used)"
        if b.max_cost is not None and self.cost >= b.max_cost:
            return f"{PREFIX} the limit of {_usd(b.max_cost)} per run is reached ({_usd(self.cost)} spent)"
        return None

    async def reserve(self, what: str, model: str, tokens: int | None) -> Reservation | str:
        """Hold `tokens` (a call's token bound, None for none) and its cost bound for one call,
        waiting while the calls in flight leave no room for it; the reason the run must halt
        instead. With no limit, nothing is held and nothing waits."""
        rate = self._rates.get(model)
        reservation = Reservation(what, model, tokens, tokens * rate if tokens is not None and rate else None)
        if not self.budget.limited:
            return reservation
        while True:
            refused = self.before_call()
            if refused:
                return refused
            verdict = self._admit(reservation)
            if verdict is True:
                self._in_flight.append(reservation)
                return reservation
            if isinstance(verdict, str):
                return verdict
            if self._settled is None:
                self._settled = asyncio.Event()
            await self._settled.wait()

    def _admit(self, r: Reservation) -> bool | str | None:
        """True: it fits; None: wait for the calls in flight; a reason: it will never fit."""
        b = self.budget
        for kind, limit, spent, bound, held in (
                ("tokens", b.max_tokens, self.tokens, r.tokens, [f.tokens for f in self._in_flight]),
                ("cost", b.max_cost, self.cost, r.cost, [f.cost for f in self._in_flight])):
            if limit is None:
                continue
            if None in held or (bound is None and held):
                return None          # a call in flight may take all that remains, or this one may
            if bound is None or spent + sum(held) + bound <= limit:
                continue
            if held:
                return None
            if kind == "tokens":
                return (f"{PREFIX} {r.what} may use up to {bound:,} tokens (its prompt and max_tokens), and "
                        f"{limit - spent:,} of the limit of {limit:,} per run remain")
            return (f"{PREFIX} {r.what} may cost up to {_usd(bound)} (at this model's price so far), and "
                    f"{_usd(limit - spent)} of the limit of {_usd(limit)} per run remain")
        return True

    def settle(self, reservation: Reservation | None, completion: Completion | None, *,
               cancelled: bool = False, free: bool = False) -> str | None:
        """Release a call's reservation and count what it used (a cancelled call: its whole
        reservation); the reason the run must halt, or None."""
        if reservation in self._in_flight:
            self._in_flight.remove(reservation)
        try:
            if free or reservation is None:
                return None
            if cancelled:
                return self._count_cancelled(reservation)
            return self.charge(reservation.what, completion, model=reservation.model)
        finally:
            if self._settled is not None:
                self._settled.set()
                self._settled = None

    def _count_cancelled(self, r: Reservation) -> str | None:
        b = self.budget
        if b.max_tokens is not None:
            self.tokens = self.tokens + r.tokens if r.tokens is not None else max(self.tokens, b.max_tokens)
        if b.max_cost is not None:
            self.cost = self.cost + r.cost if r.cost is not None else max(self.cost, b.max_cost)
        return self._over()

    def charge(self, what: str, completion: Completion | None, *, free: bool = False,
               model: str | None = None) -> str | None:
        """Count one recorded call (`what` names it in a reason, e.g. "an executor call (openai gpt-x)");
        the reason the run must halt, or None."""
        if completion is None or free:
            return None
        b = self.budget
        if b.max_tokens is not None:
            if completion.usage is None:
                return (f"{PREFIX} {what} reported no token usage, so the limit of {b.max_tokens:,} "
                        "tokens per run cannot be kept")
            self.tokens += usage_tokens(completion.usage)
        if b.max_cost is not None:
            if completion.cost is None:
                return (f"{PREFIX} {what} reported no cost, so the limit of {_usd(b.max_cost)} per run "
                        "cannot be kept")
            self.cost += completion.cost
        if model is not None and completion.cost and completion.usage and usage_tokens(completion.usage):
            rate = completion.cost / usage_tokens(completion.usage)
            self._rates[model] = max(rate, self._rates.get(model, 0.0))
        return self._over()

    def _over(self) -> str | None:
        b = self.budget
        if b.max_tokens is not None and self.tokens > b.max_tokens:
            return f"{PREFIX} {self.tokens:,} tokens used, over the limit of {b.max_tokens:,} per run"
        if b.max_cost is not None and self.cost > b.max_cost:
            return f"{PREFIX} {_usd(self.cost)} spent, over the limit of {_usd(b.max_cost)} per run"
        return None


def _usd(amount: float) -> str:
    """$0.50, $0.0034, $12.00: cents always, and the fractions of a cent small calls cost."""
    text = f"{amount:,.4f}"
    while text.endswith("0") and len(text.split(".")[1]) > 2:
        text = text[:-1]
    return f"${text}"
