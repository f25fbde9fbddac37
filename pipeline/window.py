"""What fits a model's context window: the room a run's context may take, so that no request to
the planner or an executor goes over its model's window.

A role's window is what its server says (a profile's `window_source`, read at a run's start and
kept WINDOW_KEPT_S: pipeline/providers/profiles.py), lowered by the role's own `context_tokens`;
else its `context_tokens`, else its endpoint profile's (pipeline/providers/profiles.py), else
unknown (no limit beyond the site's context budget). Out of the window come the reply
(`max_tokens`, or REPLY_TOKENS when the role sets none), the role's own instructions (the largest
of the prompts that go with the context), the brief an executor is given with it (BRIEF_TOKENS),
and a margin for the tokenizer: the context is measured at about four bytes a token, which a
model's own tokenizer may exceed (MARGIN)."""
from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass

from pipeline import prompts
from pipeline.providers.base import Provider
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


#: How long a window a server said is kept in this process before it is asked again.
WINDOW_KEPT_S = 300.0
_said: dict[str, tuple[int | None, float]] = {}


def role_window(cfg: RoleConfig, said: int | None = None) -> int | None:
    """The role's context window in tokens, or None when nothing says it. `said`: what its
    server said; the role's `context_tokens` can only lower it (a window set smaller on purpose)."""
    if said is not None:
        return min(said, cfg.context_tokens or said)
    if cfg.context_tokens:
        return cfg.context_tokens
    if cfg.provider in ("offline", "scripted"):
        return None
    return resolve_profile(cfg.provider, cfg.profile).context_tokens


def _endpoint(cfg: RoleConfig) -> str:
    return json.dumps([cfg.provider, cfg.base_url, cfg.model, cfg.profile], sort_keys=True)


def _said_lately(key: str, now: float) -> bool:
    return key in _said and now - _said[key][1] < WINDOW_KEPT_S


def known_windows(topology: Topology) -> dict[str, int]:
    """What the context roles' servers said within WINDOW_KEPT_S, without asking them again."""
    now, known = time.monotonic(), {}
    for role in CONTEXT_ROLES:
        key = _endpoint(topology.role(role))
        if _said_lately(key, now) and _said[key][0] is not None:
            known[role] = _said[key][0]
    return known


async def read_windows(topology: Topology, providers: Mapping[str, Provider]) -> dict[str, int]:
    """What the context roles' servers say their windows are (asked at most once per endpoint
    every WINDOW_KEPT_S; a server that says nothing is not asked again sooner either)."""
    now, asked = time.monotonic(), {}
    for role in CONTEXT_ROLES:
        key = _endpoint(topology.role(role))
        if key not in asked and not _said_lately(key, now):
            asked[key] = providers[role]
    answers = await asyncio.gather(*(provider.context_window() for provider in asked.values()))
    for key, window in zip(asked, answers):
        _said[key] = (window, now)
    return known_windows(topology)


@dataclass(frozen=True)
class Fitted:
    budget: int  # the context's tokens at most
    window: int | None  # the smallest window that decided it (None: the site's budget did)
    role: str | None


def context_budget(topology: Topology, site_budget: int, said: Mapping[str, int] | None = None) -> Fitted:
    """The run's context budget: the site's, or less where a role's window needs it. `said`: the
    windows the roles' servers said (`read_windows`), by role."""
    instructions = max(_tokens(prompts.load(name)) for name in _PROMPTS)
    fitted = Fitted(site_budget, None, None)
    for role in CONTEXT_ROLES:
        cfg = topology.role(role)
        window = role_window(cfg, (said or {}).get(role))
        if window is None:
            continue
        room = window - (cfg.max_tokens or REPLY_TOKENS) - instructions - (BRIEF_TOKENS if role == "executor" else 0)
        budget = max(0, int(room * MARGIN))
        if budget < fitted.budget:
            fitted = Fitted(budget, window, role)
    return fitted
