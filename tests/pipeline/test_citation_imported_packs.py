"""Imported framework packs get the gate's checks: ids and titles from the imported catalogue.

A workspace stores each imported pack as pack JSON; the caller loads it with `pack_from_dict` and
passes the packs to the gate (`packs=`).
"""
import json
from pathlib import Path

import pytest

from pipeline.citations import (check_brief_citations, check_draft, check_recap, draft_gate, extract_citations,
                                prepare)
from pipeline.citations.attribution import _grammar
from pipeline.citations.catalogue_ids import catalogue_ids
from pipeline.citations.wording import _recognisable_titles
from pipeline.frameworks import load_packs, pack_from_dict
from pipeline.frameworks.oscal import pack_from_oscal
from pipeline.frameworks.packset import PackSet
from pipeline.schemas import Brief, Citation

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
INV, ALT = "invented_citation", "altered_citation"


def _oscal(path, key, name):
    return pack_from_oscal(json.loads((FIXTURES / path).read_text(encoding="utf-8")), key, name)


@pytest.fixture(scope="module")
def acme():
    return pack_from_dict(_oscal("oscal-custom/acme-controls.json", "acme-controls", "ACME Internal Control Catalogue"))


@pytest.fixture(scope="module")
def csf_part():
    """The GOVERN and PROTECT functions of CSF 2.0 imported under their own key and name."""
    return pack_from_dict(_oscal("oscal/nist-csf-2.0-govern-protect.json", "csf-gv-pr", "CSF 2.0 Govern and Protect"))


@pytest.fixture(scope="module")
def nist_next():
    """A later 800-53 catalogue, simulated: one control retitled, one enhancement withdrawn."""
    data = _oscal("oscal/NIST_SP-800-53_rev5_catalog-min_v5.0.1.json", "nist-800-53-next", "NIST SP 800-53 Rev. 5.9")
    for entry in data["entries"]:
        if entry["ref"] == "AC-2":
            entry["title"] = "Account Management and Review"
        if entry["ref"] == "AC-2(5)":
            entry["status"], entry["replaced_by"] = "withdrawn", ["AC-2"]
    return pack_from_dict(data)


def _brief(*approved):
    return Brief(task="Write the standard", steps=[{"index": 1, "title": "Standard", "content_spec": "Write it"}],
                 citations=[Citation(id=f"C{i}", framework=fw, ref=ref, title=title)
                            for i, (fw, ref, title) in enumerate(approved, 1)])


def _found(issues):
    return sorted((i.type, i.quote) for i in issues)


def test_it_reads_an_imported_catalogues_own_ids(acme):
    found = extract_citations("Per GOV-1 (Security policy), OPS-2.1 and ops-02.02; HR-9 is new.", PackSet([acme]))
    assert [(f.pack_key, f.ref) for f in found] == [
        ("acme-controls", "gov-1"), ("acme-controls", "ops-2.1"), ("acme-controls", "ops-2.2"), ("acme-controls", "HR-9")]
    assert found[0].title_quote == "Security policy"


def test_it_ignores_imported_ids_without_the_packs(acme):
    assert extract_citations("Per GOV-1 and OPS-2.1.") == []


@pytest.mark.parametrize("draft, expected", [
    ("Policies follow GOV-1 (Security policy) and backups OPS-2.", []),
    ("Backups follow ops-2, with offsite copies per OPS-2.1.", []),            # a part of an approved control
    ("Policies follow GOV-1 (Change management).", [(ALT, "GOV-1")]),          # the title of ops-1
    ("Screening follows HR-1.", [(INV, "HR-1")]),                               # exists, not approved
    ("Vendors follow HR-7.", [(INV, "HR-7")]),                                  # not in the catalogue
    ("Reviews follow GOV-3.", [(ALT, "GOV-3")]),                                # withdrawn, not approved
])
def test_it_checks_an_imported_catalogue_like_a_shipped_one(acme, draft, expected):
    brief = _brief(("ACME Internal Control Catalogue", "GOV-1", "Security policy"),
                   ("ACME Internal Control Catalogue", "ops-2", "Backup"))
    assert _found(check_draft(brief, draft, packs=[acme])) == expected


def test_an_approved_withdrawn_imported_id_is_faithful(acme):
    brief = _brief(("ACME Internal Control Catalogue", "gov-3", "Management review"))
    assert check_draft(brief, "Reviews follow GOV-3 (Management review).", packs=[acme]) == []
    assert check_brief_citations(brief, packs=[acme]) == [
        "The brief approves C1 (ACME Internal Control Catalogue gov-3), which is withdrawn (see gov-1)."]


def test_an_imported_800_53_catalogue_is_checked_with_its_own_titles_and_status(nist_next):
    brief = _brief(("NIST SP 800-53 Rev. 5.9", "AC-2", "Account Management and Review"))
    packs = {nist_next.key: nist_next}
    assert check_draft(brief, "Accounts per AC-2 (Account Management and Review).", packs=packs) == []
    [issue] = check_draft(brief, "Accounts per AC-2 (Access Enforcement).", packs=packs)
    assert issue.type == ALT and "the title of AC-3" in issue.detail
    [issue] = check_draft(brief, "Inactive accounts per AC-2(5).", packs=packs)
    assert issue.type == ALT and "NIST SP 800-53 Rev. 5.9" in issue.detail and "withdrawn" in issue.detail
    # without the imported pack the brief's framework name falls back to the shipped 800-53 (5.0.1)
    [issue] = check_draft(brief, "Inactive accounts per AC-2(5).")
    assert issue.type == INV


def test_an_imported_partial_csf_has_only_its_own_ids(csf_part):
    brief = _brief(("CSF 2.0 Govern and Protect", "PR.AA-01", "Identities and credentials are managed"))
    assert check_draft(brief, "Identities are managed per PR.AA-01.", packs=[csf_part]) == []
    [issue] = check_draft(brief, "Monitoring follows DE.CM-01.", packs=[csf_part])
    assert issue.type == INV and "does not exist in CSF 2.0 Govern and Protect" in issue.detail


def test_a_shipped_approval_and_an_imported_one_live_side_by_side(csf_part):
    brief = _brief(("NIST CSF 2.0", "DE.CM-01", "Networks are monitored"),
                   ("CSF 2.0 Govern and Protect", "PR.AA-01", "Identities and credentials are managed"))
    assert check_draft(brief, "PR.AA-01 and DE.CM-01 are both covered.", packs=[csf_part]) == []


def test_the_orchestrator_gate_and_the_recap_take_the_same_packs(acme):
    brief = _brief(("ACME Internal Control Catalogue", "GOV-1", "Security policy"))
    gate = draft_gate([acme])
    assert gate(brief, "Per GOV-1.") == [] and _found(gate(brief, "Per HR-1.")) == [(INV, "HR-1")]
    assert _found(check_recap(brief, "The policy cites GOV-1 and HR-2.", packs=[acme])) == [(INV, "HR-2")]


def test_a_numeric_catalogue_counts_ids_only_after_its_name():
    pack = pack_from_dict({"key": "nist-800-171r2", "name": "NIST SP 800-171 Rev. 2", "aliases": ["SP 800-171"],
                           "entries": [{"ref": "3.1", "kind": "family", "title": "Access Control"},
                                       {"ref": "3.1.1", "kind": "requirement", "parent": "3.1", "title": ""},
                                       {"ref": "3.1.2", "kind": "requirement", "parent": "3.1", "title": ""}]})
    brief = _brief(("NIST SP 800-171 Rev. 2", "3.1.1", "Limit system access"))
    assert check_draft(brief, "Version 3.1.2 of the agent ships on 3.1.2026; see section 3.1.2.", packs=[pack]) == []
    assert check_draft(brief, "NIST SP 800-171 Rev. 2 3.1.1 is met.", packs=[pack]) == []
    assert _found(check_draft(brief, "SP 800-171 requirement 3.1.2 is met.", packs=[pack])) == [(INV, "3.1.2")]



def test_prepare_builds_each_packs_readers_ahead_of_the_first_check(acme):
    for cached in (catalogue_ids, _recognisable_titles, _grammar):
        cached.cache_clear()
    prepare([acme])
    every = [*load_packs().values(), acme]
    assert catalogue_ids.cache_info().currsize == len(every)
    assert _recognisable_titles.cache_info().currsize == len(every)
    assert _grammar.cache_info().currsize == 1
    built = (catalogue_ids.cache_info().currsize, _grammar.cache_info().currsize)
    hits = catalogue_ids.cache_info().hits
    brief = Brief(task="t", judgments=[], citations=[],
                  steps=[{"index": 1, "title": "Scope", "content_spec": "The scope."}])
    check_draft(brief, f'{acme.name} AC-1 says "the organisation shall set an access control policy"; so does '
                       'ISO/IEC 27001:2022 A.5.1.', packs=[acme])
    # The check used what was prepared and built nothing more.
    assert (catalogue_ids.cache_info().currsize, _grammar.cache_info().currsize) == built
    assert catalogue_ids.cache_info().hits > hits
