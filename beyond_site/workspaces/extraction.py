"""Safe text extraction for workspace files and conversation uploads.

Plain Python, no Django: callers pass settings in through ``Limits``. Types are
decided by content, never by the extension alone. PDFs, DOCX and XLSX files are
parsed in a separate, resource-limited process (``_extract_worker.py``) because
pypdf has had infinite-loop and memory bugs, python-docx parses XML with
``huge_tree=True`` and a workbook's XML can declare anything; this process never
imports any of them for untrusted data. DOCX and XLSX files are ZIP archives: their
members are checked here (count, declared sizes, ratio, names) before the worker
opens them.

Files are read from an open binary file, a piece at a time (``check`` at upload, ``extract_file``
in the background: workspaces/reading.py), never loaded whole into this process: the worker gets
the file as its stdin, and text is decoded piece by piece and refused as soon as it passes the
character budget. ``extract`` does both on bytes already in memory.

No module state is mutated, so these are safe to call from several threads at once.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import json
import logging
import math
import re
import signal
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

log = logging.getLogger(__name__)

MiB = 1024 * 1024

_WORKER = Path(__file__).with_name("_extract_worker.py")

MIME_TYPES = {
    "text": "text/plain",
    "markdown": "text/markdown",
    "csv": "text/csv",
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}
#: What each parsed kind is called in a message, and the extensions that promise it.
KIND_NAMES = {"pdf": "a PDF", "docx": "a Word document", "xlsx": "an Excel workbook"}
PROMISED_BY_EXTENSION = {".pdf": "pdf", ".docx": "docx", ".xlsx": "xlsx"}
ACCEPTED = "a PDF, a Word document (.docx), an Excel workbook (.xlsx), or a plain-text, Markdown or CSV file"

# C0 controls other than tab, line feed, form feed and carriage return, DEL, C1.
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")
_MAX_CONTROL_RATIO = 0.02
# Below this size a high compression ratio cannot hurt (a short XML part of
# repeated tags easily compresses 100:1), so only larger members are judged.
_RATIO_FLOOR_BYTES = 1 * MiB


@dataclass(frozen=True)
class Limits:
    """Upper bounds for one extraction; build it from settings in the caller."""

    max_file_bytes: int = 20 * MiB
    max_pages: int = 2000
    max_text_chars: int = 5_000_000
    timeout_s: float = 20
    memory_bytes: int = 512 * MiB
    zip_max_members: int = 2000
    zip_max_total_uncompressed: int = 200 * MiB
    zip_max_ratio: float = 100.0
    max_sheet_rows: int = 100_000  # per sheet of a workbook
    max_cells: int = 1_000_000  # in a whole workbook, empty ones included


class ExtractionError(Exception):
    """A refused file. ``code`` is stable for programs, ``message`` is for people.

    Codes: too_large, unsupported_type, encrypted_pdf, corrupt, zip_bomb,
    external_links, empty_text, timeout, resource_limit.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(code, message)  # both in args, so it survives pickling
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class Extracted:
    """The text of an accepted file; ``sha256`` and ``size`` are of the original bytes."""

    kind: str  # "text" | "markdown" | "csv" | "pdf" | "docx" | "xlsx"
    mime: str
    text: str
    sha256: str
    size: int
    pages: int | None
    sheets: int | None = None


def _mb(n: int) -> str:
    return f"{n / MiB:.0f} MB" if n >= MiB else f"{n} bytes"


#: Leading bytes of common files that Beyond does not read, and what to call them.
_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an older Office file (.doc or .xls; save it as .docx or .xlsx)"),
    (b"\x7fELF", "a program (an executable)"),
    (b"MZ", "a Windows program (an executable)"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"Rar!", "a RAR archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"{\\rtf", "a rich-text (RTF) document"),
)


def _looks_like(data: bytes, names: list[str] | None = None) -> str:
    """What unreadable content looks like, in words."""
    if names is not None:
        return "a ZIP archive that is neither a Word document nor an Excel workbook"
    for signature, what in _SIGNATURES:
        if data.startswith(signature):
            return what
    return "random bytes" if data else "an empty file"


def _unsupported(data: bytes, filename: str, names: list[str] | None = None) -> ExtractionError:
    """A refusal that says what the file is, and what it is not when its extension promised more."""
    what = _looks_like(data, names)
    promised = PROMISED_BY_EXTENSION.get(PurePosixPath(filename.replace("\\", "/")).suffix.lower())
    if promised:
        message = f"This file is not {KIND_NAMES[promised]}: it looks like {what}. Upload {ACCEPTED}."
    else:
        message = f"This file type is not supported: it looks like {what}. Upload {ACCEPTED}."
    return ExtractionError("unsupported_type", message)


def _encoding(data: bytes) -> str:
    return "utf-16" if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) else "utf-8-sig"


def _decode_text(data: bytes, *, whole: bool = True) -> str | None:
    """The text if ``data`` looks like prose in UTF-8, UTF-16 with a BOM, or else Windows-1252
    (`_not_utf8`), else None. ``whole=False``: ``data`` is a file's head, which may end inside a
    character."""
    encoding = _encoding(data)
    if encoding == "utf-8-sig" and b"\x00" in data:
        return None
    try:
        text = codecs.getincrementaldecoder(encoding)().decode(data, final=whole)
    except UnicodeDecodeError:
        if encoding == "utf-16":
            return None
        text = _not_utf8(data)
        if text is None:
            return None
    if "\x00" in text:  # e.g. UTF-32 read as UTF-16
        return None
    if text and len(_CONTROL_CHARS.findall(text)) / len(text) > _MAX_CONTROL_RATIO:
        return None
    return text


#: A UTF-8 sequence of two to four bytes: text holding some is UTF-8 with a few bad bytes, not
#: Windows-1252 (where such pairs are rare: "Ã©" is how UTF-8's "é" reads in it).
_UTF8_SEQUENCE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")
#: Latin-script prose in Windows-1252 has a few accented letters; text in another legacy encoding
#: (Cyrillic in cp1251, Korean in EUC-KR...) read as Windows-1252 is mostly such characters.
_MAX_NON_ASCII_RATIO = 0.3


def _not_utf8(data: bytes) -> str | None:
    """Text that is not valid UTF-8: UTF-8 with a few damaged bytes (they become U+FFFD), or
    Windows-1252, which covers Latin-1's letters (what older Windows tools write), or None. Random
    bytes mostly fail here (five byte values are not Windows-1252) or at the control-character test."""
    if _UTF8_SEQUENCE.search(data):
        return data.decode("utf-8", errors="replace")
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        return None
    visible = [ch for ch in text if not ch.isspace()]
    if visible and sum(ch > "\x7f" for ch in visible) / len(visible) > _MAX_NON_ASCII_RATIO:
        return None
    return text


def _zip_names(file) -> list[str] | None:
    """Member names from the central directory (nothing is decompressed), or None."""
    try:
        with zipfile.ZipFile(file) as archive:
            return archive.namelist()
    except (zipfile.BadZipFile, ValueError, OSError):
        return None


#: How much of a file tells its kind (and, for text, its encoding).
HEAD_BYTES = 64 * 1024


def sniff_file(file, filename: str) -> str:
    """Return "pdf", "docx", "xlsx", "markdown", "csv" or "text", judged by content (its head,
    and a ZIP's central directory).

    The extension only chooses between the text kinds; a PDF named .txt is a
    PDF, and an executable named .pdf is refused with what it looks like.
    Raises ExtractionError ("unsupported_type", or "corrupt" for a damaged ZIP).
    """
    file.seek(0)
    data = file.read(HEAD_BYTES)
    whole = len(data) < HEAD_BYTES
    if data.startswith(b"%PDF-"):
        return "pdf"
    if data.startswith(b"PK\x03\x04"):
        names = _zip_names(file)
        if names is None:
            raise ExtractionError(
                "corrupt",
                "This file looks like a ZIP archive (a Word document or an Excel workbook) but is damaged.",
            )
        if "[Content_Types].xml" in names and "word/document.xml" in names:
            return "docx"
        if "[Content_Types].xml" in names and "xl/workbook.xml" in names:
            return "xlsx"
        raise _unsupported(data, filename, names)
    if _decode_text(data, whole=whole) is None:
        raise _unsupported(data, filename)
    suffix = PurePosixPath(filename.replace("\\", "/")).suffix.lower()
    if suffix in PROMISED_BY_EXTENSION and data.strip():  # text named .pdf, .docx or .xlsx
        raise ExtractionError("unsupported_type", f"This file is not {KIND_NAMES[PROMISED_BY_EXTENSION[suffix]]}: "
                                                  "it looks like plain text. Rename it to .txt, or upload the "
                                                  "real file.")
    if suffix in (".md", ".markdown"):
        return "markdown"
    if suffix == ".csv":
        return "csv"
    return "text"


def _check_zip(file, kind: str, limits: Limits) -> None:
    """Refuse zip bombs and path tricks using only the central directory.

    Declared sizes are what count: zipfile never returns more than a member's
    declared size (and fails the CRC if the data disagrees), so bounding them
    bounds what python-docx or openpyxl can inflate.
    """
    what = "Word document" if kind == "docx" else "Excel workbook"

    def bomb(why: str) -> ExtractionError:
        return ExtractionError("zip_bomb", f"This {what} was refused because {why}.")

    def check_ratio(size: int, compressed: int, subject: str) -> None:
        ratio = size / max(compressed, 1)
        if size > _RATIO_FLOOR_BYTES and ratio > limits.zip_max_ratio:
            limit = limits.zip_max_ratio
            raise bomb(f"{subject} expands {ratio:.0f} times (the limit is {limit:g})")

    file.seek(0)
    with zipfile.ZipFile(file) as archive:
        members = archive.infolist()
    if len(members) > limits.zip_max_members:
        raise bomb(f"it has {len(members)} parts (the limit is {limits.zip_max_members})")
    total = total_compressed = 0
    for member in members:
        parts = member.filename.replace("\\", "/").split("/")
        if member.filename.startswith(("/", "\\")) or ".." in parts or ":" in parts[0]:
            raise bomb("it contains a part with an unsafe name")
        total += member.file_size
        total_compressed += member.compress_size
        check_ratio(member.file_size, member.compress_size, "one part")
    if total > limits.zip_max_total_uncompressed:
        raise bomb(
            f"it expands to {_mb(total)} (the limit is {_mb(limits.zip_max_total_uncompressed)})"
        )
    check_ratio(total, total_compressed, "it")
    if kind == "xlsx":
        _check_no_external_links(members)


def _check_no_external_links(members: list[zipfile.ZipInfo]) -> None:
    """Refuse a workbook that links to other workbooks or to external data.

    The worker would not follow them (it reads cached values and drops links), but a value cached
    from a file nobody uploaded is not the workbook's own data, so the member is told to break the
    links and upload again rather than given numbers from elsewhere."""
    names = [m.filename for m in members]
    if any(n.startswith("xl/externalLinks/") or n == "xl/connections.xml" for n in names):
        raise ExtractionError(
            "external_links",
            "This Excel workbook takes values from other files or external data connections, which "
            "Beyond does not follow. Break the links (in Excel: Data, Edit Links, Break Link), save, "
            "and upload it again.",
        )


_WORKER_REFUSALS = {
    "encrypted_pdf": "This PDF is password-protected. Remove the password and upload again.",
    "corrupt": "This file could not be read; it may be damaged or incomplete.",
    "resource_limit": "This file is too large or too complex to read within the allowed limits.",
}
_PARSED = ("pdf", "docx", "xlsx")


def _run_worker(kind: str, file, limits: Limits) -> tuple[str, int | None, int | None]:
    """Parse ``file`` (an open binary file: its bytes become the child's stdin) in a limited
    child process; return (text, pages, sheets)."""
    cpu_seconds = max(1, math.ceil(limits.timeout_s))
    command = [
        sys.executable, "-I", str(_WORKER), kind, str(limits.memory_bytes),
        str(cpu_seconds), str(limits.max_pages), str(limits.max_text_chars),
        str(limits.max_sheet_rows), str(limits.max_cells),
    ]  # fmt: skip
    too_slow = ExtractionError(
        "timeout", f"Reading this file took longer than {limits.timeout_s:g} seconds."
    )
    try:
        # No preexec_fn: it is unsafe with threads (asyncio.to_thread); the
        # worker sets its own rlimits before importing any parser.
        file.seek(0)
        stdin = {"stdin": file} if _has_fileno(file) else {"input": file.read()}
        done = subprocess.run(
            command, **stdin, capture_output=True, timeout=limits.timeout_s
        )  # run() kills the child on expiry
    except subprocess.TimeoutExpired:
        raise too_slow from None
    try:
        result = json.loads(done.stdout)
    except ValueError:
        result = None
    if done.returncode != 0 or not isinstance(result, dict):
        log.warning(
            "extract worker failed (kind=%s, rc=%s): %s",
            kind, done.returncode, done.stderr[-2000:].decode("utf-8", "replace"),
        )  # fmt: skip
        if done.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
            raise too_slow
        raise ExtractionError("resource_limit", _WORKER_REFUSALS["resource_limit"])
    if result.get("ok"):
        return result["text"], result["pages"], result.get("sheets")
    raise _refusal(result.get("code"), result.get("detail"), limits)


def _refusal(code: str | None, detail, limits: Limits) -> ExtractionError:
    """Why the worker refused the file, in words."""
    if code == "too_many_pages":
        return ExtractionError(
            "too_large",
            f"This PDF has {detail} pages; the limit is {limits.max_pages}.",
        )
    if code == "too_many_rows":
        return ExtractionError(
            "too_large",
            f"The sheet “{detail}” of this workbook has more than {limits.max_sheet_rows:,} rows, "
            "which is the limit. Split it, or upload the part the document needs.",
        )
    if code == "too_many_cells":
        return ExtractionError(
            "too_large",
            f"This workbook has more than {limits.max_cells:,} cells (counting the empty ones "
            f"inside its sheets, reached in “{detail}”), which is the limit.",
        )
    if code in _WORKER_REFUSALS:
        return ExtractionError(code, _WORKER_REFUSALS[code])
    return ExtractionError("unsupported_type", f"This file type is not supported. Upload {ACCEPTED}.")


def _validate_csv(text: str) -> None:
    try:
        for _ in csv.reader(io.StringIO(text), strict=True):
            pass
    except csv.Error as exc:
        raise ExtractionError(
            "corrupt", f"This CSV file is malformed ({exc}). Fix it and upload again."
        ) from None


def _has_fileno(file) -> bool:
    try:
        file.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation):
        return False
    return True


def _size(file) -> int:
    file.seek(0, io.SEEK_END)
    return file.tell()


def check(file, filename: str, limits: Limits = Limits()) -> str:
    """The quick checks an upload gets before it is accepted (its size, what it is, a ZIP's
    central directory): returns its kind, or raises ExtractionError. Reads the file's head and
    a ZIP's directory only."""
    size = _size(file)
    if size > limits.max_file_bytes:
        raise ExtractionError("too_large", f"This file is {_mb(size)}; the limit is {_mb(limits.max_file_bytes)}.")
    kind = sniff_file(file, filename)
    if kind in ("docx", "xlsx"):
        _check_zip(file, kind, limits)
    return kind


class _TooMuchText(Exception):
    pass


def _decode_file(file, limits: Limits) -> str | None:
    """A text file's text, decoded a piece at a time: None when it does not read as text (as
    `_decode_text` decides), ExtractionError("too_large") as soon as it passes the budget."""
    file.seek(0)
    head = file.read(HEAD_BYTES)
    encoding = _encoding(head)
    decoder = codecs.getincrementaldecoder(encoding)()
    pieces, chars, piece = [], 0, head
    try:
        while piece:
            if encoding == "utf-8-sig" and b"\x00" in piece:
                return None
            text = decoder.decode(piece)
            chars += len(text)
            if chars > limits.max_text_chars:
                raise _TooMuchText
            pieces.append(text)
            piece = file.read(HEAD_BYTES)
        pieces.append(decoder.decode(b"", final=True))
        text = "".join(pieces)
    except UnicodeDecodeError:
        if encoding == "utf-16":
            return None
        # Not UTF-8 as a whole: damaged UTF-8, or Windows-1252. Only a file within the budget
        # gets here whole (a character of either is at most four bytes).
        if _size(file) > 4 * limits.max_text_chars:
            raise _TooMuchText from None
        file.seek(0)
        text = _not_utf8(file.read())
        if text is None:
            return None
    except _TooMuchText:
        raise ExtractionError("too_large", f"This file contains more than {limits.max_text_chars:,} characters of "
                                           "text, which is the limit.") from None
    if "\x00" in text:
        return None
    if text and len(_CONTROL_CHARS.findall(text)) / len(text) > _MAX_CONTROL_RATIO:
        return None
    return text


def extract_file(file, filename: str, limits: Limits = Limits(), *, kind: str | None = None) -> Extracted:
    """Identify (unless `kind` was found by `check` already) and extract the text of one file,
    open in binary mode. ``filename`` is only a hint for Markdown/CSV/plain text and is never
    used as a path. Raises ExtractionError with a stable ``code`` and a message fit to show."""
    kind = kind or check(file, filename, limits)
    if kind in _PARSED:
        text, pages, sheets = _run_worker(kind, file, limits)
    else:
        text, pages, sheets = _decode_file(file, limits), None, None
        if text is None:
            file.seek(0)
            raise _unsupported(file.read(HEAD_BYTES), filename)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    if len(text) > limits.max_text_chars:
        raise ExtractionError(
            "too_large",
            f"This file contains more than {limits.max_text_chars:,} characters of text, "
            "which is the limit.",
        )
    if not text.strip():
        raise ExtractionError("empty_text", "This file is empty: it holds no text." if kind not in _PARSED else
                              "No text was found in this file. If it is a scanned document, note that "
                              "text recognition (OCR) is not supported: upload a version with real text.")
    if kind == "csv":
        _validate_csv(text)
    digest, size = hashlib.sha256(), 0
    file.seek(0)
    while piece := file.read(HEAD_BYTES):
        digest.update(piece)
        size += len(piece)
    return Extracted(kind=kind, mime=MIME_TYPES[kind], text=text, sha256=digest.hexdigest(), size=size,
                     pages=pages, sheets=sheets)
