"""Compressed bombs served from a real loopback HTTP server, and a child process that reads them.

`gzip_bomb(layers=2)` is 822 bytes that decode to 400 MB (gzip inside gzip); `layers=1` is about
400 KB that decode to 400 MB; a `LoopbackSite` serves them. `measure(kind, url)` runs `tests/pipeline/bomb_child.py` in a child
process, which reads the URL the way Beyond does (the research fetcher, robots.txt, a model
provider) and reports what it made of it, its peak resident memory (VmHWM) before and after, and
the longest a concurrent task waited for the event loop meanwhile.
"""
from __future__ import annotations

import functools
import json
import subprocess
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DECODED_BYTES = 400 * 1024 * 1024


def _gzip(pieces) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    out = [packer.compress(p) for p in pieces]
    out.append(packer.flush())
    return b"".join(out)


@functools.cache
def gzip_bomb(layers: int = 2) -> bytes:
    """`layers` gzip layers around 400 MB of zeros (compressed a megabyte at a time)."""
    megabyte = bytes(1024 * 1024)
    body = _gzip(megabyte for _ in range(DECODED_BYTES // len(megabyte)))
    for _ in range(layers - 1):
        body = _gzip([body])
    return body


@dataclass
class Measured:
    outcome: dict
    #: Peak resident memory (VmHWM) after the imports and a warm-up read, and after the bomb, in MB.
    peak_before_mb: float
    peak_after_mb: float
    #: The longest a task that wakes every 5 ms waited beyond its time while the bomb was read.
    max_lag_s: float

    @property
    def peak_growth_mb(self) -> float:
        return self.peak_after_mb - self.peak_before_mb


def measure(kind: str, origin: str, timeout_s: float = 120) -> Measured:
    """Read `origin`'s bomb as `kind` (see bomb_child.py) in a child process."""
    done = subprocess.run([sys.executable, "-m", "tests.pipeline.bomb_child", kind, origin], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout_s)
    if done.returncode != 0:
        raise AssertionError(f"the child failed ({done.returncode}):\n{done.stderr[-3000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return Measured(report["outcome"], report["peak_before_kb"] / 1024, report["peak_after_kb"] / 1024,
                    report["max_lag_s"])
