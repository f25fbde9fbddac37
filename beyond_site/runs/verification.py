"""Who checked a run's released steps (docs/verifier-contract.md, "Who checked"), and the words
that say it wherever a run is shown: the chat, the audit pages, the exports, the Calibration page.

A released step was checked by a model (a language model read it as the blind verifier) or
mechanically (a verifier that is not one: only the mechanical checks ran). The run's
`verification` combines its steps' (`model`, `mechanical`, `mixed`); a run that released nothing
has none. Plain functions, no models: the recorder, the chain check and migration 0006 share them.
"""
from __future__ import annotations

from collections.abc import Iterable

from pipeline import badges
from pipeline.calibration.offline import sentence as offline_figures
from pipeline.providers.registry import reads_with_a_language_model

KINDS = (badges.BY_MODEL, badges.MECHANICAL, badges.MIXED)
#: A pass as the badge of a step that no model read: an older run's record says `passed` where
#: the release rules now say `checked` (see `shown_badge`).
_MODEL_PASSES = (badges.PASSED, badges.PASSED_AFTER_RERENDER)

WORDS = {
    badges.BY_MODEL: "Checked by a language model: a model read every released step as the blind verifier.",
    badges.MECHANICAL: ("Checked mechanically: no language model read these steps. Only mechanical checks ran "
                        "(framework citations against the brief's approved list, and structure); nothing "
                        "checked them for faithfulness to the brief."),
    badges.MIXED: ("Checked partly by a language model and partly mechanically: each step's badge says which "
                   "(\u201cChecked mechanically\u201d: no model read it)."),
}
SHORT = {badges.BY_MODEL: "by a model", badges.MECHANICAL: "mechanically", badges.MIXED: "mixed"}


def combined(kinds: Iterable[str | None]) -> str | None:
    """The run's verification from its released steps' checkers (None when none was released)."""
    found = {kind for kind in kinds if kind}
    if not found:
        return None
    if len(found) == 1 and badges.MIXED not in found:
        return found.pop()
    return badges.MIXED


def recorded_checker(topology: dict | None) -> str:
    """Who checked a step whose release event predates `checked_by`: the verifier the run's
    topology named, as its provider declares itself (only the offline engine is not a model)."""
    verifier = (topology or {}).get("verifier") or {}
    provider = verifier.get("provider") if isinstance(verifier, dict) else None
    return badges.BY_MODEL if reads_with_a_language_model(provider or "") else badges.MECHANICAL


def step_checker(checked_by: str | None, topology: dict | None) -> str:
    return checked_by or recorded_checker(topology)


def shown_badge(badge: str | None, verification: str | None) -> str | None:
    """The badge as a reader is shown it. A run recorded before the `checked` badge existed, whose
    verifier was not a model, carries `passed` in its record (which stays as it was, chained);
    it is shown as what it was: checked mechanically."""
    if verification == badges.MECHANICAL and badge in _MODEL_PASSES:
        return badges.CHECKED
    return badge


def words(verification: str | None) -> str:
    """What a run's verification means, in a sentence or two ("" when no step was released)."""
    if verification is None:
        return ""
    text = WORDS.get(verification, verification)
    return f"{text} {offline_figures()}" if verification == badges.MECHANICAL else text


def badge_tip(badge: str | None) -> str:
    """The badge's explanation; `checked` carries what the offline checks catch, from one place."""
    if not badge:
        return ""
    tip = badges.tip(badge)
    return f"{tip} {offline_figures()}" if badge == badges.CHECKED else tip
