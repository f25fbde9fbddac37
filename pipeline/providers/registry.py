"""Build the provider a role's configuration names; API keys are resolved here and nowhere else.

This is the one place HTTP providers are made, and it cannot be called without saying where they
may connect: an `AddressPolicy` (a workspace's topology: public addresses and the operator's own
endpoints, checked at every connection), or `OPERATOR` (a topology the operator gave a management
command, which may name any endpoint, as the operator could connect there anyway).
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from pipeline.net import AddressPolicy, guarded_transport
from pipeline.providers.base import Provider
from pipeline.providers.openai_compat import OpenAICompatibleProvider, ProviderOptions
from pipeline.providers.openrouter import DEFAULT_BASE_URL, OpenRouterProvider
from pipeline.providers.profiles import ProfileError, resolve_profile
from pipeline.redaction import Redactor
from pipeline.topology import RoleConfig, TopologyError


DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
#: A model reply larger than this is not read (ProviderOptions.max_reply_bytes).
DEFAULT_MAX_REPLY_BYTES = 8_000_000


@dataclass(frozen=True)
class OperatorEndpoints:
    """Where a topology the operator chose may connect: wherever it names, unguarded. Never for a
    topology a workspace stored, whoever is running it."""

    def __repr__(self) -> str:
        return "OPERATOR"


OPERATOR = OperatorEndpoints()
#: Where a provider may connect: a policy checked at every connection, or the operator's choice.
Endpoints = AddressPolicy | OperatorEndpoints


def max_reply_bytes(env: Mapping[str, str]) -> int:
    """BEYOND_MAX_REPLY_BYTES, the size limit of a model reply; TopologyError when it is not a number."""
    value = (env.get("BEYOND_MAX_REPLY_BYTES") or "").strip()
    if not value:
        return DEFAULT_MAX_REPLY_BYTES
    if not value.isdigit() or int(value) < 1024:
        raise TopologyError(f"BEYOND_MAX_REPLY_BYTES={value!r} is not a number of bytes (1024 or more)")
    return int(value)


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url.strip())
    return parts.scheme.lower(), (parts.netloc or "").lower()


def reads_with_a_language_model(provider: str) -> bool:
    """Whether the provider kind a role names (`offline`, `scripted`, `openrouter`, `openai`) is
    declared to put a language model behind its replies: its class's `language_model`, read
    without building it (no key, no connection). An unknown kind is not taken for a model."""
    if provider == "offline":
        from pipeline.providers.offline import OfflineProvider
        return OfflineProvider.language_model
    if provider == "scripted":
        from pipeline.providers.scripted import ScriptedProvider
        return ScriptedProvider.language_model
    if provider in ("openrouter", "openai"):
        return OpenAICompatibleProvider.language_model  # OpenRouterProvider is one
    return False


def build_provider(cfg: RoleConfig, *, address_policy: Endpoints, openrouter_base_url: str | None = None,
                   env: Mapping[str, str] = os.environ,
                   transport: httpx.AsyncBaseTransport | None = None) -> Provider:
    """A ready provider for one role; raise `TopologyError` when it cannot be built (e.g. no API key).

    `address_policy` is required: an `AddressPolicy` makes an HTTP provider connect through a
    guarded transport (pipeline.net) that checks it at every connection; `OPERATOR` connects
    unguarded. `transport` replaces the connection layer altogether (tests: an httpx.MockTransport).
    The caller owns the result and should `await provider.aclose()` when the run is over.
    """
    if not isinstance(address_policy, (AddressPolicy, OperatorEndpoints)):
        raise TypeError(f"build_provider needs an AddressPolicy or OPERATOR, not {address_policy!r}")
    # --- built-in providers (written elsewhere; imported lazily so this module stands alone) ---
    if cfg.provider == "offline":
        from pipeline.providers.offline import OfflineProvider
        return OfflineProvider()
    if cfg.provider == "scripted":
        from pipeline.providers.scripted import ScriptedProvider
        return ScriptedProvider(cfg.path)

    # --- HTTP providers ---
    if transport is None and isinstance(address_policy, AddressPolicy):
        transport = guarded_transport(address_policy)
    options = ProviderOptions(default_max_tokens=cfg.max_tokens, max_reply_bytes=max_reply_bytes(env))
    try:
        profile = resolve_profile(cfg.provider, cfg.profile, concurrency=cfg.concurrency, retries=cfg.retries)
    except ProfileError as exc:
        raise TopologyError(f"{cfg.model}: {exc}") from None
    redactor = Redactor.from_env(env)
    if cfg.provider == "openrouter":
        return _openrouter(cfg, env, openrouter_base_url, options, profile, transport, redactor)
    if cfg.provider == "openai":
        return _openai(cfg, env, options, profile, transport, redactor)
    raise TopologyError(f"unknown provider {cfg.provider!r}")


def _openrouter(cfg: RoleConfig, env: Mapping[str, str], openrouter_base_url: str | None, options, profile,
                transport, redactor) -> Provider:
    api_key = env.get("OPENROUTER_API_KEY", "").strip()
    if not api_key:
        raise TopologyError("the openrouter provider needs OPENROUTER_API_KEY set in the environment")
    base_url = openrouter_base_url or DEFAULT_BASE_URL
    if cfg.base_url and _origin(cfg.base_url) != _origin(base_url):
        # The key is the operator's: a topology (which workspace admins may edit) must not be
        # able to send it anywhere but the endpoint the operator configured.
        raise TopologyError("an openrouter role cannot use another base_url than OPENROUTER_BASE_URL")
    return OpenRouterProvider(api_key=api_key, base_url=base_url, model=cfg.model, options=options, profile=profile,
                              title="Beyond", transport=transport, redactor=redactor)


def _openai(cfg: RoleConfig, env: Mapping[str, str], options, profile, transport, redactor) -> Provider:
    # Optional: local endpoints (Ollama, llama.cpp, vLLM) usually want no key at all. The
    # operator's key goes only to the endpoints the operator named in OPENAI_BASE_URL, never to
    # a URL a topology chose.
    keyed = {_origin(u) for u in env.get("OPENAI_BASE_URL", DEFAULT_OPENAI_BASE_URL).split(",") if u.strip()}
    operator_key = env.get("OPENAI_API_KEY", "").strip() or None
    listed = _origin(cfg.base_url) in keyed
    api_key = operator_key if listed else None
    if operator_key and not listed:
        no_key_note = (f"no API key was sent to {cfg.base_url}: OPENAI_API_KEY is only sent to "
                       "the endpoints listed in OPENAI_BASE_URL")
    else:
        no_key_note = f"no API key was sent to {cfg.base_url}: OPENAI_API_KEY is not set"
    return OpenAICompatibleProvider(cfg.base_url, api_key=api_key, name="openai", model=cfg.model,
                                    options=options, profile=profile, transport=transport,
                                    redactor=redactor, no_key_note=no_key_note)
