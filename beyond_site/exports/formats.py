"""The export formats, one table for the download links and `beyond_export`."""
from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Callable

from beyond_site.exports import docx, md
from beyond_site.exports.document import build
from beyond_site.runs.models import Run
from beyond_site.runs.selectors import run_trace


@dataclass(frozen=True)
class Format:
    content_type: str
    render: Callable[[Run], bytes]


def _docx(run: Run) -> bytes:
    buffer = io.BytesIO()
    docx.write(build(run), buffer)
    return buffer.getvalue()


def _trace(run: Run) -> bytes:
    return (json.dumps(run_trace(run), ensure_ascii=False, indent=2) + "\n").encode("utf-8")


FORMATS = {
    "md": Format("text/markdown; charset=utf-8", lambda run: md.write(build(run)).encode("utf-8")),
    "docx": Format("application/vnd.openxmlformats-officedocument.wordprocessingml.document", _docx),
    "json": Format("application/json", _trace),
}
