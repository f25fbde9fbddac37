"""The events the orchestrator emits. The web app persists each one before it broadcasts it.

`data` is plain JSON. `messages` (what a model call was given) is kept apart from `data`: the app
stores it content-addressed instead of copying it into the event log.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.providers.base import Message

# Event types other code relies on (SPEC 9 names the first six).
RUN_STARTED = "run_started"
BRIEF_READY = "brief_ready"
BRIEF_CHECKED = "brief_checked"  # warnings: approved citations the shipped catalogues contradict
STEP_RELEASED = "step_released"
RUN_HALTED = "run_halted"
RUN_FAILED = "run_failed"
RUN_COMPLETED = "run_completed"
PLANNER_STARTED = "planner_started"
PLANNER_REJECTED = "planner_rejected"
STEP_RENDERING = "step_rendering"
ATTEMPT_DRAFTED = "attempt_drafted"
STEP_VERIFYING = "step_verifying"
VERDICT_RECORDED = "verdict_recorded"
STEP_RERENDERING = "step_rerendering"
STEP_HALTED = "step_halted"
STEP_NOT_RELEASED = "step_not_released"
SUMMARIZER_STARTED = "summarizer_started"
SUMMARY_READY = "summary_ready"
SUMMARY_FAILED = "summary_failed"
MODEL_CALL = "model_call"

FINAL_TYPES = frozenset({RUN_COMPLETED, RUN_HALTED, RUN_FAILED})


@dataclass
class Event:
    type: str
    data: dict = field(default_factory=dict)
    messages: tuple[Message, ...] | None = None

    @property
    def is_final(self) -> bool:
        return self.type in FINAL_TYPES
