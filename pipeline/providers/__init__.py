"""Model providers behind one small interface (see base.py).

`build_role_providers` gives each role of a topology its provider. Roles that name the same
scripted file share one instance, since the file's replies are one script consumed across roles.
"""
from __future__ import annotations

import os
from collections.abc import Mapping

from pipeline.providers.base import Provider
from pipeline.topology import ROLES, RoleConfig, Topology


def _instance_key(cfg: RoleConfig) -> tuple:
    if cfg.provider == "scripted":
        return ("scripted", os.path.realpath(cfg.path or ""))
    if cfg.provider == "offline":
        return ("offline",)
    return (cfg.provider, cfg.base_url, cfg.model)


def build_role_providers(topology: Topology, *, openrouter_base_url: str | None = None,
                         env: Mapping[str, str] | None = None, transport=None) -> dict[str, Provider]:
    """One provider per role; raises ScriptError or TopologyError with a clear message."""
    instances: dict[tuple, Provider] = {}
    result: dict[str, Provider] = {}
    for role in ROLES:
        cfg = topology.role(role)
        key = _instance_key(cfg)
        if key not in instances:
            # Imported here so that the core loads without the parts a topology does not use.
            if cfg.provider == "scripted":
                from pipeline.providers.scripted import ScriptedProvider

                instances[key] = ScriptedProvider(cfg.path)
            elif cfg.provider == "offline":
                from pipeline.providers.offline import OfflineProvider

                instances[key] = OfflineProvider()
            else:
                from pipeline.providers.registry import build_provider

                instances[key] = build_provider(cfg, openrouter_base_url=openrouter_base_url,
                                                env=os.environ if env is None else env, transport=transport)
        result[role] = instances[key]
    return result


async def close_all(providers: Mapping[str, Provider]) -> None:
    for provider in {id(p): p for p in providers.values()}.values():
        await provider.aclose()
