"""The mechanical citation gate: extract framework citations and check them against a brief.

Plain Python, no Django. Entry points: `extract_citations(text)`, `check_draft(brief, draft)`,
`check_recap(brief, text)` and `check_brief_citations(brief)`; each takes `packs=` for the
catalogues a workspace imported beside the shipped ones. `prepare(packs)` builds what the checks
keep per pack ahead of the first text checked (a server, as it starts).
"""
from __future__ import annotations

from .attribution import _grammar
from .brief_check import check_brief_citations
from .catalogue_ids import catalogue_ids
from .extract import extract_citations
from .found import Found
from .gate import CitationGate, Packs, check_draft, draft_gate, pack_set
from .points import _names_by_article
from .recap import check_recap
from .wording import _recognisable_titles

__all__ = ["extract_citations", "check_draft", "check_recap", "check_brief_citations", "draft_gate",
           "CitationGate", "Found", "prepare"]


def prepare(packs: Packs = None) -> None:
    """Build, for the shipped packs and `packs`, what the checks keep per pack (each pack's id
    reader, its recognisable titles, its points' names) and the grammar of quotes: about 60 ms
    here, which otherwise falls on the first draft a process checks."""
    found = pack_set(packs)
    for pack in found.by_key.values():
        catalogue_ids(pack)
        _recognisable_titles(pack)
        if pack.point_names:
            _names_by_article(pack)
    _grammar(found.extra_names)
