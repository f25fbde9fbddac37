"""Outbound HTTP that cannot be aimed at this machine or its private network.

`guarded_transport(allow_hosts=..., resolver=...)` is an httpx transport for model endpoints and
web research; `AddressPolicy` and `refusal_reason` say which addresses it accepts. `read_body`,
`iter_body` and `iter_lines` read a response under a cap whatever its Content-Encoding says.
"""
from __future__ import annotations

from .bodies import (ACCEPT_ENCODING, BodyRefused, BodyTooLarge, EncodingRefused, iter_body, iter_lines,
                     read_body)
from .policy import AddressPolicy, AllowListError, parse_address, parse_allow_hosts, refusal_reason
from .transport import (AddressRefused, GuardedBackend, GuardedTransport, Resolver, guarded_client,
                        guarded_transport, system_resolver, url_refusal)

__all__ = ["ACCEPT_ENCODING", "AddressPolicy", "AddressRefused", "AllowListError", "BodyRefused", "BodyTooLarge", "EncodingRefused",
           "GuardedBackend", "GuardedTransport", "Resolver",
           "guarded_client", "guarded_transport", "iter_body", "iter_lines", "parse_address", "parse_allow_hosts", "read_body",
           "refusal_reason", "system_resolver", "url_refusal"]
