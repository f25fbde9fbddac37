"""Outbound HTTP that cannot be aimed at this machine or its private network.

`guarded_transport(allow_hosts=..., resolver=...)` is an httpx transport for model endpoints and
web research; `AddressPolicy` and `refusal_reason` say which addresses it accepts.
"""
from __future__ import annotations

from .policy import AddressPolicy, AllowListError, parse_address, parse_allow_hosts, refusal_reason
from .transport import (AddressRefused, GuardedBackend, GuardedTransport, Resolver, guarded_client,
                        guarded_transport, system_resolver, url_refusal)

__all__ = ["AddressPolicy", "AddressRefused", "AllowListError", "GuardedBackend", "GuardedTransport", "Resolver",
           "guarded_client", "guarded_transport", "parse_address", "parse_allow_hosts", "refusal_reason",
           "system_resolver", "url_refusal"]
