"""The export formats' names, in the order the menus list them: one table for the chat's menu, the
run page's downloads, the API and the exports themselves (exports/formats.py gives each its
writer)."""
from __future__ import annotations

#: The document's formats (an edition of it), by extension.
DOCUMENT_FORMATS = {"docx": "Word", "pdf": "PDF", "md": "Markdown", "xlsx": "Excel (tables)"}
#: The run trace: the same file for both editions.
TRACE_FORMATS = {"json": "Run trace (JSON)"}
