"""Real published prose through the gate: it must pass when the brief approves what it cites.

- NIST SP 800-53 Rev. 5: every control's guidance paragraph from the OSCAL catalogue, with a brief
  approving the control itself and every control the paragraph links to (withdrawn ones too).
  The links are the catalogue's own markup, so the approved set does not come from the extractor.
- NIST CSF 2.0: a current-profile document per category written from the catalogue's own text
  (category statements, subcategory outcomes, implementation examples, withdrawn subcategories
  and where they went), in the forms people write: headings, tables, quoted outcomes.
"""
import json
import re
from functools import lru_cache
from pathlib import Path

import pytest

from pipeline.citations import check_draft, extract_citations
from pipeline.frameworks import get_pack
from pipeline.frameworks.refs import catalogue_ref, oscal_id_to_ref
from pipeline.schemas import Brief, Citation

OSCAL = Path(__file__).resolve().parents[1] / "fixtures" / "oscal"  # public domain, see SOURCE.md
NIST, CSF = "NIST SP 800-53 Rev. 5", "NIST CSF 2.0"
_LINK = re.compile(r"\[([^\]]*)\]\(#([^)]*)\)")


@lru_cache(maxsize=None)
def _catalog(name):
    return json.loads((OSCAL / name).read_text(encoding="utf-8"))["catalog"]


def _walk(items):
    for item in items:
        yield item
        yield from _walk(item.get("groups", []) + item.get("controls", []))


def _brief(framework, refs, titles, texts=None):
    texts = texts or {}
    return Brief(task="Write the document", steps=[{"index": 1, "title": "Document", "content_spec": "Write it"}],
                 citations=[Citation(id=f"C{i}", framework=framework, ref=ref, title=titles[ref] or ref,
                                     text=texts.get(ref)) for i, ref in enumerate(refs, 1)])


# ---- NIST SP 800-53 guidance ------------------------------------------------------------------

def _guidance(family):
    """(control, guidance as published with links, as plain text, approved refs) for one family."""
    nist = get_pack("nist-800-53r5")
    group = next(g for g in _catalog("NIST_SP-800-53_rev5_catalog-min_v5.0.1.json")["groups"] if g["id"] == family)
    for control in _walk(group["controls"]):
        for part in control.get("parts", []):
            if part["name"] != "guidance":
                continue
            linked = {oscal_id_to_ref(re.sub(r"_smt.*$", "", href)) for _, href in _LINK.findall(part["prose"])}
            approved = sorted(ref for ref in linked | {oscal_id_to_ref(control["id"])}
                              if nist.get(ref) and nist.get(ref).kind != "family")
            yield control["id"], part["prose"], _LINK.sub(r"\1", part["prose"]), approved


FAMILIES = [g["id"] for g in _catalog("NIST_SP-800-53_rev5_catalog-min_v5.0.1.json")["groups"]]


@pytest.mark.parametrize("family", FAMILIES)
def test_800_53_guidance_passes_when_the_brief_approves_what_it_cites(family):
    nist = get_pack("nist-800-53r5")
    titles = {ref: entry.title for ref, entry in nist.entries.items()}
    for control, published, plain, approved in _guidance(family):
        brief = _brief(NIST, approved, titles)
        for text in (plain, published):
            assert check_draft(brief, text) == [], (control, text)


@pytest.mark.parametrize("family", FAMILIES)
def test_800_53_guidance_citations_are_all_read(family):
    nist = get_pack("nist-800-53r5")
    for control, _, plain, approved in _guidance(family):
        read = {catalogue_ref("nist-800-53r5", f.ref) for f in extract_citations(plain)}
        linked = set(approved) - {oscal_id_to_ref(control)}
        assert linked <= read, (control, sorted(linked - read))


def test_the_guidance_corpus_is_large_and_cites_withdrawn_controls():
    nist = get_pack("nist-800-53r5")
    paragraphs = [item for family in FAMILIES for item in _guidance(family)]
    cited = {ref for _, _, _, approved in paragraphs for ref in approved}
    assert len(paragraphs) > 1000
    assert {"CA-3(1)", "CA-3(2)", "CA-3(3)", "AU-7(2)", "CA-3(5)"} <= {r for r in cited if nist.get(r).withdrawn}


def test_guidance_citing_a_control_the_brief_leaves_out_is_caught():
    titles = {ref: e.title for ref, e in get_pack("nist-800-53r5").entries.items()}
    control, _, plain, approved = next(item for item in _guidance("ca") if item[0] == "ca-7")
    assert "SI-4" in approved and "SI-4" in plain
    issues = check_draft(_brief(NIST, [ref for ref in approved if ref != "SI-4"], titles), plain)
    assert [(i.type, i.quote) for i in issues] == [("invented_citation", "SI-4")]


# ---- NIST CSF 2.0 -------------------------------------------------------------------------------

def _statement(item):
    return next((p.get("prose", "") for p in item.get("parts", []) if p["name"] in ("statement", "overview")), "")


def _withdrawn_to(item):
    if not any(p.get("name") == "status" and p.get("value") == "withdrawn" for p in item.get("props", [])):
        return None
    return [link["href"] for link in item.get("links", []) if link.get("rel") in ("incorporated_into", "moved_to")]


def _profiles():
    """(category, document, approved refs, texts) for every CSF 2.0 category, live or withdrawn."""
    for function in _catalog("NIST_CSF_v2.0_catalog-min.json")["groups"]:
        for category in function["controls"]:
            refs, texts = [function["id"], category["id"]], {}
            heading = f"## {function['title'].title()} ({function['id']}): {category['title']} ({category['id']})"
            moved = _withdrawn_to(category)
            if moved is not None:
                refs += moved
                parts = [heading, f"The {category['title']} category ({category['id']}) is withdrawn in CSF 2.0"
                         + (f"; see {', '.join(moved)}." if moved else ".")]
            else:
                texts[category["id"]] = _statement(category)
                parts = [heading, f"{category['id']} ({category['title']}) covers this: {_statement(category)}."]
            rows, notes, live = [], [], []
            for n, sub in enumerate(category.get("controls", [])):
                refs.append(sub["id"])
                texts[sub["id"]] = _statement(sub)
                sub_moved = _withdrawn_to(sub)
                if sub_moved is not None:
                    refs += [ref for ref in sub_moved if ref not in refs]
                    notes.append(f'{sub["id"]} ("{_statement(sub)}") was incorporated into {", ".join(sub_moved)}.')
                    continue
                live.append(sub)
                state = ("Implemented", "Partially implemented", "Planned")[n % 3]
                rows.append(f"| {sub['id']} | {_statement(sub)} | {state} |")
            if rows:
                parts.append("| Subcategory | Outcome | Current state |\n|---|---|---|\n" + "\n".join(rows))
            if live:
                quoted = [f'{live[0]["id"]} states that "{_statement(live[0])}".']
                if len(live) > 1:
                    quoted.append(f'As {live[1]["id"]} puts it, "{_statement(live[1])}".')
                parts.append(" ".join(quoted))
            examples = [p["prose"] for sub in live for p in sub.get("parts", []) if p["name"] == "example"][:3]
            if examples:
                parts.append("Examples we apply: " + " ".join(e.rstrip(".") + "." for e in examples))
            if notes:
                parts.append(" ".join(notes))
            yield category["id"], "\n\n".join(parts), list(dict.fromkeys(refs)), texts


CATEGORIES = list(_profiles())


@pytest.mark.parametrize("category, document, refs, texts", CATEGORIES, ids=[c[0] for c in CATEGORIES])
def test_csf_profiles_written_from_the_catalogue_pass(category, document, refs, texts):
    assert check_draft(_csf_brief(refs, texts), document) == [], document


def _csf_brief(refs, texts):
    """Approved with the catalogue's titles; subcategories have none, so their outcome stands in."""
    csf = get_pack("nist-csf-2.0")
    return _brief(CSF, refs, {ref: csf.get(ref).title or texts.get(ref) or ref for ref in refs}, texts)


def test_the_csf_corpus_covers_every_category_and_withdrawn_ids():
    assert len(CATEGORIES) == 34
    withdrawn = {ref for _, _, refs, _ in CATEGORIES for ref in refs if get_pack("nist-csf-2.0").get(ref).withdrawn}
    assert {"PR.AC-01", "PR.DS-03", "ID.GV-01"} <= withdrawn


def test_a_csf_outcome_quoted_for_the_wrong_subcategory_is_caught():
    category, document, refs, texts = next(c for c in CATEGORIES if c[0] == "PR.AA")
    wrong = document.replace(f'PR.AA-01 states that "{texts["PR.AA-01"]}"', f'PR.AA-01 states that "{texts["PR.AA-03"]}"')
    assert wrong != document
    [issue] = check_draft(_csf_brief(refs, texts), wrong)
    assert issue.type == "altered_citation" and issue.quote == "PR.AA-01"
