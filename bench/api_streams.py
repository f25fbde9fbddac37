"""API event streams: many programs follow runs over SSE (`GET /api/v1/runs/{id}/events`) on one process.

    .venv/bin/python bench/api_streams.py [--streams 100] [--runs 10] [--db sqlite|postgres]

A real daphne serves a fresh database on the embedded defaults. `--runs` runs are started through
the API (POST /api/v1/workspaces/{slug}/runs, each with its own token), and `--streams` clients
follow them at once, shared out in turn (100 streams over 10 runs: ten clients a run, as dashboards
and pipelines would). The models are scripted with the latencies of bench/load.py (about 3 s a run
if nothing waits). Prints the lag between an event being recorded and a client receiving it (p50,
p95, max; for every event and for `step_released` alone, the "step lag"; events recorded before a
stream opened are its replay and not counted), events lost or repeated,
streams that did not end after their run's final event, and the server's peak RSS and CPU.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import PY, ROOT, manage, pct, proc_usage, script, wait_http  # noqa: E402

SETUP = r"""
import json
from django.contrib.auth import get_user_model
from beyond_site.workspaces.models import Membership, Workspace
from beyond_site.workspaces.tokens import create_token
n, path = N, PATH
role = {"provider": "scripted", "path": path}
workspace = Workspace.objects.create(slug="streams", name="Streams",
                                     topology={r: role for r in ("planner", "executor", "verifier", "summarizer")})
tokens = []
for k in range(n):
    user = get_user_model().objects.create_user(f"client{k}")
    Membership.objects.create(user=user, workspace=workspace, role="member")
    tokens.append(create_token(user, "bench", days=1)[1])
print(json.dumps(tokens))
"""
RECORDED = r"""
import json
from beyond_site.runs.models import RunEvent
print(json.dumps({f"{e.run_id}:{e.seq}": e.at.timestamp() for e in RunEvent.objects.filter(run__workspace__slug="streams")}))
"""


class Stream:
    def __init__(self, run_id: int, token: str):
        self.run_id, self.token = run_id, token
        self.received: list[tuple[int, str, float]] = []  # (seq, type, when)
        self.connected = float("inf")  # when the answer's head arrived: earlier events are a replay
        self.ended = False
        self.error = ""

    async def follow(self, client: httpx.AsyncClient, timeout: float) -> None:
        headers = {"Authorization": f"Bearer {self.token}"}
        try:
            async with client.stream("GET", f"/api/v1/runs/{self.run_id}/events", headers=headers,
                                     timeout=httpx.Timeout(10, read=timeout)) as response:
                response.raise_for_status()
                self.connected = time.time()
                seq, kind = None, None
                async for line in response.aiter_lines():
                    if line.startswith("id: "):
                        seq = int(line[4:])
                    elif line.startswith("event: "):
                        kind = line[7:]
                    elif line.startswith("data: "):
                        self.received.append((seq, kind, time.time()))
            self.ended = True
        except Exception as exc:  # a stream that breaks is counted, not hidden
            self.error = f"{type(exc).__name__}: {exc}"[:200]


async def drive(base: str, tokens: list[str], streams: int, timeout: float) -> tuple[list[Stream], float]:
    limits = httpx.Limits(max_connections=streams + len(tokens) + 10)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30) as client:
        async def start(token: str) -> int:
            answer = await client.post("/api/v1/workspaces/streams/runs", json={"task": "Draft our backup policy"},
                                       headers={"Authorization": f"Bearer {token}"})
            answer.raise_for_status()
            return answer.json()["id"]

        started = time.monotonic()
        run_ids = await asyncio.gather(*(start(t) for t in tokens))
        followers = [Stream(run_ids[k % len(run_ids)], tokens[k % len(tokens)]) for k in range(streams)]
        await asyncio.gather(*(s.follow(client, timeout) for s in followers))
        return followers, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--db", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="beyond-streams-"))
    (tmp / "script.json").write_text(json.dumps(script()))
    env = {**os.environ, "DJANGO_SECRET_KEY": "streams-" + "x" * 40, "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
           "DJANGO_SETTINGS_MODULE": "beyond_site.settings", "BEYOND_LOG_LEVEL": "WARNING",
           "BEYOND_API_RATE": "100000/min"}
    env.pop("REDIS_URL", None)
    database = f"beyond_streams_{os.getpid()}"
    if args.db == "sqlite":
        env["DATABASE_URL"] = f"sqlite:///{tmp / 'db.sqlite3'}"
    else:
        env["DATABASE_URL"] = f"{args.postgres}/{database}"
        subprocess.run(["psql", f"{args.postgres}/postgres", "-qc", f"CREATE DATABASE {database}"], check=True)
    server = None
    try:
        manage(env, "migrate", "--noinput", "-v0")
        tokens = json.loads(manage(env, "shell", "-v", "0", "-c", SETUP.replace("N, PATH", f"{args.runs}, "
                                                                                 f"{str(tmp / 'script.json')!r}")))
        port = 19000 + os.getpid() % 1000 * 2
        log = tmp / "server.log"
        server = subprocess.Popen([str(Path(PY).parent / "daphne"), "-b", "127.0.0.1", "-p", str(port),
                                   "beyond_site.asgi:application"], cwd=ROOT, env=env,
                                  stdout=log.open("w"), stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        wait_http(base + "/accounts/login/", server, log)
        followers, elapsed = asyncio.run(drive(base, tokens, args.streams, args.timeout))
        peak, cpu, _ = proc_usage(server.pid)
        recorded = json.loads(manage(env, "shell", "-v", "0", "-c", RECORDED))
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=20)
        if args.db == "postgres":
            subprocess.run(["psql", f"{args.postgres}/postgres", "-qc", f"DROP DATABASE IF EXISTS {database} WITH (FORCE)"],
                           check=False)

    lags, step_lags, lost, repeated = [], [], 0, 0
    for stream in followers:
        seqs = [seq for seq, _, _ in stream.received]
        expected = sorted(int(key.split(":")[1]) for key in recorded if key.startswith(f"{stream.run_id}:"))
        lost += len(set(expected) - set(seqs))
        repeated += len(seqs) - len(set(seqs))
        for seq, kind, when in stream.received:
            at = recorded[f"{stream.run_id}:{seq}"]
            if at < stream.connected:
                continue  # recorded before the stream opened: sent as a replay, not a lag
            lag = max(0.0, when - at)
            lags.append(lag)
            if kind == "step_released":
                step_lags.append(lag)

    def line(name: str, values: list[float]) -> str:
        return (f"{name:<12} p50 {pct(values, 50) * 1000:5.0f} ms  p95 {pct(values, 95) * 1000:5.0f} ms  "
                f"max {max(values, default=float('nan')) * 1000:5.0f} ms  ({len(values)} events)")

    print(f"{args.streams} SSE streams over {args.runs} runs · {args.db} · one daphne · {elapsed:.1f} s")
    print(line("step lag", step_lags))
    print(line("event lag", lags))
    print(f"lost {lost}, repeated {repeated}; streams not ended {sum(not s.ended for s in followers)}, "
          f"broken {sum(bool(s.error) for s in followers)}")
    for error in sorted({s.error for s in followers if s.error})[:3]:
        print(f"  {error}")
    print(f"server: peak RSS {peak:.0f} MB, CPU {cpu:.1f} s")
    return 0 if not lost and not repeated and all(s.ended and not s.error for s in followers) else 1


if __name__ == "__main__":
    sys.exit(main())
