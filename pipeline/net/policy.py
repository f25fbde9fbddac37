"""Which network addresses Beyond may connect to on behalf of a workspace or a web page.

Only public, globally routed unicast addresses, judged from a table of our own rather than
`ipaddress.is_global`, whose answers for NAT64, site-local and some IPv4 special ranges differ
between Python releases. Addresses that carry an IPv4 address inside an IPv6 one (IPv4-mapped,
NAT64) are judged by the IPv4 address they would reach. Everything else on this machine or a
private network is reachable only through the operator's allow list of `host:port` entries.
"""
from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_V4_BLOCKED: tuple[tuple[str, str], ...] = (
    ("0.0.0.0/8", "this_network"),
    ("10.0.0.0/8", "private"),
    ("100.64.0.0/10", "cgnat"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link_local"),
    ("172.16.0.0/12", "private"),
    ("192.0.0.0/24", "ietf_protocol"),
    ("192.0.2.0/24", "documentation"),
    ("192.88.99.0/24", "6to4_relay"),
    ("192.168.0.0/16", "private"),
    ("198.18.0.0/15", "benchmarking"),
    ("198.51.100.0/24", "documentation"),
    ("203.0.113.0/24", "documentation"),
    ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved"),   # 255.255.255.255 (broadcast) included
)

# Checked in order; the first match names the reason. Anything outside 2000::/3 (global unicast)
# that is not an embedded IPv4 form is refused as well.
_V6_BLOCKED: tuple[tuple[str, str], ...] = (
    ("::/128", "unspecified"),
    ("::1/128", "loopback"),
    ("::/96", "ipv4_compatible"),
    ("::ffff:0:0:0/96", "ipv4_translated"),
    ("64:ff9b:1::/48", "local_nat64"),
    ("100::/64", "discard"),
    ("2001::/32", "teredo"),
    ("2001:db8::/32", "documentation"),
    ("2001::/23", "ietf_protocol"),
    ("2002::/16", "6to4"),
    ("3fff::/20", "documentation"),
    ("5f00::/16", "srv6"),
    ("fc00::/7", "unique_local"),
    ("fe80::/10", "link_local"),
    ("fec0::/10", "site_local"),
    ("ff00::/8", "multicast"),
)

_V4_NETS = tuple((ipaddress.IPv4Network(net), why) for net, why in _V4_BLOCKED)
_V6_NETS = tuple((ipaddress.IPv6Network(net), why) for net, why in _V6_BLOCKED)
_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def parse_address(text: str) -> IPAddress | None:
    """An IP address from a literal (brackets and an IPv6 zone allowed), or None for a name."""
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None


def refusal_reason(address: IPAddress | str) -> str | None:
    """Why `address` is not a public unicast address (e.g. "loopback", "nat64 of 10.0.0.1: private"),
    or None when it is one."""
    ip = parse_address(address) if isinstance(address, str) else address
    if ip is None:
        return "not_an_address"
    if isinstance(ip, ipaddress.IPv4Address):
        return next((why for net, why in _V4_NETS if ip in net), None)
    embedded, form = _embedded_ipv4(ip)
    if embedded is not None:
        why = refusal_reason(embedded)
        return f"{form} of {embedded}: {why}" if why else None
    why = next((why for net, why in _V6_NETS if ip in net), None)
    if why is None and ip not in _GLOBAL_UNICAST:
        why = "reserved"
    return why


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address | None, str]:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped, "ipv4_mapped"
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF), "nat64"
    return None, ""


class AllowListError(ValueError):
    """An allow-list entry that is not `host:port`."""


def parse_allow_hosts(value: str | Iterable[str] | None) -> frozenset[tuple[str, int]]:
    """`"localhost:8111, [::1]:8080, 10.0.0.5:443"` as {(host, port)}; hosts lower-cased, IPv6
    without brackets. Every entry names its port: allowing a host on every port is not offered."""
    if value is None:
        return frozenset()
    entries = value.split(",") if isinstance(value, str) else list(value)
    allowed: set[tuple[str, int]] = set()
    for entry in (e.strip() for e in entries):
        if not entry:
            continue
        host, sep, port = entry.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise AllowListError(f"allow-list entry {entry!r} is not host:port")
        if host.startswith("["):
            if not host.endswith("]"):
                raise AllowListError(f"allow-list entry {entry!r} has an unclosed [")
            host = host[1:-1]
        elif ":" in host:
            raise AllowListError(f"allow-list entry {entry!r}: write an IPv6 address in brackets, [::1]:8080")
        allowed.add((_host_key(host), int(port)))
    return frozenset(allowed)


def _host_key(host: str) -> str:
    ip = parse_address(host)
    return str(ip) if ip is not None else host.strip().rstrip(".").lower()


@dataclass(frozen=True)
class AddressPolicy:
    """Public addresses only, except the operator's `host:port` entries.

    An entry allows a connection when it names the host as the URL wrote it, or one of the
    addresses that host resolved to, on that port.
    """

    allow: frozenset[tuple[str, int]] = frozenset()

    @classmethod
    def from_setting(cls, value: str | Iterable[str] | None) -> AddressPolicy:
        return cls(parse_allow_hosts(value))

    @classmethod
    def from_base_urls(cls, value: str | Iterable[str] | None) -> AddressPolicy:
        """From base URLs ("http://127.0.0.1:8111/v1, https://llm.internal"): each one's host and
        port (80 or 443 when the URL names none)."""
        urls = (value.split(",") if isinstance(value, str) else list(value or []))
        entries = []
        for url in (u.strip() for u in urls):
            parts = urlsplit(url)
            if not url or parts.scheme not in ("http", "https") or not parts.hostname:
                if url:
                    raise AllowListError(f"{url!r} is not an http(s) base URL")
                continue
            host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
            entries.append(f"{host}:{parts.port or (443 if parts.scheme == 'https' else 80)}")
        return cls(parse_allow_hosts(entries))

    def host_allowed(self, host: str, port: int) -> bool:
        return (_host_key(host), port) in self.allow

    def refusal(self, host: str, port: int, address: IPAddress | str) -> str | None:
        """None when connecting to `address` for `host:port` is allowed, else the reason."""
        if self.host_allowed(host, port):
            return None
        ip = parse_address(address) if isinstance(address, str) else address
        if ip is not None and (str(ip), port) in self.allow:
            return None
        return refusal_reason(ip if ip is not None else str(address))
