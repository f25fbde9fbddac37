"""What a peer's bytes can cost: every reader of a peer (a research page, robots.txt and its
redirects, a model's reply, stream and error body) given a compressed bomb by a real loopback
server, each read in a child process the way Beyond reads it.

    .venv/bin/python bench/peer_bytes.py

Prints, per reader and bomb, what the read came to, the child's peak resident memory added over a
plain small read (VmHWM after imports and a warm-up read of a small answer), and the longest a task
waking every 5 ms waited for the event loop meanwhile; then whether every row is within issue 49's
targets (50 MB over a plain request, 250 ms of loop lag). The bombs: 822 bytes declared
`gzip, gzip` decoding to 400 MB ("stacked"), about 400 KB declared `gzip` decoding to 400 MB, a
robots.txt redirect carrying a bomb as its own body, and 100 MB of short SSE `data:` lines.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.pipeline.bombs import measure  # noqa: E402
from tests.pipeline.loopback_web import LoopbackSite  # noqa: E402
from tests.pipeline.test_bombs import BOMBS, redirecting_robots, routes  # noqa: E402

MAX_GROWTH_MB, MAX_LAG_S = 50, 0.25
READERS = ["page", "robots", "provider-json", "provider-stream", "provider-error", "provider-lines"]


def rows():
    for form, (layers, encoding) in sorted(BOMBS.items()):
        with LoopbackSite(routes(layers, encoding)) as site:
            for kind in READERS:
                yield f"{kind} ({form})", measure(kind, site.origin)
        with LoopbackSite(redirecting_robots(layers, encoding)) as site:
            yield f"robots redirect ({form})", measure("robots", site.origin)


def main() -> int:
    print(f"{'reader (bomb)':32} {'outcome':46} {'+peak MB':>9} {'lag ms':>7}")
    worst_growth = worst_lag = 0.0
    for name, measured in rows():
        outcome = ", ".join(f"{k}={v}" for k, v in measured.outcome.items() if k != "error")[:46]
        print(f"{name:32} {outcome:46} {measured.peak_growth_mb:9.1f} {1000 * measured.max_lag_s:7.0f}")
        worst_growth, worst_lag = max(worst_growth, measured.peak_growth_mb), max(worst_lag, measured.max_lag_s)
    ok = worst_growth <= MAX_GROWTH_MB and worst_lag <= MAX_LAG_S
    print(f"worst: +{worst_growth:.1f} MB (target {MAX_GROWTH_MB}), {1000 * worst_lag:.0f} ms of loop lag "
          f"(target {1000 * MAX_LAG_S:.0f}): {'within' if ok else 'OVER'} the targets")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
