"""Offline documents that cover the whole set asked for, answer questions one by one and read the
workspace's own schemes: SoA ranges, questionnaires, records of processing, a processor's breach
duty, legend sheets, cross-framework mappings."""
from __future__ import annotations

import re

import pytest

from pipeline import events as ev
from pipeline.citations import check_recap
from pipeline.context import Context, Document
from pipeline.orchestrator import Orchestrator
from pipeline.providers.offline import OfflineProvider
from pipeline.providers.offline.summarizer import recap
from pipeline.schemas import Brief, Citation, StepPlan
from pipeline.topology import ROLES, parse_shorthand

ISO, GDPR, CSF = "ISO/IEC 27001:2022", "GDPR", "NIST CSF 2.0"
# A veterinary-clinic software company that is a processor for the clinics using its product.
MEMORIES = (
    "Vetora SARL is a veterinary practice-software company with 48 employees, based in Bordeaux.",
    "Our DPO is Marc Olivier (external, Cabinet Lenoir).",
    "Sandrine Roy, our IT manager, also keeps the asset inventory.",
    "Client and pet records are hosted by Nuvia Cloud in Toulouse.",
    "For the veterinary clinics that use our software we act as a processor; for our own staff and prospects we are "
    "the controller.",
)
POLICY = Document("security-policy.docx", "# Vetora security policy\n\n"
                  "Client data is encrypted at rest with AES-256.\n"
                  "Access rights are reviewed every quarter by the system owners.\n"
                  "When a personal data breach affects data we process for a clinic, we inform that clinic within 48 "
                  "hours of becoming aware of it.\n", "p1")
SUPPLIERS = Document("suppliers.csv", "Supplier,Service,Personal data,Country,Criticality\n"
                     "Nuvia Cloud,Hosting of the practice software,Pet owners' contact and pet health records,France,Critical\n"
                     "Smsly Inc,Appointment reminders by SMS,Pet owners' phone numbers,United States,High\n"
                     "Paylane,Payroll,Employee identity and bank details,France,Medium\n", "s1")
INVENTORY = Document("assets.xlsx", "## Sheet: Assets\n\n| Asset ID | Asset | Owner | Classification |\n| --- | --- | --- | --- |\n"
                     "| V-01 | Practice database | Sandrine Roy | L3 |\n| V-02 | Marketing site | Marketing | L0 |\n"
                     "| V-03 | Payroll exports | HR | L2 |\n\n## Sheet: Key\n\n| Level | Name | Handling |\n"
                     "| --- | --- | --- |\n| L0 | Open | none |\n| L1 | Staff only | intranet |\n| L2 | Personal | need to know |\n"
                     "| L3 | Client records | named access, logged |\n| L4 | Board only | two-person rule |\n", "a1")


def _ctx(task: str, frameworks=(ISO, GDPR), files=(POLICY, SUPPLIERS, INVENTORY), uploads=()) -> Context:
    return Context(task=task, memories=MEMORIES, files=files, uploads=uploads, workspace_name="Vetora",
                   enabled_frameworks=frameworks)


async def _run(ctx: Context) -> tuple[Brief, str, list]:
    provider = OfflineProvider()
    orchestrator = Orchestrator(ctx, parse_shorthand("offline"), {role: provider for role in ROLES})
    events = [event async for event in orchestrator.events()]
    document = "\n\n".join(e.payload.content for e in events if e.type == ev.STEP_RELEASED)
    return orchestrator.brief, document, events


def _rows(document: str) -> list[str]:
    return [line for line in document.splitlines() if line.startswith("| ") and not line.startswith("| ---")]


@pytest.mark.parametrize("task", ["Statement of Applicability for Annex A 5", "SoA for A.5.x controls",
                                  "Statement of applicability covering A.5.1 to A.5.37"])
async def test_an_soa_of_a_range_covers_every_control_and_its_recap_has_no_finding(task):
    brief, document, events = await _run(_ctx(task))
    assert [c.ref for c in brief.citations] == [f"A.5.{n}" for n in range(1, 38)]
    for n in range(1, 38):
        assert re.search(rf"^\| ISO/IEC 27001:2022 A\.5\.{n} \(", document, re.M), n
    summary = next(e.payload for e in events if e.type == ev.SUMMARY_READY)
    assert summary.findings == [] and "all 37 controls asked for are drafted" in summary.summary


async def test_an_soa_that_names_no_range_lists_all_of_annex_a_over_several_steps():
    brief, document, _ = await _run(_ctx("Statement of applicability"))
    assert len([c for c in brief.citations if c.ref.startswith("A.")]) == 93
    assert len([s for s in brief.steps if s.title.startswith("Applicability table")]) == 3
    assert all(len(s.content_spec) <= 4000 for s in brief.steps)
    assert "A.8.34 (" in document and "A.6.8 (" in document


def test_the_recap_never_cites_what_the_brief_did_not_approve():
    brief = Brief(task="SoA for A.5.1 to A.5.37", steps=[StepPlan(index=1, title="Table", content_spec="x")],
                  citations=[Citation(id="C1", framework=ISO, ref="A.5.1", title="Policies for information security")])
    text = recap(brief, [{"index": 1, "title": "Table", "badge": "passed", "content": "A.5.1"}])
    assert check_recap(brief, text) == [] and "A.5.37" not in text


QUESTIONS = ("Where is client data hosted?", "Who is your data protection officer?", "Is data encrypted at rest?",
             "How quickly will you tell us about a personal data breach?", "Do you run a bug bounty programme?")


async def test_a_typed_questionnaire_gets_one_answer_per_question():
    task = "Answer this clinic's security questionnaire:\n" + "\n".join(f"{n}. {q}" for n, q in enumerate(QUESTIONS, 1))
    _, document, _ = await _run(_ctx(task))
    rows = [r for r in _rows(document) if not r.startswith("| No.")]
    assert [r.split(" | ")[1] for r in rows] == list(QUESTIONS)
    answers = dict(zip(QUESTIONS, (r.split(" | ")[2] for r in rows)))
    assert "Nuvia Cloud" in answers[QUESTIONS[0]] and "Marc Olivier" in answers[QUESTIONS[1]]
    assert "AES-256" in answers[QUESTIONS[2]] and "48 hours" in answers[QUESTIONS[3]]
    assert answers[QUESTIONS[4]] == "Not answered: no fact in the workspace."
    assert "Question 5: Do you run a bug bounty programme?" in document
    assert "Purpose and what counts as a breach" not in document  # not a breach procedure instead


async def test_a_questionnaire_attached_as_a_workbook_is_answered_row_by_row():
    workbook = Document("questionnaire.xlsx", "## Sheet: About\n\n| Item | Note |\n| --- | --- |\n| From | a clinic |\n\n"
                        "## Sheet: Questions\n\n| Ref | Question | Answer |\n| --- | --- | --- |\n"
                        + "".join(f"| Q{n} | {q} |  |\n" for n, q in enumerate(QUESTIONS, 1)), "q1", "upload")
    _, document, _ = await _run(_ctx("Please complete the customer questionnaire in the attached workbook",
                                     uploads=(workbook,)))
    rows = [r for r in _rows(document) if r.startswith("| Q")]
    assert [r.split(" | ")[0] for r in rows] == [f"| Q{n}" for n in range(1, 6)]
    assert "5 questions (from questionnaire.xlsx): 4 answered" in document


async def test_a_record_of_processing_as_controller_lists_the_suppliers_that_receive_its_own_peoples_data():
    brief, document, _ = await _run(_ctx("Record of processing activities as controller"))
    assert "Paylane" in "\n".join(_rows(document)) and "Smsly Inc" not in document
    assert "Marc Olivier (DPO; external, Cabinet Lenoir)" in document
    assert "Absence management" not in document  # no template example where the workspace has real rows
    assert "Art. 30(2)" not in {c.ref for c in brief.citations}


async def test_a_record_kept_as_processor_is_written_when_it_is_cited():
    brief, document, _ = await _run(_ctx("Record of processing we carry out on behalf of the clinics"))
    assert "Art. 30(2)" in {c.ref for c in brief.citations}
    rows = "\n".join(_rows(document))
    assert "veterinary clinics that use our software" in rows
    assert "Nuvia Cloud" in rows and "Smsly Inc" in rows and "Paylane" not in rows
    assert "Yes: United States" in rows and "AES-256" in document


async def test_a_processors_breach_procedure_notifies_the_controller_within_the_companys_deadline():
    brief, document, _ = await _run(_ctx("Personal data breach procedure for the data we process on behalf of clinics"))
    assert "Art. 33(2)" in {c.ref for c in brief.citations}
    notice = next(r for r in _rows(document) if "the controller" in r)
    assert "Without undue delay" in notice and "within 48 hours" in notice
    assert "supervisory authority" not in notice and "72 hours of awareness" not in document
    assert "Sandrine Roy" in document  # staff report to the IT manager the memory names


async def test_a_registers_own_legend_sheet_replaces_the_generic_classification():
    _, document, _ = await _run(_ctx("Build our asset register from the inventory"))
    rows = "\n".join(_rows(document))
    assert "| L4 | Board only | two-person rule |" in rows and "| L3 | Client records |" in rows
    assert "approved for publication" not in document and "Restricted" not in rows


async def test_a_cross_framework_mapping_puts_each_requirement_beside_its_counterparts():
    _, document, _ = await _run(_ctx("Map our ISO 27001 access controls to NIST CSF 2.0", frameworks=(ISO, CSF)))
    row = next(r for r in _rows(document) if "A.5.17 (" in r)
    assert "NIST CSF 2.0 PR.AA" in row.split(" | ")[1]


async def test_a_risk_register_with_no_risk_list_starts_from_the_most_sensitive_assets():
    _, document, _ = await _run(_ctx("Risk register with likelihood and impact"))
    risks = [r for r in _rows(document) if r.startswith("| R-0") and "Practice database" in r]
    assert risks and "(L3)" in risks[0] and "Sandrine Roy" in risks[0]
    assert "Phishing leads to account takeover" not in document  # no generic example where the workspace has assets
    assert "Marketing site" not in "\n".join(_rows(document)[:4])  # the most sensitive first


async def test_an_access_review_memo_with_no_systems_file_lists_the_registers_systems_and_owners():
    _, document, _ = await _run(_ctx("Memo to system owners launching the access review"))
    assert "| Practice database | Sandrine Roy | L3 |" in document
    assert "Access is reviewed every quarter by the system owners." in document


async def test_a_breach_procedure_of_a_company_that_is_also_a_processor_covers_both_duties():
    _, document, _ = await _run(_ctx("Personal data breach procedure"))
    rows = _rows(document)
    assert any("supervisory authority" in r and "72 hours" in r for r in rows)  # its own data
    assert any("the controller" in r and "within 48 hours" in r for r in rows)  # its customers' data


async def test_a_question_about_a_role_is_answered_by_the_person_named_for_it():
    _, document, _ = await _run(_ctx("Answer these questions: Who is your IT manager? Who is your DPO?"))
    answers = [r.split(" | ")[2] for r in _rows(document) if r.startswith("| 1") or r.startswith("| 2")]
    assert "Sandrine Roy" in answers[0] and "Marc Olivier" in answers[1]


async def test_a_retention_schedule_without_periods_lists_the_records_the_workspace_holds():
    _, document, _ = await _run(_ctx("Retention schedule for our records"))
    rows = "\n".join(_rows(document))
    assert "| Practice database | Sandrine Roy | to be confirmed |" in rows
    assert "| Payroll | Paylane |" in rows and "| Appointment reminders by SMS | Smsly Inc |" in rows


async def test_a_retention_schedule_gives_each_period_the_workspace_states_with_its_start():
    ctx = _ctx("Retention schedule")
    ctx = Context(task=ctx.task, memories=MEMORIES + ("Invoices are kept for 10 years after the end of the financial "
                                                      "year; call recordings are kept for 60 days.",),
                  files=ctx.files, enabled_frameworks=ctx.enabled_frameworks)
    _, document, _ = await _run(ctx)
    assert "| Invoices | 10 years | the end of the financial year |" in document
    assert "| Call recordings | 60 days | creation of the record |" in document


async def test_a_continuity_test_plan_without_an_impact_analysis_tests_the_most_sensitive_systems():
    _, document, _ = await _run(_ctx("Business continuity test plan for 2027"))
    tests = [r for r in _rows(document) if "test" in r.lower() and "2027" in r]
    assert tests[0].startswith("| Practice database | Full recovery or failover test | Q1 2027 |")


async def test_a_practice_is_found_by_its_concept_when_it_shares_no_word_with_the_requirement():
    ctx = Context(task="Statement of applicability for A.8.13", memories=MEMORIES + (
        "Nightly snapshots go to a second region and are restored once a quarter.",), files=(POLICY,),
        enabled_frameworks=(ISO,))
    _, document, _ = await _run(ctx)
    row = next(r for r in _rows(document) if "A.8.13 (" in r)
    assert "Nightly snapshots go to a second region" in row and row.endswith("| Implemented |")
