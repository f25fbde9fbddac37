"""The mechanical citation gate (SPEC 6.1): extract framework citations and check them against a brief.

Plain Python, no Django. Entry points: `extract_citations(text)` and `check_draft(brief, draft)`.
"""
from __future__ import annotations

from .brief_check import check_brief_citations
from .extract import extract_citations
from .found import Found
from .gate import CitationGate, check_draft

__all__ = ["extract_citations", "check_draft", "check_brief_citations", "CitationGate", "Found"]
