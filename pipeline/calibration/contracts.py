"""The verifier contracts calibration compares.

- narrow: the shipped verifier prompt, exactly as in a run (the request comes from
  `build_verifier_request`, so the verifier sees the brief and the draft and nothing else);
- widened: the same request with one rule added to the system prompt, "flag any fact of the draft
  absent from the brief" (`prompts/verifier_widened.md`). It is measured, never used in runs: a
  blind verifier cannot know facts the executor took from sources it does not see.
"""
from __future__ import annotations

from dataclasses import replace

from pipeline import prompts
from pipeline.providers.base import CompletionRequest, Message
from pipeline.requests import build_verifier_request
from pipeline.schemas import Brief
from pipeline.topology import RoleConfig

NARROW, WIDENED = "narrow", "widened"
CONTRACTS = (NARROW, WIDENED)


def verifier_request(contract: str, brief: Brief, step: int, draft: str, cfg: RoleConfig) -> CompletionRequest:
    """The verifier's request for one draft under `contract`."""
    request = build_verifier_request(brief, step, draft, cfg)
    if contract == NARROW:
        return request
    if contract != WIDENED:
        raise ValueError(f"unknown contract {contract!r}; expected one of {', '.join(CONTRACTS)}")
    system, *rest = request.messages
    widened = Message("system", system.content + "\n\n" + prompts.load("verifier_widened"))
    return replace(request, messages=(widened, *rest))
