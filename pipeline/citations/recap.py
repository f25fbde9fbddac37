"""The summarizer's recap is model output shown to people: it gets the gate's mechanical checks too.

The recap restates the document, so it is held to the same closed list as the steps: a citation
the brief does not approve, or an approved one with a wrong title or wording, is a finding. The
recap never gets a badge; the caller shows it with a warning naming the findings, or drops it.
"""
from __future__ import annotations

from pipeline.schemas import Brief, Issue

from .gate import CitationGate, Packs


def check_recap(brief: Brief, text: str, *, packs: Packs = None) -> list[Issue]:
    """The mechanical findings on a recap against the brief ([] when there are none).

    `packs`: the workspace's imported packs, as for `check_draft`.
    """
    return CitationGate(brief, packs).check(text or "")
