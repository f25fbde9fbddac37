"""Where a kind of server says a model's context window, as declared data (a profile's
`window_source`), and how its answer is read.

vLLM lists `max_model_len` per model on /v1/models; llama.cpp's llama-server gives the window of
its slots on /props; Ollama gives each loaded model's `context_length` on /api/ps (the window it
runs with, which can be far below what the model was trained for); LM Studio gives a model's
`loaded_context_length` (or, unloaded, its `max_context_length`) on /api/v0/models/{model}.
llama-cpp-python's server says nothing of it (its /v1/models names the alias only): its profile
carries the window `make model-server` starts it with instead. docs/model-servers.md, "Context
windows".
"""
from __future__ import annotations

from typing import Any, Literal
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field


class WindowSource(BaseModel):
    """One request that answers with the window, and where in its JSON the window is."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Below the server's root (the base URL without its `/v1`); `{model}` is the role's model.
    path: str
    method: Literal["GET", "POST"] = "GET"
    #: A POST's JSON body; string values may hold `{model}`.
    body: dict[str, str] | None = None
    #: Dotted path to a list of per-model entries, or None when the answer is about one model.
    entries: str | None = None
    #: The keys of an entry that name its model (the first that equals the role's model picks it).
    match: tuple[str, ...] = ("id",)
    #: Dotted paths to the window in tokens, first found wins.
    fields: tuple[str, ...] = Field(min_length=1)

    def url(self, base_url: str, model: str) -> str:
        root = base_url.rstrip("/")
        if root.endswith("/v1"):
            root = root[:-3]
        return f"{root}/{self.path.replace('{model}', quote(model, safe=''))}"

    def json_body(self, model: str) -> dict | None:
        return None if self.body is None else {k: v.replace("{model}", model) for k, v in self.body.items()}

    def window_in(self, answer: Any, model: str) -> int | None:
        """The window the answer gives for `model`, or None when it gives none that makes sense."""
        about = answer
        if self.entries is not None:
            listed = _at(answer, self.entries)
            about = next((e for e in listed if isinstance(e, dict) and any(e.get(k) == model for k in self.match)),
                         None) if isinstance(listed, list) else None
        for name in self.fields:
            value = _at(about, name)
            # A bool is an int to Python, and no window is under 512 tokens (a role's own minimum).
            if isinstance(value, int) and not isinstance(value, bool) and 512 <= value <= 10_000_000:
                return value
        return None


def _at(value: Any, dotted: str) -> Any:
    for key in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value
