"""The calibration corpus: shipped clean drafts, mechanically made violations, ground truth."""
from collections import Counter

import pytest

from pipeline.calibration import (CITATION_TYPES, VIOLATION_TYPES, build_corpus,
                                  mechanical_findings, seed_drafts, workspace_drafts)
from pipeline.calibration.blocks import remove_block
from pipeline.calibration.mutations import negate
from pipeline.calibration.seed import seed_cases
from pipeline.citations import check_draft
from pipeline.frameworks import SHIPPED_FRAMEWORKS, load_packs
from pipeline.frameworks.packset import PackSet


@pytest.fixture(scope="module")
def corpus():
    return build_corpus(0)


def test_the_seed_corpus_spans_the_five_frameworks_and_the_common_document_types():
    drafts = seed_drafts()
    assert len(drafts) >= 30
    packs = PackSet()
    frameworks = {packs.for_framework_name(d.framework).key for d in drafts}
    assert frameworks == set(SHIPPED_FRAMEWORKS)
    assert {"policy", "procedure", "register", "record of processing", "audit plan", "gap assessment"} <= \
        {d.doc_type for d in drafts}
    assert sum(d.text.startswith("Subject:") for d in drafts) >= 3          # stakeholder emails


def test_every_clean_seed_draft_is_faithful_to_the_gate():
    for draft in seed_drafts():
        assert check_draft(draft.brief, draft.text) == [], (draft.case, draft.step)


def test_each_seed_case_names_a_contradiction_per_judgment_and_the_items_of_each_step():
    for case in seed_cases():
        assert len(case.contradictions) == len(case.brief.judgments), case.id
        assert [d.step for d in case.drafts] == [s.index for s in case.brief.steps], case.id
        for draft in case.drafts:
            assert len(draft.items) >= 2, (case.id, draft.step)


def test_it_makes_every_violation_type_from_the_clean_drafts(corpus):
    kinds = Counter(d.truth.kind for d in corpus)
    assert kinds["clean"] == len(seed_drafts())
    assert all(kinds[kind] >= 10 for kind in VIOLATION_TYPES), kinds
    clean = {(d.case, d.step): d.text for d in corpus if d.truth.clean}
    for draft in corpus:
        if not draft.truth.clean:
            assert draft.text != clean[(draft.case, draft.step)]
            assert draft.truth.changed and draft.truth.reported_as and draft.truth.detail


def test_the_gate_catches_every_citation_violation_and_nothing_else(corpus):
    found = mechanical_findings(corpus)
    for draft in corpus:
        assert bool(found[draft.draft_id]) == (draft.truth.kind in CITATION_TYPES), (draft.truth, found[draft.draft_id])


def test_the_corpus_is_deterministic_for_a_seed_and_ids_depend_on_content_only(corpus):
    again = build_corpus(0)
    assert [(d.draft_id, d.text, d.truth) for d in again] == [(d.draft_id, d.text, d.truth) for d in corpus]
    other = build_corpus(7)
    assert [d.draft_id for d in other if d.truth.clean] == [d.draft_id for d in corpus if d.truth.clean]
    assert {d.draft_id for d in other} != {d.draft_id for d in corpus}


def test_a_sized_corpus_is_half_clean_and_covers_every_type():
    sized = build_corpus(3, size=48)
    kinds = Counter(d.truth.kind for d in sized)
    assert len(sized) == 48 and kinds["clean"] == 24
    assert set(kinds) == {"clean", *VIOLATION_TYPES}


def test_it_takes_clean_drafts_from_a_workspaces_runs():
    brief = {"task": "Backup standard", "judgments": ["Backups are kept for 30 days.", "Restores are tested monthly."],
             "citations": [{"id": "C1", "framework": "ISO/IEC 27001:2022", "ref": "A.8.13", "title": "Information backup"}],
             "steps": [{"index": 1, "title": "Standard", "content_spec": "Retention, testing"}]}
    good = ("## Retention\n\nBackups follow A.8.13 (Information backup) and are kept for 30 days in a second region.\n\n"
            "## Testing\n\nA restore of one system is tested every month and the result is recorded.\n")
    bad = "Backups follow A.8.99."
    drafts = workspace_drafts([(brief, 1, good), (brief, 1, bad), (brief, 1, good), (brief, 2, good)])
    assert [d.text for d in drafts] == [good] and drafts[0].source == "workspace"
    corpus = build_corpus(0, runs=[(brief, 1, good)])
    made = {d.truth.kind: d for d in corpus if d.source == "workspace"}
    assert set(made) == {"clean", *VIOLATION_TYPES} - {"altered_wording"}     # no approved text to alter
    assert made["contradicted_judgment"].truth.changed == "Backups are kept for 60 days."
    assert made["contradicted_judgment"].text.count("Backups are kept for 60 days.") == 1
    removed = made["removed_requirement"]
    assert removed.truth.changed in good and removed.truth.changed not in removed.text


def test_imported_packs_are_used_for_the_workspace_drafts():
    pack = load_packs()["nist-csf-2.0"]
    assert build_corpus(0, packs=[pack], kinds=[]) == build_corpus(0, kinds=[])


@pytest.mark.parametrize("judgment, contradiction", [
    ("Privileged access is reviewed every 90 days.", "Privileged access is reviewed every 180 days."),
    ("Developer laptops are out of scope.", "Developer laptops are in scope."),
    ("Shared accounts are prohibited.", "Shared accounts are allowed."),
    ("The DPO must approve every extension.", "The DPO need not approve every extension."),
    ("The audit runs from 9 to 13 March 2026.", "The audit runs from 18 to 13 March 2026."),
    ("Scope: the Paris office.", None),
])
def test_it_contradicts_a_judgment_by_rule(judgment, contradiction):
    assert negate(judgment) == contradiction


def test_it_removes_exactly_the_block_delivering_an_item():
    text = "## Scope\n\nAll systems.\n\n## Owner\n\nThe CISO.\n\n| A | B |\n|---|---|\n| x | 1 |\n| y | 2 |\n\n- one\n- two\n"
    assert remove_block(text, "## Scope")[0].startswith("## Owner")
    assert remove_block(text, "| x")[0].count("| y | 2 |") == 1 and "| x" not in remove_block(text, "| x")[0]
    assert remove_block(text, "- one") == (text.replace("- one\n", ""), "- one")
    assert remove_block(text, "## Nothing") is None
