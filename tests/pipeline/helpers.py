"""Run the orchestrator alone, on scripted replies, and collect its events."""
from __future__ import annotations

from pipeline.budget import Budget
from pipeline.checks import MechanicalChecks
from pipeline.context import Context
from pipeline.orchestrator import Orchestrator, RunSettings
from pipeline.providers.scripted import ScriptedProvider
from pipeline.topology import ROLES, parse_shorthand, parse_topology
from tests import scripting


async def run_scripted(tmp_path, data: dict, *, ctx: Context | None = None, concurrency: int = 8,
                       checks: MechanicalChecks | None = None, budget: Budget = Budget(),
                       max_tokens: int | None = None, provider: ScriptedProvider | None = None):
    """`max_tokens`: every role's ceiling (the scripted replies are trusted to keep to it)."""
    path = scripting.write(tmp_path, data)
    provider = provider or ScriptedProvider(path)
    topology = parse_topology({role: {"provider": "scripted", "path": str(path), "max_tokens": max_tokens}
                               for role in ROLES}) if max_tokens else parse_shorthand(f"scripted:{path}")
    orchestrator = Orchestrator(ctx or Context(task="Draft an access-control note"), topology,
                                {role: provider for role in ROLES}, settings=RunSettings(concurrency=concurrency, budget=budget),
                                checks=checks)
    events = [event async for event in orchestrator.events()]
    return events, provider


def of_type(events, type_: str) -> list[dict]:
    return [e.data for e in events if e.type == type_]
