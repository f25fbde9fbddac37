"""The mechanical citation gate: extract framework citations and check them against a brief.

Plain Python, no Django. Entry points: `extract_citations(text)`, `check_draft(brief, draft)`,
`check_recap(brief, text)` and `check_brief_citations(brief)`; each takes `packs=` for the
catalogues a workspace imported beside the shipped ones.
"""
from __future__ import annotations

from .brief_check import check_brief_citations
from .extract import extract_citations
from .found import Found
from .gate import CitationGate, check_draft, draft_gate
from .recap import check_recap

__all__ = ["extract_citations", "check_draft", "check_recap", "check_brief_citations", "draft_gate",
           "CitationGate", "Found"]
