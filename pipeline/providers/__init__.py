"""Model providers behind one small interface (see base.py).

`build_role_providers` gives each role of a topology its provider. Roles that name the same
scripted file share one instance, since the file's replies are one script consumed across roles.
Every provider is built by `registry.build_provider`, which requires the address policy its
connections obey (an `AddressPolicy`, or `OPERATOR` for a topology the operator chose).
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pipeline.providers.base import ROLES, Provider

if TYPE_CHECKING:  # for the annotations only: the topology imports this package's profiles
    from pipeline.topology import RoleConfig, Topology


def _instance_key(cfg: RoleConfig) -> str:
    if cfg.provider == "scripted":
        # abspath, not realpath: no file system calls on the event loop at every run's start.
        return f"scripted:{os.path.abspath(cfg.path or '')}"
    # Effort travels with each request; everything else shapes the provider instance.
    return json.dumps(cfg.model_dump(exclude={"effort"}), sort_keys=True)


def build_role_providers(topology: Topology, *, address_policy, openrouter_base_url: str | None = None,
                         env: Mapping[str, str] | None = None, transport=None) -> dict[str, Provider]:
    """One provider per role; raises ScriptError or TopologyError with a clear message.
    `address_policy` (required): a pipeline.net.AddressPolicy, whose guarded transport each HTTP
    provider connects through, or registry.OPERATOR (see registry.build_provider)."""
    from pipeline.providers.registry import build_provider  # httpx only when a run needs it

    instances: dict[str, Provider] = {}
    result: dict[str, Provider] = {}
    for role in ROLES:
        cfg = topology.role(role)
        key = _instance_key(cfg)
        if key not in instances:
            instances[key] = build_provider(cfg, address_policy=address_policy,
                                            openrouter_base_url=openrouter_base_url,
                                            env=os.environ if env is None else env, transport=transport)
        result[role] = instances[key]
    return result


async def close_all(providers: Mapping[str, Provider]) -> None:
    for provider in {id(p): p for p in providers.values()}.values():
        await provider.aclose()
