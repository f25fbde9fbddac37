"""Unsourced specifics, the reading alone: what is a specific, and which spellings are one fact."""
from __future__ import annotations

import pytest

from bench.unsourced import measure
from pipeline.context import Context, Document, Evidence, FrameworkEntry, HistoryMessage, ReleasedStep
from pipeline.schemas import Brief
from pipeline.specifics import SourceIndex, find_specifics, list_specifics


def found(text: str) -> list[tuple[str, str]]:
    return [(s.kind, s.text) for s in find_specifics(text)]


def unsourced(draft: str, **sources) -> list[str]:
    ctx = Context(task=sources.pop("task", "Draft a note"), **sources)
    return [u["text"] for u in list_specifics(draft, SourceIndex.of(ctx, None)).unsourced]


@pytest.mark.parametrize("text, expected", [
    ("Notify within 72 hours.", [("duration", "72 hours")]),
    ("Keep it for six years.", [("duration", "six years")]),
    ("We have 37 staff on 3 sites.", [("quantity", "37 staff"), ("quantity", "3 sites")]),
    ("About 25% of laptops.", [("percentage", "25%")]),
    ("A budget of €12,000.", [("amount", "€12,000")]),
    ("Approved on 14 March 2027.", [("date", "14 March 2027")]),
    ("The DPO is Jane Roe.", [("person", "Jane Roe")]),
    ("Hosted by Acme Cloud Services Ltd.", [("organisation", "Acme Cloud Services Ltd")]),
    ("Write to dpo@acme.example.", [("email", "dpo@acme.example")]),
    ("Call +33 1 42 68 53 00.", [("phone", "+33 1 42 68 53 00")]),
])
def test_it_reads_each_kind_of_specific(text, expected):
    assert found(text) == expected


@pytest.mark.parametrize("text", [
    "## 3.2 Retention\n\n1. Scope\n2. Roles",                  # the document's own numbering
    "See Step 2 and section 4.1, Table 3 and Article 30.",   # labels, not counts
    "Controls A.5.9 and A.8.13 of ISO/IEC 27001:2022 apply.", # citations and a framework name
    "Art. 33(1) GDPR and Regulation (EU) 2016/679.",
    "NIST SP 800-53 Rev. 5 AC-2(1) and CSF 2.0 PR.AA-01.",
    "See https://example.org/2024/report-37-sites for details.",  # a web address is the integrity gate's
    "The Information Security Policy applies to the Data Protection Officer.",
    "All 6 steps were released: 5 passed, 1 after a re-render; 4 references approved.",  # a recap's own counts
])
def test_it_reads_no_specific_in_numbering_citations_or_headings(text):
    assert found(text) == []


@pytest.mark.parametrize("draft, source", [
    ("within 24 hours", "within 24 h"),
    ("within a day", "within 24 hours"),
    ("6 years", "six years"),
    ("a six-year retention", "retained for 6 years"),
    ("on 14/03/2027", "on 14 March 2027"),
    ("on 2027-03-14", "on 14.03.2027"),
    ("in March 2027", "approved on 14 March 2027"),
    ("1,200 users", "1 200 users"),
    ("37 staff", "a staff of 37"),
    ("37 employees", "37 people"),
    ("25 %", "25 per cent"),
    ("€2,500", "EUR 2,500"),
    ("reviewed annually", "reviewed every 12 months"),
    ("Claire Martin", "Martin, Claire"),
    ("C. Martin", "Claire Martin"),
    ("Claire Martin", "C. Martin"),
    ("Élodie Müller", "ELODIE MULLER"),
    ("Ms Martin", "Claire Martin"),
    ("Acme Ltd", "ACME Limited"),
    ("Acme Ltd", "our host, Acme,"),
    ("DPO@Acme.example", "dpo@acme.example"),
    ("+33 1 42 68 53 00", "01.42.68.53.00"),
])
def test_another_spelling_of_a_sourced_fact_is_sourced(draft, source):
    assert find_specifics(draft), draft
    assert unsourced(draft, memories=(source,)) == []


@pytest.mark.parametrize("draft, source", [
    ("within 72 hours", "within 24 h"),
    ("within 30 days", "within one month"),     # days and months never convert
    ("3 working days", "3 days"),
    ("6 months", "six years"),
    ("on 15/03/2027", "on 14 March 2027"),
    ("1,200 users", "1.200 users"),             # one reading of a separator, never both
    ("38 staff", "37 staff"),
    ("26%", "25%"),
    ("€2,600", "EUR 2,500"),
    ("$2,500", "EUR 2,500"),
    ("Claude Martin", "Claire Martin"),
    ("Claire Dupont", "Claire Martin"),
    ("Northwind Ltd", "Acme Ltd"),
    ("dpo@acme.example", "dpo@acme.test"),
    ("+33 1 42 68 53 01", "01 42 68 53 00"),
])
def test_a_different_value_is_unsourced(draft, source):
    assert unsourced(draft, memories=(source,)) == [find_specifics(draft)[0].text]


def test_each_source_is_linked_with_its_kind_ref_and_passage():
    ctx = Context(
        task="Draft the breach note for 3 sites",
        memories=("Retention is six years.",),
        files=(Document("policy.md", "# Policy\n\nProcessors notify the controller within 24 h.\nOther line."),),
        evidence=(Evidence("E1", "https://example.org/a", "A page", "The fee is $49 per month."),),
        history=(HistoryMessage("user", "Our DPO is Claire Martin."),
                 HistoryMessage.answer((ReleasedStep(1, "Scope", "It covers 37 laptops."),), "", "completed")),
        frameworks=(FrameworkEntry("GDPR", "Art. 33", "Notification within 72 hours"),))
    brief = Brief(task="Breach note", judgments=["Review every 12 months."],
                  steps=[{"index": 1, "title": "Scope", "content_spec": "State the scope."}])
    listing = list_specifics(
        "Notify within 24 hours, keep records 6 years, covering 3 sites and 37 laptops, for $49 a month; "
        "Claire Martin reviews it annually; the authority within 72 hours.", SourceIndex.of(ctx, brief))
    assert listing.unsourced == []
    by_ref = {s["ref"]: (s["kind"], s["text"], s["specifics"]) for s in listing.sources}
    assert by_ref == {
        "policy.md": ("file", "Processors notify the controller within 24 h.", ["24 hours"]),
        "memory 1": ("memory", "Retention is six years.", ["6 years"]),
        "the task": ("conversation", "Draft the breach note for 3 sites", ["3 sites"]),
        "an earlier answer of this conversation (1), step 1: Scope": ("conversation", "It covers 37 laptops.", ["37 laptops"]),
        "E1: A page": ("evidence", "The fee is $49 per month.", ["$49"]),
        "message 1 of the conversation": ("conversation", "Our DPO is Claire Martin.", ["Claire Martin"]),
        "judgment 1 of the brief": ("brief", "Review every 12 months.", ["annually"]),
        "GDPR Art. 33": ("framework", "Notification within 72 hours", ["72 hours"]),
    }


def test_a_long_passage_is_cut_around_the_specific():
    text = "word " * 200 + "kept for 90 days " + "word " * 200
    [source] = list_specifics("kept 90 days", SourceIndex.of(Context(task="t", files=(Document("a.md", text),)), None)).sources
    assert "90 days" in source["text"] and len(source["text"]) < 340 and source["text"].startswith("…")


def test_the_same_specific_written_twice_is_listed_once():
    assert unsourced("Within 72 hours. Again: within 72 hours.") == ["72 hours"]


def test_the_benchmark_meets_its_targets_on_a_small_draw():
    result = measure(cases_per_kind=12, seed=7)
    for kind, row in result["by_kind"].items():
        assert row["listed"] / row["invented"] >= .95, kind
        assert row["wrong"] / row["faithful"] <= .05, kind


def test_a_sources_specifics_are_read_once_in_a_process_whatever_the_runs(monkeypatch):
    """Every run of a workspace is given its memories and files again: the second index reads no
    source it has read before, and finds the same."""
    from pipeline.specifics import sources

    monkeypatch.setattr(sources, "_remembered", {})  # what earlier tests of this process read is not this test's
    ctx = Context(task="Review the register", memories=("Owner: Claire Martin, 12 servers.",),
                  files=(Document("a.md", "Kept 90 days; reported within 72 hours to the CNIL."),))
    first = SourceIndex.of(ctx, None)
    read = []
    monkeypatch.setattr(sources, "find_specifics", lambda text, **kw: read.append(text) or find_specifics(text, **kw))
    again = SourceIndex.of(Context(task="Another task", memories=ctx.memories, files=ctx.files), None)
    assert read == ["Another task"]
    assert again.keys == first.keys and len(first.keys) >= 4  # neither task states a specific
    monkeypatch.setattr(sources, "REMEMBERED_CHARS", 10)  # past the cap a text is read every time
    SourceIndex.of(Context(task="A third, longer task"), None)
    SourceIndex.of(Context(task="A third, longer task"), None)
    assert read[-2:] == ["A third, longer task"] * 2
