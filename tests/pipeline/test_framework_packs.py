"""Framework packs: counts, withdrawn entries, name and ref normalisation, OSCAL reproduction."""
import json
from collections import Counter
from pathlib import Path

import pytest

from pipeline.frameworks import (SHIPPED_FRAMEWORKS, DATA_DIR, canonical_ref, get_pack, load_packs,
                                 pack_for_framework_name, pack_from_dict, pack_from_file)
from pipeline.frameworks.build_packs import NIST_CATALOGUES, build_nist_packs
from pipeline.frameworks.oscal import pack_from_oscal
from pipeline.frameworks.packset import PackSet

OSCAL_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "oscal"  # public domain, see SOURCE.md


def _kinds(key, status=None):
    return Counter(e.kind for e in get_pack(key).entries.values() if status in (None, e.status))


def test_it_ships_every_pack_with_its_display_name():
    names = {key: pack.name for key, pack in load_packs().items()}
    assert names == {"iso27001-2022": "ISO/IEC 27001:2022", "iso27001-2013": "ISO/IEC 27001:2013", "gdpr": "GDPR",
                     "nist-800-53r5": "NIST SP 800-53 Rev. 5", "nist-csf-2.0": "NIST CSF 2.0",
                     "soc2-tsc-2017": "SOC 2 TSC 2017"}
    assert "iso27001-2013" not in SHIPPED_FRAMEWORKS and len(SHIPPED_FRAMEWORKS) == 5


def test_it_has_93_annex_a_controls_in_four_themes():
    pack = get_pack("iso27001-2022")
    controls = [e for e in pack.entries.values() if e.kind == "control"]
    assert len(controls) == 93
    assert Counter(e.parent for e in controls) == {"A.5": 37, "A.6": 8, "A.7": 14, "A.8": 34}
    assert pack.get("A.5.9").title == "Inventory of information and other associated assets"
    assert pack.get("A.5.15").title == "Access control"


def test_it_has_the_2022_clauses_with_their_new_and_swapped_numbers():
    pack = get_pack("iso27001-2022")
    for ref in ["4.1", "4.4", "5.3", "6.1.1", "6.1.3", "6.3", "7.5.3", "9.2.1", "9.2.2", "9.3.3"]:
        assert pack.get(ref) is not None, ref
    assert pack.get("10.1").title == "Continual improvement"
    assert pack.get("10.2").title == "Nonconformity and corrective action"
    old = get_pack("iso27001-2013")
    assert old.get("10.1").title == "Nonconformity and corrective action" and old.get("6.3") is None


def test_it_has_114_three_level_controls_in_the_2013_annex():
    pack = get_pack("iso27001-2013")
    controls = [e for e in pack.entries.values() if e.kind == "control"]
    assert len(controls) == 114 and all(e.ref.count(".") == 3 for e in controls)
    assert {e.ref.split(".")[1] for e in controls} == {str(n) for n in range(5, 19)}
    assert pack.get("A.9.2.1").title == "User registration and de-registration"


def test_it_has_99_gdpr_articles_11_chapters_and_173_recitals():
    kinds = _kinds("gdpr")
    assert kinds == {"article": 99, "chapter": 11, "recital": 173}
    pack = get_pack("gdpr")
    assert pack.get("Art. 30").title == "Records of processing activities"
    assert pack.get("Art. 30").parent == "Chapter IV"
    assert pack.get("Chapter V").title.startswith("Transfers of personal data")
    assert pack.get("Recital 173") and not pack.get("Recital 174")


def test_it_has_61_soc2_criteria():
    pack = get_pack("soc2-tsc-2017")
    criteria = [e.ref for e in pack.entries.values() if e.kind == "criterion"]
    assert len(criteria) == 61
    assert sum(r.startswith("CC") for r in criteria) == 33
    assert {"A1.3", "C1.2", "PI1.5", "P8.1", "CC9.2"} <= set(criteria)


def test_it_has_the_csf_functions_categories_and_subcategories():
    assert _kinds("nist-csf-2.0", "active") == {"function": 6, "category": 22, "subcategory": 106}
    pack = get_pack("nist-csf-2.0")
    assert pack.get("PR.DS-10") and pack.get("PR.DS-03").status == "withdrawn"
    assert [e.ref for e in pack.between("PR.DS-01", "PR.DS-11") if e.status == "active"] == \
        ["PR.DS-01", "PR.DS-02", "PR.DS-10", "PR.DS-11"]


def test_it_has_every_800_53_control_and_enhancement_including_withdrawn():
    active = _kinds("nist-800-53r5", "active")
    withdrawn = _kinds("nist-800-53r5", "withdrawn")
    assert active["family"] == 20
    # The 5.0.1 catalogue: 1,189 controls and enhancements, 182 of them withdrawn.
    assert active["control"] + active["enhancement"] + withdrawn["control"] + withdrawn["enhancement"] == 1189
    assert withdrawn["control"] + withdrawn["enhancement"] == 182


def test_it_points_withdrawn_ids_to_their_replacements():
    nist = get_pack("nist-800-53r5")
    assert nist.get("AC-13").replaced_by == ("AC-2", "AU-6")
    assert nist.get("SA-19(4)").replaced_by == ("SR-11(3)",)          # rel="moved-to"
    assert nist.get("AC-2(10)").replaced_by == ("AC-2",)              # into a statement part of AC-2
    withdrawn = [e for e in nist.entries.values() if e.status == "withdrawn"]
    assert sum(bool(e.replaced_by) for e in withdrawn) >= 170
    for entry in withdrawn:
        assert all(nist.get(ref) for ref in entry.replaced_by), entry
    csf = get_pack("nist-csf-2.0")
    assert csf.get("PR.AC-01").replaced_by == ("PR.AA-01", "PR.AA-05")
    assert csf.get("PR.AC").replaced_by == ("PR.AA",)


@pytest.mark.parametrize("name, key", [
    ("ISO/IEC 27001:2022", "iso27001-2022"), ("ISO 27001:2022", "iso27001-2022"), ("ISO 27001", "iso27001-2022"),
    ("ISO/IEC 27002:2022", "iso27001-2022"), ("iso/iec 27001 : 2022", "iso27001-2022"),
    ("ISO/IEC 27001:2013", "iso27001-2013"), ("GDPR", "gdpr"), ("Regulation (EU) 2016/679", "gdpr"),
    ("EU General Data Protection Regulation", "gdpr"), ("NIST SP 800-53 Rev. 5", "nist-800-53r5"),
    ("NIST 800-53", "nist-800-53r5"), ("NIST CSF 2.0", "nist-csf-2.0"), ("CSF 2.0", "nist-csf-2.0"),
    ("SOC 2", "soc2-tsc-2017"), ("SOC 2 TSC 2017", "soc2-tsc-2017"), ("Trust Services Criteria", "soc2-tsc-2017"),
])
def test_it_finds_the_pack_for_a_framework_name(name, key):
    assert pack_for_framework_name(name).key == key


def test_it_finds_no_pack_for_an_unknown_name():
    assert pack_for_framework_name("PCI DSS 4.0") is None and pack_for_framework_name("") is None


@pytest.mark.parametrize("key, written, canonical", [
    ("gdpr", "Art. 30(1)", "Art. 30(1)"), ("gdpr", "Article 30(1)(a)", "Art. 30(1)(a)"),
    ("gdpr", "Art 30 para. 1 lit. a", "Art. 30(1)(a)"), ("gdpr", "Article 5.1.f", "Art. 5(1)(f)"),
    ("gdpr", "point (a) of Article 6(1)", "Art. 6(1)(a)"), ("gdpr", "GDPR Art. 5(1)(f)", "Art. 5(1)(f)"),
    ("gdpr", "Recital 83", "Recital 83"), ("gdpr", "Chapter V", "Chapter V"),
    ("iso27001-2022", "A 5.9", "A.5.9"), ("iso27001-2022", "Annex A 5.9", "A.5.9"),
    ("iso27001-2022", "Annex A control 5.9", "A.5.9"), ("iso27001-2022", "A.5.9", "A.5.9"),
    ("iso27001-2022", "clause 9.2", "9.2"), ("iso27001-2022", "§ 9.2", "9.2"), ("iso27001-2022", "9.2.1", "9.2.1"),
    ("nist-800-53r5", "AC-02(01)", "AC-2(1)"), ("nist-800-53r5", "ac-2.1", "AC-2(1)"),
    ("nist-800-53r5", "AC-2 (1)", "AC-2(1)"), ("nist-800-53r5", "AC-2(1)(a)", "AC-2(1)(a)"),
    ("nist-800-53r5", "NIST SP 800-53 Rev. 5 AC-2(1)", "AC-2(1)"),
    ("nist-csf-2.0", "PR.AA-1", "PR.AA-01"), ("nist-csf-2.0", "PR.AA", "PR.AA"), ("nist-csf-2.0", "Protect (PR)", "PR"),
    ("soc2-tsc-2017", "CC 6.1", "CC6.1"), ("soc2-tsc-2017", "TSC CC6.1", "CC6.1"), ("soc2-tsc-2017", "A1.2", "A1.2"),
])
def test_it_normalises_refs_as_a_brief_writes_them(key, written, canonical):
    assert canonical_ref(key, written) == canonical


def test_it_returns_none_for_an_unreadable_ref():
    assert canonical_ref("nist-800-53r5", "XY-2") is None and canonical_ref("gdpr", "") is None


@pytest.mark.parametrize("filename, key, name, aliases", NIST_CATALOGUES)
def test_it_reproduces_the_shipped_nist_packs_from_oscal(filename, key, name, aliases):
    catalogue = json.loads((OSCAL_DIR / filename).read_text(encoding="utf-8"))
    converted = pack_from_oscal(catalogue, key, name)
    shipped = json.loads((DATA_DIR / f"{key}.json").read_text(encoding="utf-8"))
    assert converted["entries"] == shipped["entries"]
    assert build_nist_packs(OSCAL_DIR)[key] == shipped


def test_it_loads_a_pack_file_written_by_the_importer(tmp_path):
    catalogue = json.loads((OSCAL_DIR / "NIST_CSF_v2.0_catalog-min.json").read_text(encoding="utf-8"))
    target = tmp_path / "csf.json"
    target.write_text(json.dumps(pack_from_oscal(catalogue, "my-csf", "My CSF")))
    pack = pack_from_file(target)
    assert pack.key == "my-csf" and pack.get("PR.AA-01").parent == "PR.AA"
    assert list(pack.entries)[:2] == ["GV", "GV.OC"]


def test_it_ships_the_names_of_gdpr_points_as_short_names_only():
    pack = get_pack("gdpr")
    names = pack.point_names
    assert names["Art. 5(1)(c)"][0] == "data minimisation" and names["Art. 5(1)(e)"][0] == "storage limitation"
    assert names["Art. 6(1)(f)"][0] == "legitimate interests" and names["Art. 32(1)(a)"][0] == "pseudonymisation and encryption"
    assert names["Art. 5(2)"] == ("accountability",)
    for ref, written in names.items():
        assert canonical_ref("gdpr", ref) == ref and pack.lookup(ref) is not None, ref
        assert written and all(0 < len(name) <= 80 for name in written), ref


def test_it_reads_which_shipped_id_grammar_an_imported_catalogue_follows():
    catalogue = json.loads((OSCAL_DIR / "nist-csf-2.0-govern-protect.json").read_text(encoding="utf-8"))
    assert pack_from_dict(pack_from_oscal(catalogue, "my-csf", "My CSF")).scheme == "nist-csf-2.0"
    own = pack_from_dict({"key": "acme", "name": "ACME", "entries": [{"ref": "gov-1", "kind": "control"}]})
    assert own.scheme is None and get_pack("gdpr").scheme == "gdpr"


def test_a_pack_set_finds_an_imported_pack_by_its_own_name_first():
    imported = pack_from_dict({"key": "nist-800-53-next", "name": "NIST SP 800-53 Rev. 5.9",
                               "entries": [{"ref": "AC-2", "kind": "control", "title": "Account Management"}]})
    packs = PackSet([imported])
    assert packs.for_framework_name("NIST SP 800-53 Rev. 5.9") is imported
    assert packs.for_framework_name("NIST SP 800-53 Rev. 5").key == "nist-800-53r5"
    assert [p.key for p in packs.sharing_scheme("nist-800-53r5")] == ["nist-800-53r5", "nist-800-53-next"]
    assert PackSet().for_framework_name("NIST SP 800-53 Rev. 5.9").key == "nist-800-53r5"
