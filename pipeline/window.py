"""What fits a model's context window: the room a run's context may take, so that no request to
the planner or an executor goes over its model's window.

A role's window is its `context_tokens`, else its endpoint profile's (pipeline/providers/profiles.py),
else unknown (no limit beyond the site's context budget). Out of the window come the reply
(`max_tokens`, or REPLY_TOKENS when the role sets none), the role's own instructions (the largest
of the prompts that go with the context), the brief an executor is given with it (BRIEF_TOKENS),
and a margin for the tokenizer: the context is measured at about four bytes a token, which a
model's own tokenizer may exceed (MARGIN)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from pipeline import prompts
from pipeline.providers.profiles import resolve_profile
from pipeline.topology import RoleConfig, Topology

#: The reply room for a role that sets no `max_tokens`.
REPLY_TOKENS = 2048
#: The brief and the step an executor is given beside the context.
BRIEF_TOKENS = 1500
#: The share of the room the context may take: tokenizers count more tokens than four bytes each.
MARGIN = 0.8
#: The roles whose requests carry the run's context.
CONTEXT_ROLES = ("planner", "executor")
#: The prompts that travel with the context (the largest decides).
_PROMPTS = ("planner", "planner_task", "planner_retry", "executor", "executor_context", "executor_step",
            "executor_rerender", "executor_redo")


def _tokens(text: str) -> int:
    return math.ceil(len(text.encode("utf-8")) / 4)


def role_window(cfg: RoleConfig) -> int | None:
    """The role's context window in tokens, or None when nothing says it."""
    if cfg.context_tokens:
        return cfg.context_tokens
    if cfg.provider in ("offline", "scripted"):
        return None
    return resolve_profile(cfg.provider, cfg.profile).context_tokens


@dataclass(frozen=True)
class Fitted:
    budget: int  # the context's tokens at most
    window: int | None  # the smallest window that decided it (None: the site's budget did)
    role: str | None


def context_budget(topology: Topology, site_budget: int) -> Fitted:
    """The run's context budget: the site's, or less where a role's window needs it."""
    instructions = max(_tokens(prompts.load(name)) for name in _PROMPTS)
    fitted = Fitted(site_budget, None, None)
    for role in CONTEXT_ROLES:
        cfg = topology.role(role)
        window = role_window(cfg)
        if window is None:
            continue
        room = window - (cfg.max_tokens or REPLY_TOKENS) - instructions - (BRIEF_TOKENS if role == "executor" else 0)
        budget = max(0, int(room * MARGIN))
        if budget < fitted.budget:
            fitted = Fitted(budget, window, role)
    return fitted
