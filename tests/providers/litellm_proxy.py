"""The real LiteLLM proxy as a subprocess on loopback, with canned-reply deployments.

Each deployment answers with its `mock_response` (a text, or one of LiteLLM's named faults such as
`litellm.RateLimitError`) instead of calling the model it names, so nothing leaves the machine;
the proxy's routing, retries, streaming, parameter checks and response headers are the real ones.
It runs from its own virtual environment, `.venv-servers` (`make servers`, from
requirements-servers.txt).
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVERS_VENV = Path(os.environ.get("BEYOND_SERVERS_VENV", ROOT / ".venv-servers"))
LITELLM = SERVERS_VENV / "bin" / "litellm"
START_TIMEOUT_S = 120


def require_litellm() -> Path:
    """The proxy's executable; its absence fails the test (`make test` installs it), never skips it."""
    if not LITELLM.exists():
        pytest.fail(f"the LiteLLM proxy is not installed at {LITELLM}: run `make servers`")
    return LITELLM


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


#: A deployment: (model behind it, canned reply or fault), or the proxy's own `litellm_params`
#: (e.g. `{"model": "openai/m", "api_base": "http://127.0.0.1:PORT/v1"}`: a real upstream).
Deployment = tuple[str, str] | dict


def _params(deployment: Deployment) -> dict:
    if isinstance(deployment, dict):
        return {"api_key": "not-used", **deployment}
    model, reply = deployment
    return {"model": model, "api_key": "not-used", "mock_response": reply}


def config(deployments: dict[str, Deployment], settings: dict | None = None) -> dict:
    """{alias: deployment} as a proxy config, with `settings` added to its `litellm_settings`."""
    return {
        "model_list": [{"model_name": alias, "litellm_params": _params(d)} for alias, d in deployments.items()],
        "litellm_settings": {"telemetry": False, **(settings or {})},
    }


class LiteLLMProxy:
    def __init__(self, workdir: Path, deployments: dict[str, Deployment], settings: dict | None = None):
        self.workdir = workdir
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        (workdir / "config.json").write_text(json.dumps(config(deployments, settings)))
        self.log_path = workdir / "proxy.log"
        self.process: subprocess.Popen | None = None

    def start(self) -> LiteLLMProxy:
        executable = require_litellm()
        # A clean environment: no key, no database or cache URL of ours, and the model price map
        # read from the package instead of fetched.
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.workdir),
               "LITELLM_LOCAL_MODEL_COST_MAP": "True", "NO_COLOR": "1"}
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [str(executable), "--config", str(self.workdir / "config.json"), "--host", "127.0.0.1",
                 "--port", str(self.port)], cwd=self.workdir, env=env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the LiteLLM proxy exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/health/liveliness", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"the LiteLLM proxy did not answer within {START_TIMEOUT_S}s:\n{self.log_tail()}")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)  # its own session: the proxy and its workers
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(5)

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
