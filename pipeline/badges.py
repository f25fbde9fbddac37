"""The badge vocabulary: the codes the release rules give a step, and the one wording for each.

The orchestrator gives a released step one of the three release badges; `halted` is how a page
shows a step that could not be released. Every page, export and recap takes its words from here,
so a badge reads the same wherever it is shown. Wording rule: a pass means the blind verifier
found no contract violation, never that the content is verified, true or correct
(docs/verifier-contract.md).
"""
from __future__ import annotations

from dataclasses import dataclass

PASSED = "passed"
PASSED_AFTER_RERENDER = "passed_after_rerender"
#: Let through by a verifier that is not a language model (the offline engine's): only the
#: mechanical checks ran. Never shown as a pass (docs/verifier-contract.md, "Who checked").
CHECKED = "checked"
WARNING = "warning"
HALTED = "halted"

RELEASE_BADGES = (PASSED, PASSED_AFTER_RERENDER, CHECKED, WARNING)

# Who checked a run's released steps (`run.verification`).
BY_MODEL, MECHANICAL, MIXED = "model", "mechanical", "mixed"


@dataclass(frozen=True)
class Wording:
    label: str  # on the badge itself
    tip: str  # what the badge does and does not mean
    phrase: str  # in running text: "3 passed after a re-render"


WORDING = {
    PASSED: Wording(
        "Passed",
        "The blind verifier found no contract violation in this step on first inspection. "
        "It is not a guarantee of accuracy: review before use.",
        "passed"),
    PASSED_AFTER_RERENDER: Wording(
        "Passed after re-render",
        "The verifier found issues in the first draft; the step was re-rendered once and the verifier "
        "found no contract violation in the second.",
        "passed after a re-render"),
    CHECKED: Wording(
        "Checked mechanically",
        "No language model read this step. Only mechanical checks ran: its framework citations against "
        "the brief's approved list, and its structure. It was not checked for faithfulness to the brief: "
        "review before use.",
        "checked mechanically"),
    WARNING: Wording(
        "Warning",
        "The verifier found issues in both drafts. The step is released with those issues listed below: "
        "read it critically and fix it before use.",
        "released with a warning"),
    HALTED: Wording(
        "Halted",
        "This step could not be inspected (or drafted), so it was not released, and no later step was "
        "released either.",
        "halted"),
}


def label(code: str) -> str:
    return WORDING[code].label if code in WORDING else code


def tip(code: str) -> str:
    return WORDING[code].tip if code in WORDING else ""


def phrase(code: str) -> str:
    return WORDING[code].phrase if code in WORDING else code
