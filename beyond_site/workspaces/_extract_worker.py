"""Parse one untrusted PDF or DOCX in a throw-away, resource-limited process.

Run by ``extraction.extract`` as ``python -I _extract_worker.py KIND MEMORY_BYTES
CPU_SECONDS MAX_PAGES MAX_TEXT_CHARS`` with the file on stdin. Prints one JSON
object on stdout: ``{"ok": true, "text": ..., "pages": n|null}`` or
``{"ok": false, "code": ..., "detail": ...}``. The parent owns the user-facing
messages; this side only reports what happened.

Self-contained on purpose: the limits are set before pypdf or python-docx are
imported, and nothing from the project is imported (the child runs isolated).
"""

import resource
import sys


def _set_limits(memory_bytes: int, cpu_seconds: int) -> None:
    """Cap address space, CPU time and file writes before touching the data."""

    def lower(which: int, soft: int, hard: int) -> None:
        _, current_hard = resource.getrlimit(which)
        if current_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, current_hard), min(hard, current_hard)
        resource.setrlimit(which, (soft, hard))

    lower(resource.RLIMIT_AS, memory_bytes, memory_bytes)
    # Soft limit sends SIGXCPU; the hard limit one second later is SIGKILL.
    lower(resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 1)
    lower(resource.RLIMIT_FSIZE, 0, 0)  # a parser has no business writing files
    lower(resource.RLIMIT_CORE, 0, 0)


if __name__ == "__main__":
    _kind, _memory, _cpu, _max_pages, _max_chars = sys.argv[1:6]
    _set_limits(int(_memory), int(_cpu))

import io  # noqa: E402  (after the limits, deliberately)
import json  # noqa: E402


class _Refusal(Exception):
    def __init__(self, code: str, detail: str = "") -> None:
        super().__init__(code)
        self.code, self.detail = code, detail


def _pdf_text(data: bytes, max_pages: int, max_chars: int) -> tuple[str, int]:
    from pypdf import PdfReader
    from pypdf.errors import LimitReachedError

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            raise _Refusal("encrypted_pdf")
        page_count = len(reader.pages)
    except (_Refusal, MemoryError):
        raise
    except LimitReachedError as exc:
        raise _Refusal("resource_limit", str(exc)) from None
    except Exception as exc:
        raise _Refusal("corrupt", type(exc).__name__) from None
    if page_count == 0:
        raise _Refusal("corrupt", "no pages")
    if page_count > max_pages:
        raise _Refusal("too_many_pages", str(page_count))
    parts, length = [], 0
    for page in reader.pages:
        try:
            text = page.extract_text() or ""
        except MemoryError:
            raise
        except LimitReachedError as exc:  # pypdf's own guard, e.g. tokens per stream
            raise _Refusal("resource_limit", str(exc)) from None
        except Exception as exc:
            raise _Refusal("corrupt", type(exc).__name__) from None
        parts.append(text)
        length += len(text)
        if length > max_chars:  # the parent refuses; no point reading further
            break
    return "\n\n".join(parts), page_count


def _heading_prefix(paragraph) -> str:
    """'## ' for a 'Heading 2' style, '# ' for 'Title', else ''."""
    try:
        name = paragraph.style.name or ""
    except Exception:  # broken style references are common and harmless
        return ""
    if name == "Title":
        return "# "
    level = name.removeprefix("Heading ").strip()
    if name.startswith("Heading ") and level.isdigit():
        return "#" * min(int(level), 6) + " "
    return ""


def _docx_lines(document):
    """Body paragraphs and table rows in document order, one line each."""
    from docx.table import Table

    for block in document.iter_inner_content():
        if isinstance(block, Table):
            for row in block.rows:
                cells, seen = [], set()
                for cell in row.cells:
                    # Merged cells come back once per grid column: keep one.
                    if cell._tc not in seen:
                        seen.add(cell._tc)
                        cells.append(cell.text.replace("\n", " "))
                yield " | ".join(cells)
        elif block.text.strip():
            yield _heading_prefix(block) + block.text
        else:
            yield block.text


def _docx_text(data: bytes, max_chars: int) -> str:
    import docx

    lines, length = [], 0
    try:
        for line in _docx_lines(docx.Document(io.BytesIO(data))):
            lines.append(line)
            length += len(line) + 1
            if length > max_chars:  # the parent refuses; no point reading further
                break
    except MemoryError:
        raise
    except Exception as exc:
        raise _Refusal("corrupt", type(exc).__name__) from None
    return "\n".join(lines)


def main(kind: str, max_pages: int, max_chars: int) -> dict:
    """Extract text from stdin's bytes; return the JSON-able result."""
    data = sys.stdin.buffer.read()
    try:
        if kind == "pdf":
            text, pages = _pdf_text(data, max_pages, max_chars)
        elif kind == "docx":
            text, pages = _docx_text(data, max_chars), None
        else:
            raise _Refusal("unsupported_type", kind)
    except _Refusal as refusal:
        return {"ok": False, "code": refusal.code, "detail": refusal.detail}
    except MemoryError:
        return {"ok": False, "code": "resource_limit", "detail": "memory"}
    # Lone surrogates (seen in odd PDF fonts) cannot be encoded as UTF-8.
    text = text.encode("utf-8", "replace").decode("utf-8")
    return {"ok": True, "text": text, "pages": pages}


if __name__ == "__main__":
    result = main(_kind, int(_max_pages), int(_max_chars))
    sys.stdout.buffer.write(json.dumps(result, ensure_ascii=False).encode("utf-8"))
    sys.stdout.flush()
