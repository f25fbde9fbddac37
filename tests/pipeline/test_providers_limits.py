"""Per-endpoint concurrency: a single-slot server never gets two requests at once, whatever the
number of runs, roles and steps asking."""
from __future__ import annotations

import asyncio

import pytest

from pipeline.providers import build_role_providers, close_all
from pipeline.providers.limits import EndpointSlots, endpoint_slot, endpoint_slots
from pipeline.providers.registry import OPERATOR, build_provider
from pipeline.topology import ROLES, RoleConfig, parse_topology
from tests.pipeline.http_replay import ask, chunk
from tests.pipeline.loopback import LoopbackServer, sse_answer


def slow_reply(body, headers):
    return sse_answer(chunk("a"), chunk("b"), chunk("", "stop"), "[DONE]", pause_s=0.02)


async def test_with_concurrency_1_no_two_requests_overlap_across_roles_and_runs():
    with LoopbackServer(slow_reply) as server:
        topo = parse_topology({role: {"provider": "openai", "model": "tiny", "base_url": server.base_url,
                                      "profile": "generic", "concurrency": 1} for role in ROLES})
        runs = [build_role_providers(topo, address_policy=OPERATOR, env={}) for _ in range(2)]  # two runs, one process
        calls = [run[role].complete(ask("tiny")) for run in runs for role in ROLES]
        results = await asyncio.gather(*calls)
        for run in runs:
            await close_all(run)
    assert len(results) == 8 and all(r.text == "ab" for r in results)
    assert len(server.bodies) == 8
    assert server.most_in_flight == 1


@pytest.mark.parametrize("profile, most_at_once", [("llamacpp", 1), ("ollama", 2)],
                         ids=["llamacpp-limits-the-server", "ollama-limits-each-model"])
async def test_a_profile_limits_the_whole_server_or_each_model(profile, most_at_once):
    with LoopbackServer(slow_reply) as server:
        providers = [build_provider(RoleConfig(provider="openai", model=model, base_url=server.base_url,
                                               profile=profile), address_policy=OPERATOR, env={}) for model in ("a", "b")]
        await asyncio.gather(*[p.complete(ask(p.model)) for p in providers for _ in range(3)])
        for p in providers:
            await p.aclose()
    assert server.most_in_flight == most_at_once


async def test_without_a_limit_requests_do_overlap():
    """The check above can fail: unlimited, the same calls overlap."""
    with LoopbackServer(slow_reply) as server:
        provider = build_provider(RoleConfig(provider="openai", model="m", base_url=server.base_url), address_policy=OPERATOR, env={})
        await asyncio.gather(*[provider.complete(ask("m")) for _ in range(4)])
        await provider.aclose()
    assert server.most_in_flight > 1


async def test_a_limit_of_2_allows_two_at_once_and_no_more():
    with LoopbackServer(slow_reply) as server:
        provider = build_provider(RoleConfig(provider="openai", model="m", base_url=server.base_url,
                                             profile="ollama", concurrency=2), address_policy=OPERATOR, env={})
        await asyncio.gather(*[provider.complete(ask("m")) for _ in range(6)])
        await provider.aclose()
    assert server.most_in_flight == 2


# --- the limiter itself ----------------------------------------------------------------------

async def test_slots_admit_in_order_and_a_cancelled_waiter_gives_way():
    slots = EndpointSlots()
    await slots.acquire(1)
    order = []

    async def wait(name):
        await slots.acquire(1)
        order.append(name)

    first, second = asyncio.create_task(wait("first")), asyncio.create_task(wait("second"))
    await asyncio.sleep(0)
    first.cancel()
    await asyncio.gather(first, return_exceptions=True)
    slots.release()
    await second
    assert order == ["second"] and slots.busy == 1


async def test_a_waiter_admitted_as_it_is_cancelled_hands_its_slot_on():
    slots = EndpointSlots()
    await slots.acquire(1)
    waiter = asyncio.create_task(slots.acquire(1))
    await asyncio.sleep(0)
    slots.release()  # admits the waiter...
    waiter.cancel()  # ...which is cancelled before it runs
    await asyncio.gather(waiter, return_exceptions=True)
    assert slots.busy == 0


async def test_a_smaller_size_waits_while_a_larger_one_may_start():
    slots = EndpointSlots()
    await slots.acquire(3)
    await slots.acquire(3)
    small = asyncio.create_task(slots.acquire(1))
    await asyncio.sleep(0)
    assert not small.done()
    slots.release()
    slots.release()
    await small
    assert slots.busy == 1


def test_a_loop_that_ended_mid_call_does_not_hold_the_slot_in_the_next_loop():
    """Each test (and each worker thread) may run its own event loop: slots belong to one loop."""
    key = "http://127.0.0.1:9/v1 left-behind"

    async def take_and_never_give_back():
        await endpoint_slots(key).acquire(1)

    async def take_twice():
        for _ in range(2):
            async with endpoint_slot(key, 1):
                await asyncio.sleep(0)

    asyncio.run(take_and_never_give_back())
    asyncio.run(asyncio.wait_for(take_twice(), 5))
