"""Words a run is shown with, wherever it is shown (the chat, exports, the audit pages).

The badge vocabulary itself lives with the release rules (pipeline.badges).
"""
from __future__ import annotations

import os

ROLES = ("planner", "executor", "verifier", "summarizer")


def _engine(cfg: dict) -> str:
    provider = cfg.get("provider") or "?"
    if provider == "offline":
        return "offline"
    if provider == "scripted":
        return f"scripted {os.path.basename(cfg.get('path') or '') or 'script'}"
    return f"{provider} {cfg.get('model') or ''}".strip()


def role_engines(topology: dict | None) -> list[tuple[str, list[str]]]:
    """[(engine, the roles it played)] of a run's stored topology, in the roles' order: "offline",
    "scripted FILE", or the provider and its model."""
    found: dict[str, list[str]] = {}
    for role in ROLES:
        found.setdefault(_engine((topology or {}).get(role) or {}), []).append(role)
    return list(found.items())


def one_engine(topology: dict | None) -> bool:
    """Whether every role of the run used the same engine (the offline engine, on a run marked offline)."""
    return len(role_engines(topology)) == 1


def engines_words(topology: dict | None) -> str:
    """Which engine each role used, in a few words: "offline (planner, executor, summarizer) ·
    openai gemma-3-270m (verifier)", or "offline (every role)"."""
    engines = role_engines(topology)
    if len(engines) == 1:
        return f"{engines[0][0]} (every role)"
    return " · ".join(f"{engine} ({', '.join(roles)})" for engine, roles in engines)


OFFLINE_TIP = ("Drafted by Beyond's built-in offline engine (templates and rules, no language model) and checked "
               "mechanically, not read by a model: useful for trying the product, not a substitute for a document "
               "a model drafted and a model checked.")


def outcome_text(status: str, reason: str | None, released: int) -> str:
    """What happened to a run that did not complete, in a member's words (the recorded reason, its
    technical form, is shown beside it one click away)."""
    kept = ("Nothing was released." if not released else
            f"Step {released} and the steps before it were released and are kept; nothing after was released."
            if released > 1 else "Step 1 was released and is kept; nothing after it was released.")
    reason = reason or ""
    if status == "cancelled":
        who = reason.removeprefix("stopped by ").strip() if reason.startswith("stopped by ") else ""
        return f"Stopped{' by ' + who if who else ''}. {kept}"
    if reason.startswith("budget:"):
        return f"The run reached a budget limit of this workspace and stopped. {kept}"
    if reason.startswith("interrupted:"):
        return f"The run stopped because the server running it restarted or stopped. {kept}"
    if reason.startswith("the run could not start"):
        return "The run could not start (the technical reason below says why). Nothing was drafted."
    if reason.startswith("the planner gave no valid brief"):
        return "The planner could not produce a usable plan, so nothing was drafted."
    if status == "halted":
        return (f"The run halted: a step could not be drafted or inspected by the verifier, so it was not "
                f"released and neither was anything after it. {kept}")
    return f"The run failed. {kept}"
