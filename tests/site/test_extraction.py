"""Tests for the safe text-extraction layer; no database, no Django needed.

Every input is built here. PDFs and DOCX files go through the real worker
subprocess, so these tests also exercise the resource limits.
"""

import asyncio
import codecs
import io
import zipfile
import zlib

import docx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject, StreamObject

from beyond_site.workspaces.extraction import ExtractionError, Limits, extract_file, sniff_file

MiB = 1024 * 1024


def extract(data: bytes, filename: str, limits: Limits = Limits()):
    return extract_file(io.BytesIO(data), filename, limits)


def sniff_kind(data: bytes, filename: str) -> str:
    return sniff_file(io.BytesIO(data), filename)

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64)
ELF = b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4


def make_pdf(*page_texts: str | None, encrypt: bool = False) -> bytes:
    """A valid PDF with one page per entry; None gives a page with no text."""
    contents = [None if t is None else f"BT /F1 12 Tf 72 720 Td ({t}) Tj ET".encode("latin-1")
                for t in page_texts]  # fmt: skip
    return pdf_from_contents(contents, encrypt=encrypt)


def pdf_from_contents(contents: list[bytes | None], encrypt=False, deflate=False) -> bytes:
    """A PDF whose pages draw the given raw content streams in Helvetica."""
    writer = PdfWriter()
    for content in contents:
        page = writer.add_blank_page(612, 792)
        if content is None:
            continue
        font = DictionaryObject({
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        })  # fmt: skip
        fonts = DictionaryObject({NameObject("/F1"): writer._add_object(font)})
        page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): fonts})
        if deflate:  # written as is: a small file that inflates hugely
            stream = StreamObject()
            stream._data = zlib.compress(content, 1)
            stream[NameObject("/Filter")] = NameObject("/FlateDecode")
        else:
            stream = DecodedStreamObject()
            stream.set_data(content)
        page[NameObject("/Contents")] = writer._add_object(stream)
    if encrypt:
        writer.encrypt(user_password="", owner_password="owner-secret")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_docx() -> bytes:
    document = docx.Document()
    document.add_heading("HEADING-MARKER", level=2)
    document.add_paragraph("PARAGRAPH-MARKER first.")
    table = document.add_table(rows=3, cols=2)
    for r, row in enumerate(table.rows[:2]):
        for c, cell in enumerate(row.cells):
            cell.text = f"CELL-{r}{c}"
    merged = table.cell(2, 0).merge(table.cell(2, 1))
    merged.text = "MERGED-MARKER"
    document.add_paragraph("AFTER-TABLE-MARKER")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def make_zip(members: dict[str, bytes], *extra_names: str) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
        for name in extra_names:
            archive.writestr(name, b"x")
    return out.getvalue()


DOCX_SKELETON = {"[Content_Types].xml": b"<Types/>", "word/document.xml": b"<w:document/>"}


def refused(data: bytes, filename: str, code: str, limits: Limits = Limits()) -> str:
    """Assert extract() refuses with ``code`` and a clean message; return it."""
    with pytest.raises(ExtractionError) as caught:
        extract(data, filename, limits)
    error = caught.value
    assert error.code == code, (error.code, str(error))
    message = str(error)
    assert message == error.message and message.endswith(".")
    assert "Traceback" not in message and "/work" not in message and "File \"" not in message
    return message


# Text kinds


def test_it_extracts_plain_text_and_normalises_line_ends():
    data = "Hello\r\nworld\rend.\n".encode()  # NUL bytes would make it binary
    result = extract(data, "notes.txt")
    assert result.kind == "text" and result.mime == "text/plain"
    assert result.text == "Hello\nworld\nend.\n"
    assert result.size == len(data) and result.pages is None
    assert len(result.sha256) == 64


def test_it_keeps_sha256_of_the_original_bytes():
    import hashlib

    data = "a\r\nb".encode("utf-8-sig")
    assert extract(data, "x.txt").sha256 == hashlib.sha256(data).hexdigest()


def test_it_extracts_markdown_by_extension_among_text_kinds():
    result = extract("# Title\n\nBody".encode(), "README.MD")
    assert (result.kind, result.mime) == ("markdown", "text/markdown")
    assert extract(b"# t", "x.markdown").kind == "markdown"


def test_it_extracts_csv_and_strips_the_utf8_bom():
    result = extract(codecs.BOM_UTF8 + b'a,b\n1,"two, quoted"\n', "data.csv")
    assert (result.kind, result.mime) == ("csv", "text/csv")
    assert result.text.startswith("a,b")


def test_it_refuses_a_malformed_csv():
    message = refused(b'a,b\n1,"never closed\n', "data.csv", "corrupt")
    assert "CSV" in message


def test_it_decodes_utf16_with_bom():
    data = codecs.BOM_UTF16_LE + "Grüße UTF16-MARKER".encode("utf-16-le")
    result = extract(data, "notes.txt")
    assert result.kind == "text" and result.text == "Grüße UTF16-MARKER"


def test_it_refuses_whitespace_only_text_and_an_empty_file_as_empty_not_as_a_scan():
    for data, name in ((b" \n\t\n", "blank.txt"), (b"", "empty.txt"), (b"", "empty.pdf"), (b"\n", "x.csv")):
        message = refused(data, name, "empty_text")
        assert message == "This file is empty: it holds no text." and "OCR" not in message


def test_it_reads_latin_1_and_windows_1252_text():
    extracted = extract("Caf\u00e9 cr\u00e8me \u2013 \u20ac5, na\u00efve".encode("cp1252"), "menu.txt")
    assert extracted.kind == "text" and extracted.text == "Caf\u00e9 cr\u00e8me \u2013 \u20ac5, na\u00efve"
    assert extract("Statut: approuv\u00e9\n".encode("latin-1"), "notes.md").text == "Statut: approuv\u00e9\n"


def test_other_legacy_encodings_are_refused_and_utf_8_with_a_bad_byte_is_read_as_utf_8():
    cyrillic = "\u041f\u043e\u043b\u0438\u0442\u0438\u043a\u0430 \u0434\u043e\u0441\u0442\u0443\u043f\u0430".encode("cp1251")
    assert "random bytes" in refused(cyrillic, "policy.txt", "unsupported_type")  # not read as "Ïîëèòèêà"
    damaged = "Caf\u00e9 cr\u00e8me".encode("utf-8") + b" \xff end"
    assert extract(damaged, "menu.txt").text == "Caf\u00e9 cr\u00e8me \ufffd end"  # not "CafÃ©"


def test_it_refuses_text_over_the_character_cap():
    message = refused(b"x" * 101, "big.txt", "too_large", Limits(max_text_chars=100))
    assert "100" in message


# Type sniffing


@pytest.mark.parametrize("data", [PNG, ELF, bytes(range(256)) * 8, b"abc\x00def"])
@pytest.mark.parametrize("filename", ["file.pdf", "file.txt", "file.docx"])
def test_it_refuses_binary_whatever_the_extension(data, filename):
    message = refused(data, filename, "unsupported_type")
    assert "PDF" in message  # says what is accepted


@pytest.mark.parametrize("data,filename,expected", [
    (bytes(range(256)) * 8, "report.pdf", "This file is not a PDF: it looks like random bytes."),
    (PNG, "memo.docx", "This file is not a Word document: it looks like a PNG image."),
    (ELF, "sheet.xlsx", "This file is not an Excel workbook: it looks like a program (an executable)."),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(500), "old.xls", "This file type is not supported: it looks like an older Office file"),
    (PNG, "photo.png", "This file type is not supported: it looks like a PNG image."),
])
def test_a_refused_file_is_told_what_it_looks_like(data, filename, expected):
    assert refused(data, filename, "unsupported_type").startswith(expected)


def test_it_refuses_text_full_of_control_characters():
    refused(b"\x01\x02\x03\x1b" * 50 + b"some text", "log.txt", "unsupported_type")


def test_it_sniffs_by_content_not_extension():
    assert sniff_kind(make_pdf("X"), "renamed.txt") == "pdf"
    assert sniff_kind(make_docx(), "renamed.csv") == "docx"
    for name, what in (("file.pdf", "a PDF"), ("file.docx", "a Word document"), ("file.xlsx", "an Excel workbook")):
        message = refused(b"this is not a pdf", name, "unsupported_type")
        assert message.startswith(f"This file is not {what}: it looks like plain text.")


def test_it_refuses_a_zip_that_is_not_a_docx():
    message = refused(make_zip({"readme.txt": b"hello"}), "archive.docx", "unsupported_type")
    assert "not a Word document: it looks like a ZIP archive" in message


def test_it_refuses_a_damaged_zip():
    refused(b"PK\x03\x04" + bytes(100), "broken.docx", "corrupt")


def test_it_refuses_an_oversized_file_before_reading_it():
    message = refused(b"a" * (2 * MiB + 1), "big.txt", "too_large", Limits(max_file_bytes=2 * MiB))
    assert "2 MB" in message


# PDF (through the worker subprocess)


def test_it_extracts_text_from_a_real_pdf():
    result = extract(make_pdf("PDF-MARKER one", "PDF-MARKER two"), "report.pdf")
    assert (result.kind, result.mime, result.pages) == ("pdf", "application/pdf", 2)
    assert "PDF-MARKER one" in result.text and "PDF-MARKER two" in result.text
    assert result.text.index("one") < result.text.index("two")


def test_it_refuses_an_encrypted_pdf_even_with_an_empty_user_password():
    message = refused(make_pdf("SECRET", encrypt=True), "locked.pdf", "encrypted_pdf")
    assert "remove the password" in message.lower()


def test_it_refuses_a_truncated_pdf():
    data = make_pdf("PDF-MARKER")
    refused(data[: len(data) // 2], "cut.pdf", "corrupt")


def test_it_refuses_a_pdf_header_followed_by_garbage():
    refused(b"%PDF-1.7\n" + bytes(range(256)) * 16, "junk.pdf", "corrupt")


def test_it_refuses_a_pdf_without_text_suggesting_ocr_is_unsupported():
    message = refused(make_pdf(None, None), "scan.pdf", "empty_text")
    assert "OCR" in message


def test_it_refuses_a_pdf_with_too_many_pages():
    message = refused(make_pdf("a", "b", "c"), "long.pdf", "too_large", Limits(max_pages=2))
    assert "3 pages" in message


def test_it_kills_a_worker_that_exceeds_the_time_limit():
    # Valid but slow: 300,000 text operators take pypdf several seconds.
    slow = pdf_from_contents([b"BT /F1 12 Tf 72 720 Td (a) Tj ET\n" * 300_000], deflate=True)
    assert len(slow) < 100_000
    message = refused(slow, "slow.pdf", "timeout", Limits(timeout_s=1))
    assert "longer than 1 seconds" in message


def test_it_kills_a_worker_on_the_wall_clock_before_it_even_starts():
    refused(make_pdf("PDF-MARKER"), "slow.pdf", "timeout", Limits(timeout_s=0.001))


def test_it_reports_a_worker_that_runs_out_of_memory():
    # A 200 MB content stream deflated to well under 1 MB; RLIMIT_AS stops it.
    big = pdf_from_contents([b"BT /F1 12 Tf (a) Tj ET " + b" " * 200_000_000], deflate=True)
    assert len(big) < 1 * MiB
    refused(big, "big.pdf", "resource_limit", Limits(memory_bytes=64 * MiB))


def test_it_reports_a_worker_that_cannot_start_within_the_memory_limit():
    # 16 MiB of address space is too little for the worker to import pypdf.
    refused(make_pdf("PDF-MARKER"), "big.pdf", "resource_limit", Limits(memory_bytes=16 * MiB))


def test_it_can_run_concurrently_from_async_code():
    async def main():
        data = [make_pdf(f"ASYNC-{i}") for i in range(4)]
        return await asyncio.gather(*(asyncio.to_thread(extract, d, "a.pdf") for d in data))

    results = asyncio.run(main())
    assert [r.text.strip() for r in results] == [f"ASYNC-{i}" for i in range(4)]


# DOCX (zip checks in the parent, parsing in the worker)


def test_it_extracts_paragraphs_tables_and_headings_from_a_docx():
    result = extract(make_docx(), "memo.docx")
    assert result.kind == "docx" and result.pages is None
    assert result.mime.endswith("wordprocessingml.document")
    lines = result.text.split("\n")
    assert "## HEADING-MARKER" in lines
    # The table is a Markdown pipe table where it stands: header, separator, rows.
    start = lines.index("| CELL-00 | CELL-01 |")
    assert lines[start - 1] == "" and lines[start + 1] == "| --- | --- |"
    assert lines[start + 2] == "| CELL-10 | CELL-11 |"
    assert lines[start + 3] == "| MERGED-MARKER |  |"  # a merged cell comes out once, the row padded
    order = [result.text.index(m) for m in ("HEADING", "PARAGRAPH", "CELL-00", "CELL-10", "AFTER")]
    assert order == sorted(order)


def test_it_escapes_pipes_and_joins_lines_inside_docx_table_cells():
    document = docx.Document()
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "System", "Owner"
    table.cell(1, 0).text, table.cell(1, 1).text = "CRM | billing", "Sales\nand finance"
    out = io.BytesIO()
    document.save(out)
    text = extract(out.getvalue(), "t.docx").text
    assert "| CRM \\| billing | Sales and finance |" in text.split("\n")


def test_it_refuses_a_docx_zip_bomb_before_parsing():
    bomb = make_zip({**DOCX_SKELETON, "word/media/zeros.bin": bytes(50 * 1000 * 1000)})
    assert len(bomb) < 1 * MiB  # small upload, huge expansion
    message = refused(bomb, "bomb.docx", "zip_bomb")
    assert "expands" in message


def test_it_refuses_a_docx_whose_declared_total_is_too_big():
    data = make_zip({**DOCX_SKELETON, "word/a.bin": bytes(3 * MiB)})
    limits = Limits(zip_max_total_uncompressed=2 * MiB, zip_max_ratio=1e9)
    assert "expands to 3 MB" in refused(data, "big.docx", "zip_bomb", limits)


def test_it_refuses_a_docx_with_too_many_members():
    names = [f"word/part{i}.xml" for i in range(2001)]
    message = refused(make_zip(DOCX_SKELETON, *names), "many.docx", "zip_bomb")
    assert "2003 parts" in message


@pytest.mark.parametrize("name", ["../evil.xml", "/etc/evil.xml", "word/../../evil.xml"])
def test_it_refuses_a_docx_with_unsafe_member_names(name):
    message = refused(make_zip(DOCX_SKELETON, name), "paths.docx", "zip_bomb")
    assert "unsafe name" in message


def test_it_refuses_a_docx_that_python_docx_cannot_parse():
    refused(make_zip(DOCX_SKELETON), "skeleton.docx", "corrupt")


# Robustness


@settings(max_examples=40, deadline=None)
@given(
    prefix=st.sampled_from([b"", b"%PDF-1.4\n", b"PK\x03\x04", codecs.BOM_UTF16_LE]),
    body=st.binary(max_size=2000),
    filename=st.sampled_from(["a.txt", "a.csv", "a.md", "a.pdf", "a.docx", ""]),
)
def test_it_only_ever_raises_extraction_error_on_arbitrary_bytes(prefix, body, filename):
    try:
        result = extract(prefix + body, filename)
    except ExtractionError as error:
        assert error.code in {"unsupported_type", "corrupt", "empty_text", "too_large"}
        assert "Traceback" not in str(error) and "/work" not in str(error)
    else:
        assert result.text.strip() and "\r" not in result.text


def test_it_pickles_errors_with_their_code():
    import pickle

    error = pickle.loads(pickle.dumps(ExtractionError("corrupt", "Damaged.")))
    assert (error.code, str(error)) == ("corrupt", "Damaged.")


def test_it_never_imports_the_parsers_in_the_calling_process(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "in.pdf").write_bytes(make_pdf("PDF-MARKER"))
    (tmp_path / "in.docx").write_bytes(make_docx())
    script = (
        "import sys\n"
        "from beyond_site.workspaces.extraction import extract_file\n"
        "for name in ('in.pdf', 'in.docx'):\n"
        "    assert 'MARKER' in extract_file(open(name, 'rb'), name).text\n"
        "assert not {'pypdf', 'docx', 'lxml'} & set(sys.modules), sys.modules.keys()\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
        env={"PYTHONPATH": str(root)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
