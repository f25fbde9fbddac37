"""The embedded channel layer sweeps for expired messages and memberships once a second, not at
every call (runtime/channel_layer.py), and still expires them."""
from __future__ import annotations

import asyncio

from channels import layers
from channels.layers import get_channel_layer

from beyond_site.runtime.channel_layer import InMemoryChannelLayer


def test_the_embedded_deployment_uses_it():
    assert isinstance(get_channel_layer(), InMemoryChannelLayer)


async def test_a_burst_of_doorbells_sweeps_once_per_interval(monkeypatch):
    sweeps = 0
    stock_sweep = layers.InMemoryChannelLayer._clean_expired

    def counted(self):
        nonlocal sweeps
        sweeps += 1
        stock_sweep(self)

    monkeypatch.setattr(layers.InMemoryChannelLayer, "_clean_expired", counted)
    layer = InMemoryChannelLayer()
    layer.sweep_interval = 60
    page = await layer.new_channel()
    await layer.group_add("run-1", page)
    for _ in range(200):
        await layer.group_send("run-1", {"type": "run.doorbell"})
        assert (await layer.receive(page))["type"] == "run.doorbell"
    assert sweeps == 1  # the stock layer sweeps at each of these 400 calls


async def test_expired_messages_and_the_pages_that_left_them_are_still_swept_out_at_the_next_sweep():
    layer = InMemoryChannelLayer(expiry=0.05)
    layer.sweep_interval = 0.3
    gone, live = await layer.new_channel(), await layer.new_channel()
    await layer.group_add("run-1", gone)
    await layer.group_add("run-2", live)
    await layer.group_send("run-2", {"type": "run.doorbell"})  # the first sweep, with nothing to sweep
    assert (await layer.receive(live))["type"] == "run.doorbell"
    await layer.send(gone, {"type": "run.doorbell"})  # never read: its page went away
    await asyncio.sleep(0.1)
    await layer.group_send("run-2", {"type": "run.doorbell"})  # expired, but within the interval
    assert gone in layer.channels and gone in layer.groups["run-1"]
    assert (await layer.receive(live))["type"] == "run.doorbell"
    await asyncio.sleep(0.3)
    await layer.group_send("run-2", {"type": "run.doorbell"})  # past the interval: swept
    assert gone not in layer.channels and gone not in layer.groups.get("run-1", {})
    assert (await asyncio.wait_for(layer.receive(live), timeout=5))["type"] == "run.doorbell"
