"""The embedded deployment's channel layer: channels' in-memory layer, sweeping for expired
messages and group memberships at most once a second instead of at every receive and group send.

The stock layer walks every channel and every group at each `receive` and `group_send`.
Each live run page is a channel and a group, and every recorded batch rings its run's group, so
the walks grow with the number of pages and are paid at every event: with a hundred pages open,
three quarters of the layer's time went to them (bench/layer.py measures it). Expiry is a
safety net for consumers that went away (messages live 60 s, memberships a day); a sweep that
comes up to a second late changes nothing a page can see.
"""
from __future__ import annotations

import time

from channels import layers


class InMemoryChannelLayer(layers.InMemoryChannelLayer):
    #: Seconds at least between two sweeps (a sweep happens at a receive or a group send): a message
    #: may be received up to this long past its expiry, which a doorbell does not mind.
    sweep_interval = 1.0

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._next_sweep = 0.0

    def _clean_expired(self):
        now = time.monotonic()
        if now < self._next_sweep:
            return
        self._next_sweep = now + self.sweep_interval
        super()._clean_expired()
