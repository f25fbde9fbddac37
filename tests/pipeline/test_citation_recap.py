"""The summarizer's recap gets the gate's mechanical checks against the brief."""
from pipeline.citations import check_recap
from pipeline.schemas import Brief, Citation


def _brief():
    return Brief(task="Access control policy", judgments=["Scope: all production systems"],
                 steps=[{"index": 1, "title": "Policy", "content_spec": "Policy statements"},
                        {"index": 2, "title": "Email", "content_spec": "Announce the policy"}],
                 citations=[Citation(id="C1", framework="ISO/IEC 27001:2022", ref="A.5.15", title="Access control"),
                            Citation(id="C2", framework="GDPR", ref="Art. 32(1)", title="Security of processing")])


def test_a_faithful_recap_has_no_findings():
    recap = ("The policy (step 1, passed) sets access rules under A.5.15 (Access control) and the security "
             "measures of Art. 32(1) GDPR; step 2 announces it to staff on 2026-03-02.")
    assert check_recap(_brief(), recap) == []


def test_a_recap_inventing_citations_is_reported():
    recap = ("All steps passed. The document applies ISO/IEC 27001:2022 A.99.1 and GDPR Art. 123, "
             "so the organisation is certified compliant.")
    findings = check_recap(_brief(), recap)
    assert [(f.type, f.quote) for f in findings] == [("invented_citation", "A.99.1"), ("invented_citation", "Art. 123")]
    assert "does not exist" in findings[0].detail


def test_a_recap_altering_an_approved_citation_is_reported():
    [finding] = check_recap(_brief(), "Step 1 follows A.5.15 (Inventory of information and other associated assets).")
    assert finding.type == "altered_citation" and "the title of A.5.9" in finding.detail


def test_an_empty_recap_has_no_findings():
    assert check_recap(_brief(), "") == [] and check_recap(_brief(), None) == []
