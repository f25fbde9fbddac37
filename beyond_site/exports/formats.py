"""The export formats, one table for the download links and `beyond_export`."""
from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Callable

from beyond_site.exports import docx, md, pdf, xlsx
from beyond_site.exports.document import NOTE_KINDS, Options
from beyond_site.exports.editions import AUDIT, build
from beyond_site.lib.export_formats import DOCUMENT_FORMATS, TRACE_FORMATS
from beyond_site.runs.models import Run
from beyond_site.runs.selectors import run_trace


@dataclass(frozen=True)
class Format:
    content_type: str
    render: Callable[..., bytes]  # (run, edition, options) -> the file
    label: str
    #: Whether the file is the document (an edition of it), or the run trace (the same for both).
    document: bool = True


def _written(writer, ext: str):
    def render(run: Run, edition: str = AUDIT, options: Options = Options()) -> bytes:
        buffer = io.BytesIO()
        writer.write(build(run, edition, NOTE_KINDS[ext], options), buffer)
        return buffer.getvalue()
    return render


def _markdown(run: Run, edition: str = AUDIT, options: Options = Options()) -> bytes:
    return md.write(build(run, edition, NOTE_KINDS["md"], options)).encode("utf-8")


def _trace(run: Run, edition: str = AUDIT, options: Options = Options()) -> bytes:
    return (json.dumps(run_trace(run), ensure_ascii=False, indent=2) + "\n").encode("utf-8")


_LABELS = {**DOCUMENT_FORMATS, **TRACE_FORMATS}
FORMATS = {
    "docx": Format("application/vnd.openxmlformats-officedocument.wordprocessingml.document", _written(docx, "docx"),
                   _LABELS["docx"]),
    "pdf": Format("application/pdf", _written(pdf, "pdf"), _LABELS["pdf"]),
    "md": Format("text/markdown; charset=utf-8", _markdown, _LABELS["md"]),
    "xlsx": Format("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", _written(xlsx, "xlsx"),
                   _LABELS["xlsx"]),
    "json": Format("application/json", _trace, _LABELS["json"], document=False),
}
assert list(FORMATS) == list(_LABELS)  # every format named once, in the menus' order
