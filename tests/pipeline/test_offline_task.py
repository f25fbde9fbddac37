"""The offline engine's task reader: document, form, audience, subject and explicit requirements."""
from __future__ import annotations

import pytest

from pipeline.providers.offline.task import read_task


@pytest.mark.parametrize("task, doc", [
    ("Draft an email to the board explaining our SOC 2 readiness", "stakeholder_email"),
    ("Map our access control practices to NIST CSF 2.0 PR.AA", "mapping"),
    ("Draft an internal audit plan for ISO 27001 clauses 9.2 and 9.3", "audit_plan"),
    ("Gap assessment against SOC 2 for our leadership team", "gap_assessment"),
    ("Incident report for the phishing incident of 3 March 2026", "incident_report"),
    ("Incident response procedure for the platform team", "incident_response"),
    ("Build our asset register from the inventory", "asset_register"),
    ("Build a risk register from our risk list", "risk_assessment"),
    ("Statement of applicability for A.5.15, A.5.18 and A.8.5", "soa"),
    ("Prepare the record of processing activities for our payroll", "ropa"),
    ("Draft a letter to employees explaining who processes their payroll data", "stakeholder_email"),
])
def test_it_reads_the_document_type(task, doc):
    assert read_task(task).doc.key == doc


def test_it_reads_an_email_to_the_board_about_a_subject_of_its_own():
    task = read_task("Draft an email to the board explaining our SOC 2 readiness")
    assert (task.audience, task.greeting, task.subject) == ("the board", "Dear members of the board,", "SOC 2 readiness")
    assert [p.key for p in task.frameworks] == ["soc2-tsc-2017"] and not task.is_letter


def test_it_reads_a_letter_and_its_subject():
    task = read_task("Draft a letter to employees explaining who processes their payroll data and how to contact our DPO")
    assert task.is_letter and task.audience == "all staff"
    assert task.subject == "Who processes their payroll data and how to contact our DPO"


def test_it_reads_every_reference_the_task_names_as_the_citation_gate_does():
    task = read_task("Draft an internal audit plan for ISO 27001 clauses 9.2 and 9.3")
    assert [(f.pack_key, f.ref) for f in task.refs] == [("iso27001-2022", "9.2"), ("iso27001-2022", "9.3")]
    soa = read_task("Statement of applicability for A.5.15, A.5.18 and A.8.5")
    assert [f.ref for f in soa.refs] == ["A.5.15", "A.5.18", "A.8.5"] and soa.frameworks == ()


def test_it_reads_the_organisation_the_task_describes():
    task = read_task("Write an information security policy for our 40-person SaaS company")
    assert (task.headcount, task.org_kind, task.sector) == ("40", "SaaS company", "software (SaaS)")
    plain = read_task("Write an information security policy for the company")
    assert (plain.headcount, plain.org_kind, plain.sector) == ("", "", "")


def test_it_reads_a_date_in_the_task():
    assert read_task("Incident report for the phishing incident of 3 March 2026").date == "3 March 2026"
