"""No HTTP response makes the process hold more than a small multiple of its cap, whatever its
encoding: compressed bombs served from a real loopback server to the research fetcher, to
robots.txt and to a model provider (a reply, a stream, an error body), each read in a child
process whose peak resident memory (VmHWM) is measured, while a concurrent task checks that the
event loop stays responsive.

The bombs: 822 bytes declared `Content-Encoding: gzip, gzip` that decode to 400 MB, and about
400 KB declared `gzip` that decode to 400 MB.
"""
from __future__ import annotations

import gzip
import json

import pytest

from tests.pipeline.bombs import gzip_bomb, measure
from tests.pipeline.loopback_web import LoopbackSite, Route

#: Peak memory the read may add to the child: its caps are 2 MB (pages), 500 KB (robots.txt) and
#: 8 MB (model replies); everything above them is the decoder's window and Python's own.
MAX_GROWTH_MB = 40
#: The longest a 5 ms ticker may wait for the event loop while the bomb is read.
MAX_LAG_S = 0.25

HTML = "text/html; charset=utf-8"
REPLY = json.dumps({"model": "m", "choices": [{"index": 0, "finish_reason": "stop",
                                               "message": {"role": "assistant", "content": "A draft."}}]}).encode()
BOMBS = {"stacked": (2, "gzip, gzip"), "gzip": (1, "gzip")}


def routes(layers: int, encoding: str) -> dict[str, Route]:
    bomb = gzip_bomb(layers)

    def bombed(content_type: str, status: int = 200) -> Route:
        return Route(bomb, status, content_type, headers={"Content-Encoding": encoding})

    return {
        "/small": Route(b"<html><body><p>A small page of text.</p></body></html>", content_type=HTML),
        "/bomb": bombed(HTML),
        "/robots.txt": bombed("text/plain"),
        "/ok/v1/chat/completions": Route(REPLY, content_type="application/json"),
        "/json/v1/chat/completions": bombed("application/json"),
        "/stream/v1/chat/completions": bombed("text/event-stream"),
        "/error/v1/chat/completions": bombed("application/json", status=500),
        "/lines/v1/chat/completions": Route(LINES, content_type="text/event-stream",
                                            headers={"Content-Encoding": "gzip"}),
    }


#: A model stream of 100 MB of short `data:` lines with no blank line to end the event (about 100
#: KB gzipped): each line is under every cap, their sum is not.
LINES = gzip.compress(b"data: x\n" * (100_000_000 // 8), 9)


def redirecting_robots(layers: int, encoding: str) -> dict[str, Route]:
    """A site whose robots.txt is a redirect with a bomb as its own body: the redirect is followed,
    its body never read."""
    return {
        "/small": Route(b"<html><body><p>A small page of text.</p></body></html>", content_type=HTML),
        "/robots.txt": Route(gzip_bomb(layers), 301, "text/html",
                             headers={"Content-Encoding": encoding, "Location": "/real-robots.txt"}),
        "/real-robots.txt": Route(b"User-agent: *\nDisallow: /private/\n", content_type="text/plain"),
    }


@pytest.fixture(params=sorted(BOMBS))
def bomb_site(request):
    layers, encoding = BOMBS[request.param]
    with LoopbackSite(routes(layers, encoding)) as server:
        yield request.param, server


def assert_bounded(measured) -> None:
    assert measured.peak_growth_mb < MAX_GROWTH_MB, measured
    assert measured.max_lag_s < MAX_LAG_S, measured


def test_a_page_bomb_is_refused_and_costs_the_fetcher_almost_nothing(bomb_site):
    form, server = bomb_site
    measured = measure("page", server.origin)
    assert_bounded(measured)
    expected = "bad_encoding" if form == "stacked" else "too_big"
    assert (measured.outcome["status"], measured.outcome["reason"]) == ("failed", expected), measured
    assert measured.outcome["bytes_read"] <= 2_000_000 + 64 * 1024


def test_a_robots_txt_bomb_is_read_only_up_to_its_limit(bomb_site):
    form, server = bomb_site
    measured = measure("robots", server.origin)
    assert_bounded(measured)
    if form == "stacked":  # an encoding that is refused is an unreadable robots.txt: the host is off limits
        assert (measured.outcome["status"], measured.outcome["reason"]) == ("failed", "robots_unavailable")
    else:                  # its first 500 KB are read (zeros: no rule), and the page after it
        assert (measured.outcome["status"], measured.outcome["body_bytes"]) == ("ok", 54), measured


@pytest.mark.parametrize("form", sorted(BOMBS))
def test_a_robots_txt_redirect_is_followed_without_reading_its_body(form):
    with LoopbackSite(redirecting_robots(*BOMBS[form])) as server:
        measured = measure("robots", server.origin)
    assert_bounded(measured)
    assert (measured.outcome["status"], measured.outcome["body_bytes"]) == ("ok", 54), measured


def test_a_stream_of_data_lines_without_an_end_fails_the_call_within_its_cap(bomb_site):
    _, server = bomb_site
    measured = measure("provider-lines", server.origin)
    assert_bounded(measured)
    assert measured.outcome.get("error_kind") == "too_large", measured


@pytest.mark.parametrize("form", ["json", "stream", "error"])
def test_a_model_reply_bomb_fails_the_call_and_costs_the_provider_almost_nothing(bomb_site, form):
    encoding, server = bomb_site
    measured = measure(f"provider-{form}", server.origin)
    assert_bounded(measured)
    outcome = measured.outcome
    assert "error_kind" in outcome, measured
    if form == "error":
        assert outcome["error_kind"] == "http_500"
    else:
        assert outcome["error_kind"] == ("bad_encoding" if encoding == "stacked" else "too_large"), measured
