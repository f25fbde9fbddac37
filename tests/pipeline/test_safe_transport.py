"""The address policy and the guarded transport: what may be connected to, checked at connection time."""
from __future__ import annotations

import socket

import httpcore
import httpx
import pytest

from pipeline.net import (AddressPolicy, AddressRefused, AllowListError, guarded_client, parse_allow_hosts,
                          refusal_reason, url_refusal)
from tests.pipeline.loopback_web import LoopbackSite, Route

PUBLIC_V4 = "93.184.215.14"
PUBLIC_V6 = "2606:2800:21f:cb07:6820:80da:af6b:8b2c"


@pytest.mark.parametrize("address, reason", [
    ("127.0.0.1", "loopback"), ("127.255.0.9", "loopback"), ("10.1.2.3", "private"), ("172.16.0.1", "private"),
    ("172.31.255.255", "private"), ("192.168.1.1", "private"), ("169.254.169.254", "link_local"),
    ("100.64.0.1", "cgnat"), ("100.127.255.254", "cgnat"), ("0.0.0.0", "this_network"), ("0.1.2.3", "this_network"),
    ("224.0.0.1", "multicast"), ("239.255.255.250", "multicast"), ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"), ("192.0.2.1", "documentation"), ("198.51.100.7", "documentation"),
    ("203.0.113.9", "documentation"), ("198.18.0.1", "benchmarking"), ("192.0.0.8", "ietf_protocol"),
    ("::1", "loopback"), ("::", "unspecified"), ("fe80::1", "link_local"), ("fe80::1%eth0", "link_local"),
    ("fc00::1", "unique_local"), ("fd12:3456::1", "unique_local"), ("fec0::1", "site_local"),
    ("ff02::1", "multicast"), ("2001:db8::1", "documentation"), ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "teredo"),
    ("2002:7f00:1::1", "6to4"), ("2002:5db8:d70e::1", "6to4"), ("::127.0.0.1", "ipv4_compatible"),
    ("100::1", "discard"), ("64:ff9b:1::a00:1", "local_nat64"), ("::ffff:0:7f00:1", "ipv4_translated"),
    ("3fff::1", "documentation"), ("4000::1", "reserved"),
    ("::ffff:127.0.0.1", "ipv4_mapped of 127.0.0.1: loopback"), ("::ffff:10.0.0.1", "ipv4_mapped of 10.0.0.1: private"),
    ("::ffff:169.254.169.254", "ipv4_mapped of 169.254.169.254: link_local"),
    ("64:ff9b::7f00:1", "nat64 of 127.0.0.1: loopback"), ("64:ff9b::10.0.0.1", "nat64 of 10.0.0.1: private"),
    ("64:ff9b::a9fe:a9fe", "nat64 of 169.254.169.254: link_local"), ("64:ff9b::6440:1", "nat64 of 100.64.0.1: cgnat"),
    ("[::1]", "loopback"), ("not-an-ip", "not_an_address"),
])
def test_addresses_that_are_not_public_are_refused_with_their_reason(address, reason):
    assert refusal_reason(address) == reason


@pytest.mark.parametrize("address", [PUBLIC_V4, "8.8.8.8", "1.1.1.1", PUBLIC_V6, "2a00:1450:4001:81b::200e",
                                     "::ffff:8.8.8.8", "64:ff9b::808:808", "64:ff9b::1.1.1.1", "[2606:4700::1111]"])
def test_public_addresses_pass(address):
    assert refusal_reason(address) is None


def test_allow_list_entries_are_host_and_port():
    assert parse_allow_hosts(" LocalHost:8111, [::1]:8080,10.0.0.5:443,, ") == {
        ("localhost", 8111), ("::1", 8080), ("10.0.0.5", 443)}
    assert parse_allow_hosts(None) == frozenset() and parse_allow_hosts("") == frozenset()
    for bad in ("localhost", "localhost:", "localhost:http", "::1:8080", "[::1:8080", "host:70000", ":80"):
        with pytest.raises(AllowListError):
            parse_allow_hosts(bad)


def test_an_allow_list_entry_opens_one_port_of_one_host_only():
    policy = AddressPolicy.from_setting("localhost:8111,127.0.0.2:9000")
    assert policy.refusal("localhost", 8111, "127.0.0.1") is None
    assert policy.refusal("LOCALHOST.", 8111, "::1") is None
    assert policy.refusal("localhost", 8112, "127.0.0.1") == "loopback"
    assert policy.refusal("other.internal", 9000, "127.0.0.2") is None      # the address itself is listed
    assert policy.refusal("other.internal", 9000, "127.0.0.3") == "loopback"


# ---- the transport -----------------------------------------------------------------------


class Recorder(httpcore.AsyncNetworkBackend):
    """Stands in for the real network: records where it was asked to connect, and either refuses
    (nothing is ever sent) or connects to a loopback test site instead."""

    def __init__(self, site: LoopbackSite | None = None):
        self.site = site
        self.calls: list[tuple[str, int]] = []
        self.real = httpcore.AnyIOBackend()

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        self.calls.append((host, port))
        if self.site is None:
            raise httpcore.ConnectError("the recorder connects nowhere")
        return await self.real.connect_tcp("127.0.0.1", self.site.port, timeout=timeout)

    async def sleep(self, seconds):
        await self.real.sleep(seconds)


def answers(*rounds: list[str]):
    """A resolver hook that gives each round's answer in turn (the last one from then on)."""
    asked: list[str] = []

    async def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        return list(rounds[min(len(asked), len(rounds)) - 1])

    resolve.asked = asked
    return resolve


async def numeric_only(host: str, port: int) -> list[str]:
    """The system's own parsing of numeric host forms, never a DNS query."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
    return [info[4][0] for info in infos]


@pytest.mark.parametrize("url", [
    "http://127.0.0.1/", "http://127.0.0.1:8111/v1", "http://10.0.0.1/", "http://192.168.0.10:8080/",
    "http://169.254.169.254/latest/meta-data/", "http://100.64.1.1/", "http://0.0.0.0:8000/", "http://224.0.0.251/",
    "http://[::1]:8111/v1", "http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/", "http://[64:ff9b::7f00:1]:8111/v1",
    "http://[64:ff9b::a9fe:a9fe]/", "http://[fe80::1]/", "http://[fd00::1]/", "http://[fec0::1]/",
    "http://[2002:7f00:1::1]/", "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "https://[::1]/",
    "http://2130706433/", "http://0x7f000001/", "http://017700000001/", "http://127.1/", "http://0x7f.0.0.1/",
])
async def test_literal_and_numeric_forms_of_internal_addresses_are_refused_before_any_connection(url):
    recorder = Recorder()
    async with guarded_client(resolver=numeric_only, inner=recorder) as client:
        with pytest.raises(AddressRefused):
            await client.get(url)
    assert recorder.calls == []


async def test_a_name_that_resolves_to_loopback_is_refused():
    recorder, resolve = Recorder(), answers(["127.0.0.1"])
    async with guarded_client(resolver=resolve, inner=recorder) as client:
        with pytest.raises(AddressRefused) as refused:
            await client.get("http://innocent.example/")
    assert refused.value.reason == "loopback" and refused.value.address == "127.0.0.1"
    assert "innocent.example:80 (127.0.0.1) is loopback" in str(refused.value)
    assert recorder.calls == []


async def test_every_address_of_an_answer_is_checked_not_just_the_first():
    recorder = Recorder()
    async with guarded_client(resolver=answers([PUBLIC_V4, "10.0.0.7"]), inner=recorder) as client:
        with pytest.raises(AddressRefused) as refused:
            await client.get("http://mixed.example/")
    assert refused.value.address == "10.0.0.7"
    assert recorder.calls == []


async def test_the_connection_goes_to_the_checked_address_and_a_changed_dns_answer_is_refused():
    """DNS rebinding: the first answer is public, the next one loopback. The connection is made
    to the checked address itself, so the name is never resolved again behind the check."""
    with LoopbackSite({"/": Route(b"hello")}) as site:
        recorder, resolve = Recorder(site), answers([PUBLIC_V4], ["127.0.0.1"])
        async with guarded_client(resolver=resolve, inner=recorder) as client:
            first = await client.get("http://rebind.example/")
            with pytest.raises(AddressRefused):
                await client.get("http://rebind.example/")   # HTTP/1.0 site: a new connection
    assert first.status_code == 200 and first.text == "hello"
    assert recorder.calls == [(PUBLIC_V4, 80)]             # an address, never the name
    assert resolve.asked == ["rebind.example", "rebind.example"]
    assert site.requests[0]["host"] == "rebind.example"    # the Host header is still the URL's


async def test_ipv6_answers_are_checked_and_connected_to_as_addresses():
    with LoopbackSite({"/": Route(b"six")}) as site:
        recorder = Recorder(site)
        async with guarded_client(resolver=answers([PUBLIC_V6]), inner=recorder) as client:
            assert (await client.get("http://v6.example:8080/")).text == "six"
        recorder_literal = Recorder(site)
        async with guarded_client(inner=recorder_literal) as client:
            assert (await client.get(f"http://[{PUBLIC_V6}]/")).text == "six"
    assert recorder.calls == [(PUBLIC_V6, 8080)]
    assert recorder_literal.calls == [(PUBLIC_V6, 80)]


async def test_allow_listed_ipv6_loopback_entry_is_connected_to():
    recorder = Recorder()
    async with guarded_client("[::1]:8080", inner=recorder) as client:
        with pytest.raises(httpx.ConnectError) as error:
            await client.get("http://[::1]:8080/v1")
        with pytest.raises(AddressRefused):
            await client.get("http://[::1]:8081/v1")
    assert not isinstance(error.value, AddressRefused)
    assert recorder.calls == [("::1", 8080)]


async def test_an_allow_listed_loopback_host_port_works_and_its_neighbour_port_does_not():
    with LoopbackSite({"/v1/models": Route(b'{"data": []}', content_type="application/json")}) as allowed, \
            LoopbackSite({"/": Route(b"internal")}) as other:
        async with guarded_client(allowed.host_port) as client:
            response = await client.get(allowed.url("/v1/models"))
            with pytest.raises(AddressRefused):
                await client.get(other.url("/"))
        async with guarded_client(f"localhost:{allowed.port}") as client:
            by_name = await client.get(f"http://localhost:{allowed.port}/v1/models")
        async with guarded_client() as client:
            with pytest.raises(AddressRefused):
                await client.get(allowed.url("/v1/models"))
    assert response.json() == {"data": []} and by_name.status_code == 200
    assert other.requests == []
    assert len(allowed.requests) == 2


async def test_a_redirect_to_a_refused_host_is_refused_at_the_hop_and_not_followed_by_default():
    with LoopbackSite() as internal, LoopbackSite() as allowed:
        allowed.routes["/go"] = Route(status=302, headers={"Location": internal.url("/secret")})
        async with guarded_client(allowed.host_port) as client:
            not_followed = await client.get(allowed.url("/go"))
            with pytest.raises(AddressRefused):
                await client.get(allowed.url("/go"), follow_redirects=True)
    assert not_followed.status_code == 302        # a model endpoint's client refuses redirects
    assert internal.requests == []


async def test_a_resolver_that_hangs_is_a_connect_timeout():
    import anyio

    async def slow(host: str, port: int) -> list[str]:
        await anyio.sleep(5)
        return [PUBLIC_V4]

    async with guarded_client(resolver=slow, inner=Recorder(), timeout=httpx.Timeout(5, connect=0.1)) as client:
        with pytest.raises(httpx.ConnectTimeout):
            await client.get("http://slow-dns.example/")


async def test_a_name_that_does_not_resolve_is_a_connect_error():
    async def nothing(host: str, port: int) -> list[str]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    async with guarded_client(resolver=nothing, inner=Recorder()) as client:
        with pytest.raises(httpx.ConnectError) as error:
            await client.get("http://no-such-host.example/")
    assert "cannot resolve no-such-host.example" in str(error.value)


async def test_proxies_from_the_environment_are_not_used(monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
    with LoopbackSite({"/": Route(b"direct")}) as site:
        async with guarded_client(site.host_port) as client:
            assert (await client.get(site.url("/"))).text == "direct"


def test_operator_base_urls_become_allow_list_entries():
    policy = AddressPolicy.from_base_urls("http://127.0.0.1:8111/v1, https://LLM.internal, http://[::1]/v1,")
    assert policy.allow == {("127.0.0.1", 8111), ("llm.internal", 443), ("::1", 80)}
    with pytest.raises(AllowListError):
        AddressPolicy.from_base_urls("llm.internal:8080")


@pytest.mark.parametrize("url, reason", [
    ("http://[64:ff9b::7f00:1]:8111/v1", "nat64 of 127.0.0.1: loopback"), ("http://127.0.0.1:8111/v1", "loopback"),
    ("http://localhost:8111/v1", "127.0.0.1: loopback"), ("ftp://host.example/", "not an http(s) URL"),
    ("http://[::1]:8111/v1", "loopback"), (f"https://{PUBLIC_V4}/v1", None),
])
def test_a_settings_form_can_say_at_once_why_an_endpoint_would_be_refused(url, reason):
    assert url_refusal(url) == reason
    assert url_refusal(url, AddressPolicy.from_base_urls("http://127.0.0.1:8111,http://localhost:8111")) == (
        None if "8111" in url and ("127.0.0.1" in url or "localhost" in url) else reason)
