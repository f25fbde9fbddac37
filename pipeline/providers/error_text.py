"""What an endpoint's error message may not bring into the call record: its server's tracebacks
and file paths.

A server that fails inside its own code may put the traceback in the error it returns
(llama-cpp-python's 500 for a `json_schema` request names `.../site-packages/llama_cpp/server/
app.py`, line and function). That is the server's private layout, not something a member or an
auditor needs: the frames go, and a path left elsewhere in the message becomes `[server path]`.
What the server said about the request itself stays.
"""
from __future__ import annotations

import re

SERVER_PATH = "[server path]"

_TRACEBACK_HEAD = re.compile(r"Traceback \(most recent call last\):[ \t]*\n?")
# A Python frame (`File "...", line N, in f`) and the indented source line under it, if any.
_FRAME = re.compile(r'^[ \t]*File "[^"\n]*", line \d+(?:, in [^\n]*)?\n?(?:[ \t]{2,}\S[^\n]*\n?)?', re.M)
# An absolute file path: under a system or home directory, or ending in a file name with an
# extension. URL paths (`/v1/chat/completions`) and model names (`org/model`) are neither.
_ROOTS = "home|root|usr|opt|tmp|var|srv|etc|app|lib|lib64|mnt|data|Users|workspace|models|private|nix"
_SEGMENT = r"[\w.@+~-]+"
_PATH = re.compile(
    rf"(?<![\w:/.~-])(?:/(?:{_ROOTS})(?:/{_SEGMENT})+/?|(?:/{_SEGMENT})+/{_SEGMENT}\.[A-Za-z][\w]{{0,5}}\b)"
    rf"|\b[A-Za-z]:\\(?:{_SEGMENT}\\)*{_SEGMENT}")


def without_server_detail(text: str) -> str:
    """`text` without traceback frames, and with server file paths replaced by `[server path]`."""
    text = _TRACEBACK_HEAD.sub("", text)
    text = _FRAME.sub("", text)
    text = _PATH.sub(SERVER_PATH, text)
    return re.sub(r"\n[ \t]*(?:\n[ \t]*)+", "\n", text).strip()
