"""What the API takes and gives, as pydantic models (the OpenAPI document is generated from them)."""
from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any, Literal

from ninja import Field, Schema
from pydantic import ConfigDict

from beyond_site.chat.run_actions import MAX_TASK_CHARS


class Problem(Schema):
    """An error (RFC 9457)."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str


#: Free text a client sends: anything but NUL, which no page accepts either (lib/inputs.py).
NO_NUL = r"^[^\x00]*$"

#: The errors every operation may answer, documented once.
ERRORS = {400: Problem, 401: Problem, 403: Problem, 404: Problem, 409: Problem, 429: Problem}


def answers(ok: dict) -> dict:
    return {**ok, **ERRORS}


class WorkspaceOut(Schema):
    slug: str
    name: str
    role: Literal["admin", "member", "auditor"]


class RunIn(Schema):
    task: str = Field(min_length=1, max_length=MAX_TASK_CHARS, pattern=NO_NUL,
                      description="The task, as a member types it.")
    conversation: int | None = Field(default=None, ge=1, le=2**62,
                                     description="Join this conversation (a follow-up); omit to start a new one.")
    research: bool = Field(default=False, description="Web research before the brief, where the server offers it.")
    files: list[Annotated[int, Field(ge=1, le=2**62)]] = Field(default_factory=list, max_length=50,
                             description="Ids of the workspace's files the task relies on: each must be read first.")


class RunStarted(Schema):
    id: int
    status: str
    conversation: int | None
    created: bool = Field(description="False when the Idempotency-Key had started this run already.")
    trace: str
    events: str


class RedoIn(Schema):
    step: int = Field(ge=1, le=40)
    instruction: str = Field(default="", max_length=2000, pattern=NO_NUL)


class Stopped(Schema):
    id: int
    stopping: bool
    status: str


class FileOut(Schema):
    id: int
    name: str
    kind: str
    size: int
    status: Literal["reading", "ready", "failed"]
    conversation: int | None
    created_at: datetime
    failure: str = ""


class FileText(Schema):
    id: int
    name: str
    status: str
    text: str


class MemoryIn(Schema):
    text: str = Field(min_length=1, max_length=2000, pattern=NO_NUL)


class MemoryOut(Schema):
    id: int
    text: str
    created_at: datetime


class ConversationOut(Schema):
    id: int
    title: str
    updated_at: datetime


class RunRow(Schema):
    id: int
    status: str
    task: str
    created_at: datetime
    finished_at: datetime | None
    created_by: str | None
    verification: str | None
    requirements: dict | None = Field(description="{met, total} of the requirement trace, or null.")


class Trace(Schema):
    """The run trace (docs/interfaces.md, "The run trace"), as `beyond_run --json` prints it: these
    fields always, more allowed."""

    model_config = ConfigDict(extra="allow")

    run: dict[str, Any] = Field(description="The run: status, reasons, who checked, the requirement trace "
                                            "(`requirements`, `coverage`), topology, times...")
    brief: dict[str, Any] | None
    steps: list[dict[str, Any]]
    summary: str | None
    summary_findings: list[dict[str, Any]]
    summary_unsourced: list[Any]
    summary_sources: list[Any]
    model_calls: list[dict[str, Any]]
    events: list[dict[str, Any]]


class Verified(Schema):
    intact: bool
    summary: str
    broken_runs: list[int]


class ChangeOut(Schema):
    seq: int
    at: datetime
    action: str
    actor: str | None
    detail: dict[str, Any]


class Tally(Schema):
    """What calls used: a token column or the cost no call reported is null, never 0."""

    calls: int
    tokens: dict[str, int | None]
    tokens_not_reported: dict[str, int]
    cost_usd: float | None
    cost_estimated_usd: float | None
    cost_not_reported: int


class UsageGroup(Tally):
    month: str
    role: str
    model: str


class UsageOut(Schema):
    date_from: date
    date_to: date
    total: Tally
    groups: list[UsageGroup]
    runs_by_status: dict[str, int]
