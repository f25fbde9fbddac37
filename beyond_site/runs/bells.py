"""The channel layer's two bells: the doorbell (a run's event exists) and the stop bell.

Both are best effort by design. Pages read what happened from the database, so a lost doorbell
costs latency, never a step; a runner also checks the database for a stop request, so a lost stop
bell costs a few seconds, never a release after the click (docs/architecture.md).
"""
from __future__ import annotations

import logging

from channels.layers import get_channel_layer

log = logging.getLogger("beyond.runs")


def run_group(run_id: int) -> str:
    return f"run-{run_id}"


def stop_group(run_id: int) -> str:
    """Where a stop request rings: the runner executing the run listens there."""
    return f"run-{run_id}-stop"


async def ring_doorbell(run_id: int, seq: int) -> None:
    """Tell the run's pages that event `seq` exists."""
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        await layer.group_send(run_group(run_id), {"type": "run.event", "seq": seq})
    except Exception:  # the doorbell must never break the run
        log.warning("doorbell for run %s seq %s failed", run_id, seq, exc_info=True)


async def ring_stop_bell(run_id: int) -> None:
    layer = get_channel_layer()
    if layer is not None:
        try:
            await layer.group_send(stop_group(run_id), {"type": "run.stop"})
        except Exception:  # the runner also checks the database on its own
            log.warning("stop bell for run %s failed", run_id, exc_info=True)
