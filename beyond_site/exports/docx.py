"""Write an export (exports.document.export_rows) as a DOCX with python-docx.

Step content is Markdown: block structure (headings, paragraphs, lists, code, quotes) and inline
bold/italic/code are kept from markdown-it's tokens; anything else becomes plain text.
"""
from __future__ import annotations

import re

from docx import Document

from beyond_site.exports.document import NOT_RELEASED, badge_line
from beyond_site.lib.markdown import MARKDOWN
from beyond_site.runs.wording import OFFLINE_TIP

# XML 1.0 forbids most control characters; python-docx raises on them, so model text is cleaned.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _text(value) -> str:
    return _CONTROL.sub("", str(value or ""))


def write(rows: dict, target) -> None:
    run = rows["run"]
    doc = Document()
    doc.add_heading(_text(run.task)[:200], level=0)
    doc.add_paragraph(f"Run {run.pk} · status: {run.status}")
    if run.offline:
        doc.add_paragraph(f"Offline engine: {OFFLINE_TIP}")
    if run.halt_reason:
        doc.add_paragraph(f"Reason: {_text(run.halt_reason)}")
    for step in rows["steps"]:
        doc.add_heading(f"Step {step['index']}: {_text(step['title'])}", level=1)
        if step["badge"]:
            p = doc.add_paragraph()
            p.add_run("Badge: ").bold = True
            p.add_run(badge_line(step["badge"]))
        for warning in step["warnings"]:
            p = doc.add_paragraph(style="Intense Quote")
            p.add_run("Warning: ").bold = True
            p.add_run(_text(warning))
        if step["content"] is not None:
            _markdown(doc, step["content"])
        else:
            doc.add_paragraph().add_run(step["note"] or NOT_RELEASED).italic = True
    if run.summary:
        doc.add_heading("Recap", level=1)
        _markdown(doc, run.summary)
    for warning in run.warnings or []:
        doc.add_paragraph(f"Warning: {_text(warning)}")
    doc.add_heading("Appendix: approved citations", level=1)
    citations = rows["citations"]
    if citations:
        table = doc.add_table(rows=1, cols=4)
        table.style = "Table Grid"
        for cell, head in zip(table.rows[0].cells, ("ID", "Framework", "Reference", "Title")):
            cell.text = head
        for c in citations:
            cells = table.add_row().cells
            for cell, key in zip(cells, ("id", "framework", "ref", "title")):
                cell.text = _text(c.get(key))
    else:
        doc.add_paragraph("The brief approved no citations.")
    doc.save(target)


def _markdown(doc, text: str) -> None:
    tokens = MARKDOWN.parse(_text(text))
    style, heading, lists = None, None, []
    for tok in tokens:
        if tok.type == "heading_open":
            heading = min(int(tok.tag[1]) + 1, 9)
        elif tok.type == "heading_close":
            heading = None
        elif tok.type in ("bullet_list_open", "ordered_list_open"):
            lists.append("List Number" if tok.type.startswith("ordered") else "List Bullet")
        elif tok.type in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif tok.type == "blockquote_open":
            style = "Quote"
        elif tok.type == "blockquote_close":
            style = None
        elif tok.type in ("fence", "code_block"):
            p = doc.add_paragraph()
            p.add_run(tok.content.rstrip("\n")).font.name = "Courier New"
        elif tok.type == "inline":
            if heading:
                doc.add_heading(tok.content, level=heading)
                continue
            p = doc.add_paragraph(style=lists[-1] if lists else style)
            _inline(p, tok.children or [])


def _inline(paragraph, children) -> None:
    bold = italic = False
    for child in children:
        if child.type == "strong_open":
            bold = True
        elif child.type == "strong_close":
            bold = False
        elif child.type == "em_open":
            italic = True
        elif child.type == "em_close":
            italic = False
        elif child.type in ("text", "code_inline"):
            run = paragraph.add_run(child.content)
            run.bold, run.italic = bold or None, italic or None
            if child.type == "code_inline":
                run.font.name = "Courier New"
        elif child.type in ("softbreak", "hardbreak"):
            paragraph.add_run(" " if child.type == "softbreak" else "\n")
