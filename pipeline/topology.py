"""The topology: which provider, model and reasoning effort serves each role."""
from __future__ import annotations

import json
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pipeline.providers.base import ROLES
from pipeline.providers.profiles import ProfileError, resolve_profile
from pipeline.schemas import describe_errors

DEFAULT_EFFORT = {"planner": "high", "executor": "low", "verifier": "low", "summarizer": "low"}


class TopologyError(ValueError):
    """A topology or provider shorthand that cannot be used; the message says why."""


class RoleConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    provider: Literal["offline", "scripted", "openrouter", "openai"]
    model: str = Field(default="", max_length=200)
    effort: Literal["high", "medium", "low"] | None = None
    path: str | None = None
    base_url: str | None = Field(default=None, max_length=500)
    max_tokens: int | None = Field(default=None, ge=1)
    #: The model's context window in tokens, when its profile does not know it (pipeline/window.py).
    context_tokens: int | None = Field(default=None, ge=512, le=10_000_000)
    #: What the endpoint accepts: a profile's name ("llamacpp"), per-field overrides of the
    #: provider's default profile ({"structured_output": "json_object"}), or both ({"name":
    #: "litellm", "effort_field": "reasoning_effort"}); see pipeline/providers/profiles.py.
    profile: str | dict | None = None
    #: Calls in flight at once at this endpoint, across every run of the process (default: the
    #: profile's), and transport retries after a failed attempt (default: the profile's).
    concurrency: int | None = Field(default=None, ge=1, le=64)
    retries: int | None = Field(default=None, ge=0, le=10)

    @model_validator(mode="after")
    def _required_fields(self) -> RoleConfig:
        if self.provider == "scripted" and not self.path:
            raise ValueError('a scripted provider needs "path"')
        if self.provider == "openai" and not self.base_url:
            raise ValueError('an openai provider needs "base_url"')
        if self.base_url:
            url = urlsplit(self.base_url)
            if url.scheme not in ("http", "https") or not url.netloc:
                raise ValueError("base_url must be an http or https URL")
            if "@" in url.netloc or url.query or url.fragment:
                # Topologies are stored with every run and shown to auditors: a key in the URL
                # would end up on pages and in exports. Keys come from the environment only.
                raise ValueError("base_url must not carry credentials or a query string; "
                                 "put the key in OPENAI_API_KEY or OPENROUTER_API_KEY")
        if self.provider in ("openrouter", "openai") and not self.model:
            raise ValueError(f'a {self.provider} provider needs "model"')
        if self.provider in ("openrouter", "openai"):
            _check_profile(self)
        if self.provider == "offline" and not self.model:
            self.model = "beyond-offline-1"
        if self.provider == "scripted" and not self.model:
            self.model = "scripted"
        return self


def _check_profile(cfg: RoleConfig) -> None:
    """A profile name or override that does not resolve is a topology error, caught when the
    topology is read rather than when a run starts."""
    try:
        resolve_profile(cfg.provider, cfg.profile, concurrency=cfg.concurrency, retries=cfg.retries)
    except ProfileError as exc:
        raise ValueError(str(exc)) from None


class Topology(BaseModel):
    model_config = ConfigDict(extra="forbid")

    planner: RoleConfig
    executor: RoleConfig
    verifier: RoleConfig
    summarizer: RoleConfig

    @model_validator(mode="after")
    def _default_efforts(self) -> Topology:
        for role in ROLES:
            cfg = getattr(self, role)
            if cfg.effort is None:
                cfg.effort = DEFAULT_EFFORT[role]
        return self

    def role(self, role: str) -> RoleConfig:
        return getattr(self, role)

    def as_json(self) -> dict:
        return self.model_dump(exclude_none=True)


def parse_shorthand(shorthand: str) -> Topology:
    """`offline`, `scripted:PATH`, `openrouter:MODEL` or `openai:MODEL@BASE_URL`, for all four roles."""
    text = shorthand.strip()
    kind, _, rest = text.partition(":")
    if kind == "offline" and not rest:
        cfg = {"provider": "offline"}
    elif kind == "scripted" and rest:
        cfg = {"provider": "scripted", "path": rest}
    elif kind == "openrouter" and rest:
        cfg = {"provider": "openrouter", "model": rest}
    elif kind == "openai" and "@" in rest:
        model, _, base_url = rest.partition("@")
        cfg = {"provider": "openai", "model": model, "base_url": base_url}
    else:
        raise TopologyError(
            f"unknown provider shorthand {shorthand!r}; expected offline, scripted:PATH, "
            "openrouter:MODEL or openai:MODEL@BASE_URL"
        )
    return parse_topology({role: dict(cfg) for role in ROLES})


def parse_topology(data: str | dict) -> Topology:
    """Validate a topology given as JSON text or a dict; every error is a `TopologyError`."""
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            raise TopologyError(f"topology is not valid JSON: {exc.msg} at position {exc.pos}") from None
    if not isinstance(data, dict):
        raise TopologyError("topology must be a JSON object with planner, executor, verifier and summarizer")
    try:
        return Topology.model_validate(data)
    except ValidationError as exc:
        raise TopologyError(f"invalid topology: {describe_errors(exc, 20)}") from None
