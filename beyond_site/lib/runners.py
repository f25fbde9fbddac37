"""Who is executing a run, and whether that runner is known to be gone.

A runner writes its identity into `Run.lease_owner` when it claims a run:
`host:pid:place.start`, where `place` names this machine's boot and process namespace and `start`
is the process's start time. A job-engine worker adds `/job-<id>`, `beyond_run` adds `/cli`.

From the identity alone, a process on the same machine and in the same process namespace can tell
for certain that the runner is gone: no process has that pid any more, or the one that has it
started at another time (the pid was reused, e.g. by the restarted server itself). Anywhere else
(another machine, another container, another boot) nothing is concluded, and the run is left to
the job engine's heartbeats or to the lease (docs/operations.md, "Scaled mode").
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
import socket
from pathlib import Path

PROC = Path("/proc")
#: The host name as recorded (cut, so that an identity fits its column with a job suffix).
HOST = socket.gethostname()[:40].replace(":", "-").replace("/", "-")
_IDENTITY = re.compile(r"^(?P<host>[^:/]+):(?P<pid>\d+):(?P<place>[0-9a-f]+)\.(?P<start>\d+)(?:/.*)?$")


def _start_of(pid: int) -> str | None:
    """The start time of process `pid` in clock ticks since boot; None when there is no such process."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # Field 22; the command name (field 2) may hold spaces and parentheses, so count from its end.
    return stat.rsplit(")", 1)[1].split()[19]


@functools.cache
def _place() -> str | None:
    """This boot of this machine and this process namespace, hashed; None where there is no /proc."""
    try:
        boot = (PROC / "sys/kernel/random/boot_id").read_text().strip()
        namespace = os.stat(PROC / "self/ns/pid").st_ino
    except OSError:
        return None
    return hashlib.sha256(f"{boot}/{namespace}".encode()).hexdigest()[:8]


def identity_of(pid: int) -> str:
    """Process `pid` of this machine as a runner: `host:pid:place.start` (`host:pid:0.0` where
    this cannot be told)."""
    place, start = _place(), _start_of(pid)
    if place is None or start is None:
        return f"{HOST}:{pid}:0.0"
    return f"{HOST}:{pid}:{place}.{start}"


def runner_identity() -> str:
    """This process as a runner."""
    return _own_identity(os.getpid())


@functools.cache
def _own_identity(pid: int) -> str:
    # A process's start time never changes: read /proc once per process (a forked child has
    # another pid, hence its own entry), not on every run it claims.
    return identity_of(pid)


def runner_gone(owner: str | None) -> bool:
    """True only when `owner` is certainly dead: a runner of this machine and process namespace
    whose process no longer exists (or whose pid now belongs to a later process). False when it
    is alive or when this process cannot tell."""
    match = _IDENTITY.match(owner or "")
    place = _place()
    if match is None or place is None or match["host"] != HOST or match["place"] != place:
        return False
    return _start_of(int(match["pid"])) != match["start"]


def job_owner(job_id: int) -> str:
    """The identity a job-engine worker writes for the job it executes."""
    return f"{runner_identity()}/job-{job_id}"


def job_of(owner: str | None) -> int | None:
    """The job id in an owner written by `job_owner`, else None."""
    match = re.search(r"/job-(\d+)$", owner or "")
    return int(match[1]) if match else None
