"""Measure how much memory large request bodies cost the real server.

    .venv/bin/python bench/request_memory.py [--anonymous-mb 60] [--upload-mb 150] [--check]

Starts daphne on `beyond_site.asgi` over a fresh SQLite database, as `make run` does, and sends:

- an anonymous 60 MB multipart POST to /accounts/login/ (no session: the small limit applies);
- the same body again without a Content-Length (chunked), so only counting bytes can stop it;
- a 150 MB upload by a logged-in member to the chat's upload view (within the request limit: it
  is read, and the file refused as larger than the per-file limit);
- a 300 MB upload by the same member, over the request limit.

For each, the server's peak resident memory above its idle figure (the kernel's high-water mark,
reset before each request through /proc/PID/clear_refs), what stayed after, the status and the
time taken. `--check` exits non-zero unless the anonymous POST stays under 20 MB above idle and
the upload under 150 MB. Linux only (it reads /proc).
"""
from __future__ import annotations

import argparse
import http.client
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = str(ROOT / ".venv" / "bin" / "python")
DAPHNE = str(ROOT / ".venv" / "bin" / "daphne")
PASSWORD = "correct horse battery staple"
MB = 1024 * 1024
CHUNK = 256 * 1024
#: "within": a file just under the per-file limit (19.9 MB), stored and read (its text refused past the
#: character budget): less than its size, where it once cost twice its size (+40.7 MB).
TARGETS_MB = {"anonymous": 20, "upload": 150, "within": 15}

SEED = """
from django.contrib.auth import get_user_model
from beyond_site.workspaces.models import Membership, Workspace
user = get_user_model().objects.create_user("bench", password=%r)
workspace = Workspace.objects.create(slug="bench", name="Bench")
Membership.objects.create(user=user, workspace=workspace, role="member")
""" % PASSWORD


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _kb(pid: int, field: str) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(rf"^{field}:\s+(\d+) kB", status, re.M).group(1))


def rss_mb(pid: int) -> float:
    return _kb(pid, "VmRSS") / 1024


def reset_peak(pid: int) -> None:
    """From now on VmHWM is the peak since this call (Linux 4.0+: "5" resets the high-water mark)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def peak_mb(pid: int) -> float:
    return _kb(pid, "VmHWM") / 1024


@dataclass
class Result:
    name: str
    status: int | str
    peak_above_idle_mb: float
    after_above_idle_mb: float
    seconds: float


def multipart(size: int, boundary: str, field: str = "files", filename: str = "big.txt",
              extra: dict[str, str] | None = None) -> tuple[bytes, bytes, int]:
    """(head, tail, total length) of a multipart body with one file of `size` bytes in between."""
    head = b""
    for name, value in (extra or {}).items():
        head += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n").encode()
    head += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"{filename}\"\r\n"
             "Content-Type: text/plain\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    return head, tail, len(head) + size + len(tail)


def body_chunks(head: bytes, size: int, tail: bytes):
    """`head`, then `size` bytes of filler, then `tail`."""
    yield head
    block = b"A" * CHUNK
    sent = 0
    while sent < size:
        n = min(CHUNK, size - sent)
        yield block[:n]
        sent += n
    yield tail


def send(port: int, path: str, head: bytes, size: int, tail: bytes, headers: dict[str, str], *,
         chunked: bool = False) -> int | str:
    """POST the body in CHUNK pieces; the status, or how the server ended the exchange early."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.putrequest("POST", path)
        for name, value in headers.items():
            conn.putheader(name, value)
        if chunked:
            conn.putheader("Transfer-Encoding", "chunked")
        else:
            conn.putheader("Content-Length", str(len(head) + size + len(tail)))
        conn.endheaders()
        try:
            for piece in body_chunks(head, size, tail):
                conn.send(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            if chunked:
                conn.send(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed before the body was all sent: read its answer
        try:
            response = conn.getresponse()
            response.read()
            return response.status
        except (ConnectionResetError, http.client.RemoteDisconnected) as exc:
            return f"closed ({type(exc).__name__})"
    finally:
        conn.close()


def send_bytes(port: int, path: str, body: bytes, headers: dict[str, str]) -> int | str:
    """POST a body held in memory (small ones, in tests)."""
    return send(port, path, body, 0, b"", headers)


class Session:
    """A logged-in member: the session and CSRF cookies, and the CSRF token of a form."""

    def __init__(self, port: int):
        self.port = port
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        all_headers = {"Cookie": self.cookie_header(), **(headers or {})}
        conn.request(method, path, body=body, headers=all_headers)
        response = conn.getresponse()
        data = response.read()
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                self.cookies[name] = rest.split(";", 1)[0]
        conn.close()
        return response.status, data.decode("utf-8", "replace")

    def wait_until_up(self, seconds: float = 30) -> None:
        deadline = time.monotonic() + seconds
        while True:
            try:
                self.request("GET", "/accounts/login/")
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def cookie_header(self) -> str:
        return "; ".join(f"{k}={v}" for k, v in self.cookies.items())

    def login(self, username: str) -> None:
        _, page = self.request("GET", "/accounts/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        form = f"csrfmiddlewaretoken={token}&username={username}&password={PASSWORD.replace(' ', '+')}"
        status, _ = self.request("POST", "/accounts/login/", form.encode(), {
            "Content-Type": "application/x-www-form-urlencoded", "Referer": f"http://127.0.0.1:{self.port}/"})
        if status != 302 or "sessionid" not in self.cookies:
            raise RuntimeError(f"login failed ({status})")

    def csrf_token(self, path: str) -> str:
        _, page = self.request("GET", path)
        return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)


def server_env(tmp: Path, **extra_env: str) -> dict[str, str]:
    """The server's environment: a SQLite database and temporary files in `tmp`, plus `extra_env`."""
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}", "DJANGO_SECRET_KEY": "bench-only",
           "DJANGO_DEBUG": "false", "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost", "BEYOND_PROVIDER": "offline",
           "DJANGO_SETTINGS_MODULE": "beyond_site.settings", "BEYOND_LOG_LEVEL": "WARNING", "TMPDIR": str(tmp),
           "BEYOND_FILES_DIR": str(tmp / "originals"),
           **extra_env}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    return env


def start_server(tmp: Path, port: int, **extra_env: str) -> subprocess.Popen:
    """daphne on 127.0.0.1:`port` over a fresh SQLite database in `tmp`, with a member "bench" of
    the workspace "bench" (password PASSWORD); `extra_env` adds settings."""
    env = server_env(tmp, **extra_env)
    run = dict(cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    subprocess.run([PYTHON, "manage.py", "migrate", "--noinput", "-v0"], **run)
    subprocess.run([PYTHON, "manage.py", "shell", "-c", SEED], **run)
    log = open(tmp / "daphne.log", "w")
    proc = subprocess.Popen([DAPHNE, "-b", "127.0.0.1", "-p", str(port), "beyond_site.asgi:application"],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((tmp / "daphne.log").read_text())
            time.sleep(0.2)


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


def measure(pid: int, idle: float, name: str, action) -> Result:
    reset_peak(pid)
    started = time.monotonic()
    status = action()
    seconds = time.monotonic() - started
    time.sleep(0.5)  # let the server finish its side of the exchange
    return Result(name, status, peak_mb(pid) - idle, rss_mb(pid) - idle, seconds)


def run(args) -> list[Result]:
    with tempfile.TemporaryDirectory(prefix="beyond-bench-") as tmp_name:
        tmp = Path(tmp_name)
        port = _free_port()
        proc = start_server(tmp, port)
        try:
            member = Session(port)
            member.wait_until_up()
            member.login("bench")
            token = member.csrf_token("/w/bench/")
            # Warm up: the first requests import and cache what every later one uses.
            for _ in range(3):
                member.request("GET", "/w/bench/")
                Session(port).request("GET", "/accounts/login/")
            time.sleep(1)
            idle = rss_mb(proc.pid)
            boundary = "benchboundary7d3f"
            results = []
            anon_size = int(args.anonymous_mb * MB)
            head, tail, _ = multipart(anon_size, boundary, field="attachment")
            anon_headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
            results.append(measure(proc.pid, idle, f"anonymous {args.anonymous_mb:g} MB POST to /accounts/login/",
                                   lambda: send(port, "/accounts/login/", head, anon_size, tail, anon_headers)))
            results.append(measure(proc.pid, idle, f"anonymous {args.anonymous_mb:g} MB chunked POST (no length)",
                                   lambda: send(port, "/accounts/login/", head, anon_size, tail, anon_headers,
                                                chunked=True)))
            upload_size = int(args.upload_mb * MB)
            head, tail, _ = multipart(upload_size, boundary, extra={"csrfmiddlewaretoken": token})
            upload_headers = {"Content-Type": f"multipart/form-data; boundary={boundary}",
                              "Cookie": member.cookie_header(), "X-CSRFToken": token, "HX-Request": "true",
                              "Referer": f"http://127.0.0.1:{port}/w/bench/"}
            results.append(measure(proc.pid, idle, f"member's {args.upload_mb:g} MB upload",
                                   lambda: send(port, "/w/bench/upload/", head, upload_size, tail, upload_headers)))
            over = 2 * upload_size
            head, tail, _ = multipart(over, boundary, extra={"csrfmiddlewaretoken": token})
            results.append(measure(proc.pid, idle, f"member's {2 * args.upload_mb:g} MB upload (over the limit)",
                                   lambda: send(port, "/w/bench/upload/", head, over, tail, upload_headers)))
            # Files within the limit, stored a piece at a time and read in the background (the
            # measure includes the reading): one just under the per-file limit, whose text is over
            # the character budget (refused while it is read, never loaded whole), and one within both.
            for size_mb in (args.within_mb, 4.5):
                size = int(size_mb * MB)
                head, tail, _ = multipart(size, boundary, extra={"csrfmiddlewaretoken": token},
                                          filename=f"within-{size_mb:g}.txt")
                results.append(measure(proc.pid, idle, f"member's {size_mb:g} MB file within the limit, then read",
                                       lambda: upload_and_wait(member, port, head, size, tail, upload_headers)))
            print(f"idle: {idle:.1f} MB resident")
            errors = [line for line in (tmp / "daphne.log").read_text().splitlines()
                      if "Traceback" in line or " ERROR " in line]
            if errors:
                print("server errors:", *errors, sep="\n  ")
            return results
        finally:
            stop_server(proc)


def upload_and_wait(member: Session, port: int, head: bytes, size: int, tail: bytes, headers: dict,
                    seconds: float = 120) -> int | str:
    """Upload one file, then wait until the server has read it (or failed to): its status."""
    status = send(port, "/w/bench/upload/", head, size, tail, headers)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and "reading…" in member.request("GET", "/w/bench/files/")[1]:
        time.sleep(0.5)
    return status


def main() -> int:
    if not Path("/proc/self/clear_refs").exists():
        print("needs Linux (/proc)", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser()
    parser.add_argument("--anonymous-mb", type=float, default=60)
    parser.add_argument("--upload-mb", type=float, default=150)
    parser.add_argument("--within-mb", type=float, default=19.9, help="a file just within the per-file limit")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    results = run(args)
    for r in results:
        print(f"{r.name}: status {r.status}, peak {r.peak_above_idle_mb:+.1f} MB above idle, "
              f"{r.after_above_idle_mb:+.1f} MB after, {r.seconds:.2f} s")
    anonymous = max(r.peak_above_idle_mb for r in results if r.name.startswith("anonymous"))
    upload = max(r.peak_above_idle_mb for r in results if "upload" in r.name)
    within = max(r.peak_above_idle_mb for r in results if f"{args.within_mb:g} MB file within" in r.name)
    ok = (anonymous < TARGETS_MB["anonymous"] and upload < TARGETS_MB["upload"]
          and within < TARGETS_MB["within"])
    print(f"targets: anonymous under {TARGETS_MB['anonymous']} MB above idle ({anonymous:.1f}), "
          f"upload under {TARGETS_MB['upload']} MB ({upload:.1f}), a {args.within_mb:g} MB file and its reading "
          f"under {TARGETS_MB['within']} MB ({within:.1f}): {'met' if ok else 'MISSED'}")
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
