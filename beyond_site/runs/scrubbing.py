"""What the run record never keeps: configured secrets and this server's file paths.

Providers already blank the secrets out of what an endpoint sends back (pipeline/redaction.py);
the recorder scrubs every event again before it is stored, whatever produced it (a scripted
reply, an error message, an exception's text), and the messages each model call was given. What
is stored is what every page, trace and export shows, so nothing downstream needs to remember.

- Secrets: every configured one (pipeline.redaction.secrets_in_env) and DJANGO_SECRET_KEY become
  "[redacted]", and so does any 12 consecutive characters of one, whatever the case, spacing,
  line breaks, zero-width or full-width characters, reversed, in hex or in base64.
- Server paths: a scripted provider's file is named by its file name only. Members and auditors
  may see which script a run used, never where the server keeps it.
"""
from __future__ import annotations

import os
from typing import Any

from django.conf import settings

from pipeline.providers.base import Message
from pipeline.redaction import Redactor, map_strings


def public_topology(topology: dict | None) -> dict | None:
    """The topology as members and auditors see it: a scripted role's `path` reduced to its file name."""
    if not isinstance(topology, dict):
        return topology
    shown = {}
    for role, cfg in topology.items():
        if isinstance(cfg, dict) and isinstance(cfg.get("path"), str):
            cfg = {**cfg, "path": os.path.basename(cfg["path"])}
        shown[role] = cfg
    return shown


def _server_paths(topology: dict | None) -> dict[str, str]:
    """{path as written or resolved: its file name} for the scripted files of `topology`, longest first."""
    paths = {}
    for cfg in (topology or {}).values():
        path = cfg.get("path") if isinstance(cfg, dict) else None
        if isinstance(path, str) and path:
            for form in {path, os.path.abspath(path), os.path.realpath(path)}:
                paths[form] = os.path.basename(path)
    return dict(sorted(paths.items(), key=lambda item: -len(item[0])))


#: Message texts are scrubbed a section at a time (a run's calls repeat the same long sections),
#: and a scrubber (a run's recorder has one) remembers what it scrubbed, up to this many characters.
SECTION = "\n\n# "
REMEMBERED_CHARS = 2_000_000


class Scrubber:
    def __init__(self, topology: dict | None):
        self.redactor = Redactor.from_env().with_secrets(settings.SECRET_KEY)
        self.paths = _server_paths(topology)
        self._done: dict[str, str] = {}
        self._done_chars = 0

    def text(self, text: str) -> str:
        for path, name in self.paths.items():
            text = text.replace(path, name)
        return self.redactor.redact(text)

    def data(self, value: Any) -> Any:
        """`text` applied to every string in nested dicts and lists (keys included)."""
        return map_strings(value, self._remembered)

    def messages(self, messages: tuple[Message, ...]) -> tuple[Message, ...]:
        """Each message's text scrubbed section by section: every executor call of a run repeats the
        run's long stable context (pipeline.context.render_context makes it of "# " sections), which
        is then scrubbed once. A secret or a server path holds no blank line followed by "# ", so
        no match can straddle two sections."""
        return tuple(Message(m.role, SECTION.join(self._remembered(part) for part in m.content.split(SECTION)))
                     for m in messages)

    def _remembered(self, text: str) -> str:
        done = self._done.get(text)
        if done is None:
            done = self.text(text)
            if self._done_chars + len(text) > REMEMBERED_CHARS:
                self._done.clear()
                self._done_chars = 0
            self._done[text] = done
            self._done_chars += len(text)
        return done
