"""The scripted provider (format in docs/interfaces.md): canned replies from a JSON file, for tests, demos and fault
injection. Replies are consumed in order per role, and per step for the executor and verifier,
whatever order the steps run in, so a concurrent run is as deterministic as a sequential one.
"""
from __future__ import annotations

import asyncio
import functools
import json
import time
from collections import deque
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from pipeline.providers.base import Completion, CompletionRequest, Provider, ProviderError, RetryableError, Usage
from pipeline.schemas import describe_errors


class ScriptError(ValueError):
    """A scripted file that cannot be used; the message names the file and the problem."""


class ScriptedUsage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input: int = Field(default=0, ge=0)
    cache_read: int = Field(default=0, ge=0)
    cache_write: int = Field(default=0, ge=0)
    output: int = Field(default=0, ge=0)
    reasoning: int = Field(default=0, ge=0)


class Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: str | None = None
    error: Literal["timeout", "http_500", "http_429", "crash"] | None = None
    finish_reason: str | None = None
    delay_s: float = Field(default=0.0, ge=0, le=3600)
    #: The token usage and cost (USD) the reply reports; absent: not reported, like an endpoint
    #: that says nothing about them.
    usage: ScriptedUsage | None = None
    cost: float | None = Field(default=None, ge=0)


class StepScript(BaseModel):
    model_config = ConfigDict(extra="forbid")

    executor: list[Reply | str] = Field(default_factory=list)
    verifier: list[Reply | str] = Field(default_factory=list)


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid")

    planner: list[Reply | str] = Field(default_factory=list)
    steps: dict[str, StepScript] = Field(default_factory=dict)
    summarizer: list[Reply | str] = Field(default_factory=list)
    #: The planner's model asked for web-search queries (a research run); without replies here
    #: that call is an error of its own, and the queries come from the task, as after any failure.
    research: list[Reply | str] = Field(default_factory=list)

    @field_validator("steps")
    @classmethod
    def _step_keys_are_indexes(cls, steps: dict[str, StepScript]) -> dict[str, StepScript]:
        bad = [k for k in steps if not k.isdigit() or int(k) < 1 or str(int(k)) != k]  # "01" would shadow "1"
        if bad:
            raise ValueError(f"step keys must be step indexes 1, 2, ...; got {bad}")
        return steps


def load_script(path: str | Path) -> Script:
    """The script in the file at `path`; a file read before and unchanged since (same size and
    modification time) is not parsed again (a run builds one provider per script, and a load
    test or a demo runs the same script many times)."""
    path = Path(path)
    try:
        stat = path.stat()
    except FileNotFoundError:
        raise ScriptError(f"scripted file {path} does not exist") from None
    except OSError as exc:
        raise ScriptError(f"scripted file {path} cannot be read: {exc}") from None
    return _parsed(str(path), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=32)
def _parsed(path: str, size: int, mtime_ns: int) -> Script:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScriptError(f"scripted file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScriptError(f"scripted file {path} cannot be read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ScriptError(f"scripted file {path} is not valid JSON: {exc.msg} at line {exc.lineno}") from None
    try:
        return Script.model_validate(data)
    except ValidationError as exc:
        raise ScriptError(f"scripted file {path} is malformed: {describe_errors(exc, 5)}") from None


class ScriptedProvider(Provider):
    name = "scripted"
    #: It stands in for a model (its replies are what a model would say), and is badged like one.
    language_model = True

    def __init__(self, path: str | Path):
        self.path = Path(path)
        script = load_script(self.path)
        self._queues: dict[tuple, deque[Reply]] = {}
        self._put(("planner",), script.planner)
        self._put(("summarizer",), script.summarizer)
        self._put(("research",), script.research)
        for key, step in script.steps.items():
            self._put(("executor", int(key)), step.executor)
            self._put(("verifier", int(key)), step.verifier)
        #: Every request received, in order, for tests to inspect (like simonw/llm's MockModel).
        self.calls: list[CompletionRequest] = []

    def _put(self, key: tuple, replies: list[Reply | str]) -> None:
        self._queues[key] = deque(Reply(content=r) if isinstance(r, str) else r for r in replies)

    @staticmethod
    def _key(request: CompletionRequest) -> tuple:
        if request.role in ("executor", "verifier"):
            return (request.role, request.step_index)
        if request.payload.get("purpose") == "research_queries":
            return ("research",)  # the planner's own replies stay the brief's
        return (request.role,)

    async def complete(self, request: CompletionRequest) -> Completion:
        self.calls.append(request)
        key = self._key(request)
        queue = self._queues.get(key)
        if not queue:
            where = f"step {key[1]} " if len(key) == 2 else ""
            raise ProviderError("exhausted", f"the scripted file has no more {where}{key[0]} replies")
        reply = queue.popleft()
        started = time.monotonic()
        if reply.delay_s:
            await asyncio.sleep(reply.delay_s)
        if reply.error == "crash":
            raise ProviderError("crash", "scripted crash")
        if reply.error:
            status = {"http_500": 500, "http_429": 429}.get(reply.error)
            raise RetryableError(reply.error, f"scripted {reply.error}", status=status,
                                 latency_s=time.monotonic() - started)
        return Completion(text=reply.content or "", finish_reason=reply.finish_reason or "stop",
                          usage=Usage(**reply.usage.model_dump()) if reply.usage else None, cost=reply.cost,
                          cost_source="reported" if reply.cost is not None else None,
                          model_served="scripted", provider="scripted", latency_s=time.monotonic() - started)
