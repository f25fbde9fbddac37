"""Which model endpoints the server may connect to for a workspace.

Workspace admins choose their own endpoints (a topology's `base_url`), so their runs connect
through `pipeline.net`'s guarded transport: public addresses only, checked at every connection
(DNS answers included), plus the endpoints the operator configured. Those are the operator's own
and may be on this machine or its private network: BEYOND_ALLOWED_BASE_URLS, OPENROUTER_BASE_URL,
OPENAI_BASE_URL (comma-separated) and the base URL of BEYOND_PROVIDER's shorthand.

`role_providers` is how the site builds providers, for runs, calibration and anything else: every
caller says whether the topology is the operator's own (given to a management command) or one a
workspace stored, which is always guarded, whoever runs it.
"""
from __future__ import annotations

from django.conf import settings

from pipeline.net import AddressPolicy, AllowListError, url_refusal
from pipeline.providers import build_role_providers
from pipeline.providers.base import Provider
from pipeline.topology import ROLES, Topology, TopologyError, parse_shorthand


def operator_base_urls() -> list[str]:
    urls = [u for u in settings.BEYOND_ALLOWED_BASE_URLS.split(",") if u.strip()]
    urls.append(settings.OPENROUTER_BASE_URL)
    env = settings.BEYOND_ENVIRONMENT
    urls += [u for u in env.get("OPENAI_BASE_URL", "").split(",") if u.strip()]
    try:
        default = parse_shorthand(settings.BEYOND_PROVIDER)
    except TopologyError:
        default = None  # a broken BEYOND_PROVIDER fails its own runs; it allows nothing here
    if default is not None:
        urls += [default.role(role).base_url for role in ROLES if default.role(role).base_url]
    return [u.strip() for u in urls if u and u.strip()]


def endpoint_policy() -> AddressPolicy:
    """Public addresses, and the operator's endpoints wherever they are (AllowListError, a
    ValueError, for a malformed BEYOND_ALLOWED_BASE_URLS entry)."""
    return AddressPolicy.from_base_urls(operator_base_urls())


def role_providers(topology: Topology, *, operator_topology: bool, transport=None) -> dict[str, Provider]:
    """The providers of `topology`'s roles. A workspace's topology (`operator_topology` False)
    connects through the endpoint policy, checked at every connection; the operator's own connects
    wherever it names. `transport` is for tests (it replaces the connection layer)."""
    from pipeline.providers.registry import OPERATOR  # httpx only when providers are built

    return build_role_providers(topology, address_policy=OPERATOR if operator_topology else endpoint_policy(),
                                openrouter_base_url=settings.OPENROUTER_BASE_URL, env=settings.BEYOND_ENVIRONMENT,
                                transport=transport)


def endpoint_refusal(url: str) -> str | None:
    """Why the server would refuse to connect to `url` for a workspace now, or None. The guarded
    transport checks again at every connection; this is for saying so when the URL is entered."""
    try:
        policy = endpoint_policy()
    except AllowListError as exc:  # the operator's setting is broken: nothing local is allowed
        return f"the server's allow list cannot be read ({exc})"
    return url_refusal(url, policy)
