"""A run's spending limits: tokens and cost per run, counted call by call as each one is recorded.

The orchestrator asks `before_call` before it starts a model call and `charge` once the call is
recorded; either answers with a reason (starting with "budget:") when the run must halt.

What is counted, and what is not known:

- A call's tokens are every bucket its endpoint reported (input, cache read and write, output,
  reasoning); its cost is the figure the endpoint reported or estimated (`Completion.cost`).
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

from dataclasses import dataclass

from pipeline.providers.base import Completion, Usage

PREFIX = "budget:"


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


class Spending:
    """What a run has used so far, against its budget."""

    def __init__(self, budget: Budget):
        self.budget = budget
        self.tokens = 0
        self.cost = 0.0

    def before_call(self) -> str | None:
        """Why no further call may start (a limit already reached), or None."""
        b = self.budget
        if b.max_tokens is not None and self.tokens >= b.max_tokens:
            return f"{PREFIX} the limit of {b.max_tokens:,} tokens per run is reached ({self.tokens:,} used)"
        if b.max_cost is not None and self.cost >= b.max_cost:
            return f"{PREFIX} the limit of {_usd(b.max_cost)} per run is reached ({_usd(self.cost)} spent)"
        return None

    def charge(self, what: str, completion: Completion | None, *, free: bool = False) -> str | None:
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
