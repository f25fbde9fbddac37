"""`event_batches` yields exactly the events of `events()`, grouping those already waiting."""
from __future__ import annotations

import asyncio

from pipeline.context import Context
from pipeline.orchestrator import Orchestrator, RunSettings
from pipeline.providers.scripted import ScriptedProvider
from pipeline.topology import ROLES, parse_shorthand
from tests import scripting
from tests.scripting import PASS


def orchestrator(tmp_path, steps=6) -> Orchestrator:
    tmp_path.mkdir(exist_ok=True)
    path = scripting.write(tmp_path, scripting.script(
        {i: {"executor": [f"Part {i}."], "verifier": [PASS]} for i in range(1, steps + 1)}))
    provider = ScriptedProvider(path)
    return Orchestrator(Context(task="Draft a note"), parse_shorthand(f"scripted:{path}"),
                        {role: provider for role in ROLES}, settings=RunSettings(concurrency=8))


def shape(events):
    return [(e.type, str(getattr(e.payload, "step", ""))) for e in events]


async def test_a_slow_consumer_gets_what_waited_in_batches_and_the_same_events(tmp_path):
    alone = [event async for event in orchestrator(tmp_path / "a").events()]
    batches = []
    async for batch in orchestrator(tmp_path / "b").event_batches(limit=5):
        batches.append(batch)
        await asyncio.sleep(0.01)  # a database writing the batch
    assert sorted(shape(e for batch in batches for e in batch)) == sorted(shape(alone))
    assert batches[-1][-1].is_final and all(len(batch) <= 5 for batch in batches)
    assert any(len(batch) > 1 for batch in batches)
    assert len(batches) < len(alone)


async def test_limit_one_is_one_event_at_a_time(tmp_path):
    batches = [batch async for batch in orchestrator(tmp_path).event_batches(limit=1)]
    assert all(len(batch) == 1 for batch in batches) and batches[-1][0].is_final


async def test_what_happens_a_loop_turn_apart_is_one_batch(tmp_path):
    """The steps a brief starts begin rendering on the next turn of the loop, and the releases come
    from the task that awaited the steps: each joins the batch before it (one write, one doorbell)."""
    path = scripting.write(tmp_path, scripting.script(
        {i: {"executor": [{"content": f"Part {i}.", "delay_s": 0.02}], "verifier": [{"content": PASS, "delay_s": 0.02}]}
         for i in (1, 2, 3)}))
    provider = ScriptedProvider(path)
    run = Orchestrator(Context(task="Draft a note"), parse_shorthand(f"scripted:{path}"),
                       {role: provider for role in ROLES}, settings=RunSettings(concurrency=8))
    batches = [[event.type for event in batch] async for batch in run.event_batches()]
    planned = next(batch for batch in batches if "brief_ready" in batch)
    assert planned.count("step_rendering") == 3
    released = next(batch for batch in batches if "step_released" in batch)
    assert released.count("step_released") == 3 and "verdict_recorded" in released
