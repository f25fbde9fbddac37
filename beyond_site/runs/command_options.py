"""What `beyond_run`, `beyond_calibrate` and `beyond_eval` read from their options: the workspace,
the topology (`--provider`, else `--topology`, else the workspace's own) and positive numbers."""
from __future__ import annotations

import asyncio
from pathlib import Path

from django.core.management.base import CommandError

from pipeline.providers import close_all
from pipeline.providers.scripted import ScriptError
from pipeline.topology import ROLES, Topology, TopologyError, parse_shorthand, parse_topology
from beyond_site.lib.endpoints import role_providers
from beyond_site.workspaces.configuration import resolve_topology
from beyond_site.workspaces.models import Workspace


def workspace_named(slug: str) -> Workspace:
    workspace = Workspace.objects.filter(slug=slug).first()
    if workspace is None:
        raise CommandError(f"unknown workspace {slug!r} (create it with beyond_workspace create)")
    return workspace


def chosen_topology(workspace, *, provider: str | None = None, topology: str | None = None) -> Topology:
    """The topology the options name (a `--topology` that is not an object is read as a shorthand),
    else the workspace's own, else BEYOND_PROVIDER. Its providers are built once here, so that a
    malformed scripted file or a missing API key is a bad argument said up front, not a failure later."""
    try:
        if provider is not None:
            chosen = parse_shorthand(provider)
        elif topology is not None:
            shorthand = topology.strip() and not topology.lstrip().startswith("{")  # "" is bad JSON, not a default
            chosen = parse_shorthand(topology) if shorthand else parse_topology(topology)
        else:
            chosen = resolve_topology(workspace)
        operator_topology = provider is not None or topology is not None
        asyncio.run(close_all(role_providers(chosen, operator_topology=operator_topology)))
    except (TopologyError, ScriptError) as exc:
        raise CommandError(str(exc)) from None
    return chosen


def _role(cfg) -> str:
    if cfg.provider == "scripted":
        return f"scripted:{Path(cfg.path or '').name}"
    return f"{cfg.provider}:{cfg.model}" if cfg.model else cfg.provider


def describe(topology: Topology) -> str:
    """"offline:beyond-offline-1" when every role is the same, else each role's provider and model."""
    roles = {role: _role(topology.role(role)) for role in ROLES}
    if len(set(roles.values())) == 1:
        return roles["planner"]
    return ", ".join(f"{role}={name}" for role, name in roles.items())


def positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise ValueError(value)
    return number


def positive_usd(value: str) -> float:
    number = float(value)
    if not number > 0:
        raise ValueError(value)
    return number
