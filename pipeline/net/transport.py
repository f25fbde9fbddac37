"""An httpx transport that connects only to addresses the policy allows, checked at connection time.

httpcore hands every new TCP connection to a network backend with the URL's host name. The
guarded backend resolves that name itself, checks every address of the answer, and then asks the
real backend to connect to one of those checked addresses, never to the name: a DNS answer that
changes between the check and the connection (rebinding) cannot reach anything unchecked, because
there is no second resolution. TLS still verifies the certificate for the URL's host name, and the
Host header is the URL's, since both are set above this layer.

Redirects are a client concern: a client that follows them opens each hop's connection through
this same backend, so every hop is checked too.
"""
from __future__ import annotations

import socket
import typing
from collections.abc import Awaitable, Callable, Iterable

import anyio
import httpcore
import httpx

from .policy import AddressPolicy, parse_address

#: (host, port) -> the addresses to consider, in the order to try them.
Resolver = Callable[[str, int], Awaitable[list[str]]]


class AddressRefused(httpx.ConnectError):
    """A connection the address policy does not allow; no packet was sent to it."""

    def __init__(self, host: str, port: int, address: str | None, reason: str):
        shown = f"[{host}]" if ":" in host else host
        literal = parse_address(host)
        same = literal is not None and address is not None and literal == parse_address(address)
        where = f"{shown}:{port}" + (f" ({address})" if address and not same else "")
        super().__init__(f"refused by the address policy: {where} is {reason}")
        self.host, self.port, self.address, self.reason = host, port, address, reason


async def system_resolver(host: str, port: int) -> list[str]:
    """The operating system's answer for `host`, as address strings (duplicates removed)."""
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    seen: list[str] = []
    for info in infos:
        address = str(info[4][0])
        if address not in seen:
            seen.append(address)
    return seen


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """Resolve, check every address, connect to a checked address only."""

    def __init__(self, policy: AddressPolicy, *, resolver: Resolver = system_resolver,
                 inner: httpcore.AsyncNetworkBackend | None = None):
        self.policy = policy
        self.resolver = resolver
        self.inner = inner or httpcore.AnyIOBackend()

    async def checked_addresses(self, host: str, port: int, timeout: float | None = None) -> list[str]:
        """Every address `host` resolves to, all allowed; AddressRefused if any one is not.

        All of them, not just the first: a name that answers with a public and a private address
        is refused outright rather than left to the luck of which one is tried."""
        host = host.strip("[]")
        literal = parse_address(host)
        if literal is not None:
            addresses = [str(literal)]
        else:
            try:
                with anyio.fail_after(timeout):
                    addresses = await self.resolver(host, port)
            except TimeoutError:
                raise httpcore.ConnectTimeout(f"resolving {host} took longer than {timeout}s") from None
            except (OSError, UnicodeError) as exc:
                raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from None
        if not addresses:
            raise AddressRefused(host, port, None, "unresolvable")
        for address in addresses:
            reason = self.policy.refusal(host, port, address)
            if reason is not None:
                raise AddressRefused(host, port, address, reason)
        return [str(parse_address(a)) for a in addresses]

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None
                          ) -> httpcore.AsyncNetworkStream:
        addresses = await self.checked_addresses(host, port, timeout)
        last_error: Exception | None = None
        for address in addresses:
            try:
                return await self.inner.connect_tcp(address, port, timeout=timeout, local_address=local_address,
                                                    socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last_error = exc
        assert last_error is not None
        raise last_error

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None
                                  ) -> httpcore.AsyncNetworkStream:
        raise AddressRefused(path, 0, None, "a unix socket")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """`httpx.AsyncHTTPTransport` whose every connection goes through a `GuardedBackend`.

    No proxy: a proxy would make the connection for us, out of reach of the check. (httpx mounts
    no proxy from the environment in front of a transport given explicitly.)"""

    def __init__(self, backend: GuardedBackend, *, verify: typing.Any = True, http2: bool = False,
                 limits: httpx.Limits = httpx.Limits(max_connections=20, max_keepalive_connections=10)):
        super().__init__(verify=verify, trust_env=False, http2=http2, limits=limits)
        ssl_context = httpx.create_ssl_context(verify=verify, trust_env=False)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context, max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry, http1=True, http2=http2, network_backend=backend)
        self.backend = backend


AllowHosts = str | Iterable[str] | AddressPolicy | None


def _policy(allow_hosts: AllowHosts) -> AddressPolicy:
    return allow_hosts if isinstance(allow_hosts, AddressPolicy) else AddressPolicy.from_setting(allow_hosts)


def guarded_transport(allow_hosts: AllowHosts = None, *, resolver: Resolver = system_resolver,
                      inner: httpcore.AsyncNetworkBackend | None = None, verify: typing.Any = True,
                      http2: bool = False) -> GuardedTransport:
    """A transport that reaches public addresses only, plus the `host:port` entries of
    `allow_hosts` (a comma-separated string, a list, or an AddressPolicy). `resolver` and `inner`
    are for tests: a resolver that answers what the test needs, a backend that records or
    redirects connections instead of making them."""
    backend = GuardedBackend(_policy(allow_hosts), resolver=resolver, inner=inner)
    return GuardedTransport(backend, verify=verify, http2=http2)


def guarded_client(allow_hosts: AllowHosts = None, *, resolver: Resolver = system_resolver,
                   inner: httpcore.AsyncNetworkBackend | None = None, follow_redirects: bool = False,
                   **client_options: typing.Any) -> httpx.AsyncClient:
    """An `httpx.AsyncClient` over `guarded_transport`."""
    return httpx.AsyncClient(transport=guarded_transport(allow_hosts, resolver=resolver, inner=inner),
                             trust_env=False, follow_redirects=follow_redirects, **client_options)


def url_refusal(url: str, allow_hosts: AllowHosts = None) -> str | None:
    """Why a connection to `url` would be refused now, or None; for a settings form to say so when
    an address is entered. Resolves with the system resolver, blocking: the transport still checks
    again at every connection, which is the check that counts."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        return f"not a URL ({exc})"
    if parsed.scheme not in ("http", "https") or not parsed.host:
        return "not an http(s) URL"
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    policy = _policy(allow_hosts)
    host = parsed.host
    literal = parse_address(host)
    try:
        addresses = [str(literal)] if literal else sorted({str(i[4][0]) for i in socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM)})
    except (OSError, UnicodeError):
        return "unresolvable"
    for address in addresses:
        reason = policy.refusal(host, port, address)
        if reason is not None:
            return reason if address == host else f"{address}: {reason}"
    return None
