"""Parse one untrusted PDF, DOCX or XLSX in a throw-away, resource-limited process.

Run by ``extraction.extract_file`` as ``python -I _extract_worker.py KIND MEMORY_BYTES
CPU_SECONDS MAX_PAGES MAX_TEXT_CHARS MAX_ROWS MAX_CELLS`` with the file on stdin.
Prints one JSON object on stdout: ``{"ok": true, "text": ..., "pages": n|null,
"sheets": n|null}`` or ``{"ok": false, "code": ..., "detail": ...}``. The parent
owns the user-facing messages; this side only reports what happened.

Tables come out as Markdown pipe tables (a DOCX table where it stands, each
XLSX sheet after a ``## Sheet: <name>`` line): the offline engine and the
models read rows from them.

Self-contained on purpose: the limits are set before pypdf, python-docx or
openpyxl are imported, and nothing from the project is imported (the child
runs isolated).
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
    _kind, _memory, _cpu, _max_pages, _max_chars, _max_rows, _max_cells = sys.argv[1:8]
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


def _cell_text(value) -> str:
    """One table cell on one line, with its pipes escaped so the row keeps its columns."""
    return " ".join(str(value).split()).replace("|", "\\|")


def _pipe_table(rows) -> list[str]:
    """Rows of cell texts as a Markdown pipe table (the first row is the header), padded to one width."""
    rows = [row for row in rows if any(cell for cell in row)]
    if not rows:
        return []
    width = max(len(row) for row in rows)
    lines = []
    for n, row in enumerate(rows):
        cells = list(row) + [""] * (width - len(row))
        lines.append("| " + " | ".join(cells) + " |")
        if n == 0:
            lines.append("|" + " --- |" * width)
    return lines


def _docx_lines(document):
    """Body paragraphs (headings prefixed with '#') and tables (pipe tables) in document order."""
    from docx.table import Table

    for block in document.iter_inner_content():
        if isinstance(block, Table):
            rows = []
            for row in block.rows:
                cells, seen = [], set()
                for cell in row.cells:
                    # Merged cells come back once per grid column: keep one.
                    if cell._tc not in seen:
                        seen.add(cell._tc)
                        cells.append(_cell_text(cell.text))
                rows.append(cells)
            table = _pipe_table(rows)
            if table:  # a blank line either side: a table is a block of its own
                yield ""
                yield from table
                yield ""
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


def _xlsx_value(value) -> str:
    """A cell's value as text: whole numbers without '.0', dates in ISO form, formulas' cached values."""
    import datetime

    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, datetime.datetime) and value.time() == datetime.time(0):
        return value.date().isoformat()
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    return _cell_text(value)


def _xlsx_text(data: bytes, max_rows: int, max_cells: int, max_chars: int) -> tuple[str, int]:
    """Every worksheet as ``## Sheet: <name>`` and a pipe table; (text, number of sheets).

    Read-only and data_only: cells stream from the XML and a formula gives the value Excel cached
    for it (nothing is computed, no link is followed). A sheet's declared dimension is ignored (a
    hostile one would pad every row to 16,384 columns): rows and cells are counted as they come.
    """
    import openpyxl

    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True, keep_links=False)
    except MemoryError:
        raise
    except Exception as exc:
        raise _Refusal("corrupt", type(exc).__name__) from None
    lines, cells, length = [], 0, 0
    try:
        sheets = workbook.worksheets
        for sheet in sheets:
            sheet.reset_dimensions()
            rows = []
            for n, row in enumerate(sheet.iter_rows(values_only=True), start=1):
                if n > max_rows:
                    raise _Refusal("too_many_rows", sheet.title)
                cells += len(row)
                if cells > max_cells:
                    raise _Refusal("too_many_cells", sheet.title)
                values = [_xlsx_value(v) for v in row]
                while values and not values[-1]:
                    values.pop()
                rows.append(values)
                length += sum(len(v) + 3 for v in values)
                if length > max_chars:  # the parent refuses; no point reading further
                    break
            table = _pipe_table(rows)
            lines += [f"## Sheet: {_cell_text(sheet.title)}", "", *(table or ["(empty sheet)"]), ""]
            if length > max_chars:
                break
    except (_Refusal, MemoryError):
        raise
    except Exception as exc:
        raise _Refusal("corrupt", type(exc).__name__) from None
    finally:
        workbook.close()
    return "\n".join(lines), len(sheets)


def main(kind: str, max_pages: int, max_chars: int, max_rows: int, max_cells: int) -> dict:
    """Extract text from stdin's bytes; return the JSON-able result."""
    data = sys.stdin.buffer.read()
    sheets = None
    try:
        if kind == "pdf":
            text, pages = _pdf_text(data, max_pages, max_chars)
        elif kind == "docx":
            text, pages = _docx_text(data, max_chars), None
        elif kind == "xlsx":
            (text, sheets), pages = _xlsx_text(data, max_rows, max_cells, max_chars), None
        else:
            raise _Refusal("unsupported_type", kind)
    except _Refusal as refusal:
        return {"ok": False, "code": refusal.code, "detail": refusal.detail}
    except MemoryError:
        return {"ok": False, "code": "resource_limit", "detail": "memory"}
    # Lone surrogates (seen in odd PDF fonts) cannot be encoded as UTF-8.
    text = text.encode("utf-8", "replace").decode("utf-8")
    return {"ok": True, "text": text, "pages": pages, "sheets": sheets}


if __name__ == "__main__":
    result = main(_kind, int(_max_pages), int(_max_chars), int(_max_rows), int(_max_cells))
    sys.stdout.buffer.write(json.dumps(result, ensure_ascii=False).encode("utf-8"))
    sys.stdout.flush()
