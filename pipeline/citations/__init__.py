"""The mechanical citation gate (SPEC 6.1): extract framework citations and check them against a brief.

Plain Python, no Django. Entry points: `extract_citations(text)` and `check_draft(brief, draft)`.
"""
from __future__ import annotations

from .extract import extract_citations
from .found import Found
from .gate import CitationGate, check_draft

__all__ = ["extract_citations", "check_draft", "CitationGate", "Found"]
