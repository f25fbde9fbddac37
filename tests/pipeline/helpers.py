"""Run the orchestrator alone, on scripted replies, and collect its events."""
from __future__ import annotations

from pipeline.budget import Budget
from pipeline.checks import MechanicalChecks
from pipeline.context import Context
from pipeline.orchestrator import Orchestrator, RunSettings
from pipeline.providers.scripted import ScriptedProvider
from pipeline.topology import ROLES, parse_shorthand
from tests import scripting


async def run_scripted(tmp_path, data: dict, *, ctx: Context | None = None, concurrency: int = 8,
                       checks: MechanicalChecks | None = None, budget: Budget = Budget()):
    path = scripting.write(tmp_path, data)
    provider = ScriptedProvider(path)
    orchestrator = Orchestrator(ctx or Context(task="Draft an access-control note"), parse_shorthand(f"scripted:{path}"),
                                {role: provider for role in ROLES}, settings=RunSettings(concurrency=concurrency, budget=budget),
                                checks=checks)
    events = [event async for event in orchestrator.events()]
    return events, provider


def of_type(events, type_: str) -> list[dict]:
    return [e.data for e in events if e.type == type_]
