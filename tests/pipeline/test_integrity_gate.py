"""The integrity gate against a brief's approved evidence, and the schema and context it relies on."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest
from pydantic import ValidationError

from pipeline.checks import MechanicalChecks
from pipeline.context import Context, Evidence, render_context
from pipeline.integrity import IntegrityGate, check_brief_evidence, check_integrity
from pipeline.parsing import ReplyError, parse_brief, parse_verdict
from pipeline.providers.offline import OfflineProvider
from pipeline.providers.base import CompletionRequest
from pipeline.requests import brief_as_json, build_executor_request, build_verifier_input
from pipeline.research import EvidenceItem
from pipeline.schemas import Brief, Issue, verdict_json_schema
from pipeline.topology import RoleConfig
from tests import scripting
from tests.pipeline.helpers import of_type, run_scripted
from tests.scripting import PASS

PRICING = "https://vendor.example/pricing"


def brief(evidence: list[dict] | None) -> Brief:
    data = scripting.brief(1)
    if evidence is not None:
        data["evidence"] = evidence
    return Brief.model_validate(data)


def items() -> list[EvidenceItem]:
    return [
        EvidenceItem(id="E1", url=PRICING + "?utm_source=search", final_url=PRICING + "/", title="Pricing",
                     status="ok", text="Pro: $49 per user per month, billed yearly. Enterprise: CHF 1'200 a year."),
        EvidenceItem(id="E2", url="https://blog.example/cheap", title="A blog", status="ok",
                     text="We heard the Pro plan costs $29."),
        EvidenceItem(id="E3", url="https://vendor.example/eu", status="failed", reason="timeout"),
    ]


APPROVED = brief([{"id": "E1", "url": PRICING, "title": "Pricing"}, {"id": "E3", "url": "https://vendor.example/eu"}])


def kinds(issues: list[Issue]) -> list[tuple[str, str]]:
    return [(i.type, i.quote) for i in issues]


def test_a_draft_citing_an_approved_url_with_its_stated_price_passes():
    draft = f"The Pro plan costs **$49/month** per user ([pricing]({PRICING})); Enterprise is CHF 1 200 a year."
    assert check_integrity(APPROVED, draft, items()) == []


def test_the_url_before_and_after_redirects_and_its_normal_forms_all_count():
    for url in (PRICING, PRICING + "/", PRICING + "?utm_source=search", "HTTPS://VENDOR.example:443/pricing#pro"):
        assert check_integrity(APPROVED, f"See <{url}>.", items()) == [], url


def test_an_unapproved_url_and_an_unsupported_price_are_each_flagged_once():
    draft = ("Pro costs $29 (https://blog.example/cheap). Again: $29 at https://blog.example/cheap.\n"
             "Also see www.other.example/plans.")
    issues = check_integrity(APPROVED, draft, items())
    assert kinds(issues) == [("unapproved_url", "https://blog.example/cheap"),
                             ("unapproved_url", "www.other.example/plans"), ("unsupported_price", "$29")]
    assert "not one of the approved evidence URLs" in issues[0].detail
    assert "$29 (read as 29 $) is not stated in any approved evidence item" in issues[2].detail


def test_evidence_that_is_not_approved_or_could_not_be_read_supports_nothing():
    draft = "E2 says $29 (see https://blog.example/cheap); E3 is https://vendor.example/eu."
    assert kinds(check_integrity(APPROVED, draft, items())) == [
        ("unapproved_url", "https://blog.example/cheap"), ("unapproved_url", "https://vendor.example/eu"),
        ("unsupported_price", "$29")]


def test_a_price_with_the_right_amount_in_the_wrong_currency_is_unsupported():
    assert kinds(check_integrity(APPROVED, "Pro costs €49 a month.", items())) == [("unsupported_price", "€49")]


def test_numbers_inside_urls_are_not_prices_and_plain_numbers_are_never_flagged():
    draft = (f"Plans for 2025 ({PRICING}?utm_term=$99&utm_content=EUR49): 50 users, 20% discount, "
             "version 2.1, clause 9.2, call +1 555 123 4567.")
    assert check_integrity(APPROVED, draft, items()) == []


def test_without_an_evidence_set_the_gate_does_not_run_and_with_an_empty_one_it_does():
    draft = "Pro costs $999 at https://anywhere.example/."
    assert check_integrity(brief(None), draft, None) == []
    assert kinds(check_integrity(brief(None), draft, [])) == [("unapproved_url", "https://anywhere.example/"),
                                                              ("unsupported_price", "$999")]


def test_the_gate_reads_evidence_as_stored_json_and_checks_the_recap_the_same_way():
    stored = [item.as_json() for item in items()]
    recap = f"- The document quotes Pro at $49 per user ({PRICING}).\n- Enterprise pricing: $1,500."
    assert kinds(IntegrityGate(APPROVED, stored).check(recap)) == [("unsupported_price", "$1,500")]


def test_the_gate_holds_an_url_the_planner_mistyped_to_the_page_the_research_read():
    planner_typo = brief([{"id": "E1", "url": "https://vendor.example/pricing-typo", "title": "Pricing"}])
    assert kinds(check_integrity(planner_typo, "See https://vendor.example/pricing-typo", items())) == [
        ("unapproved_url", "https://vendor.example/pricing-typo")]
    assert check_brief_evidence(planner_typo, items()) == [
        "The brief gives E1 the URL https://vendor.example/pricing-typo; the page was read from "
        "https://vendor.example/pricing/, which is the URL that counts."]


def test_brief_evidence_warnings():
    odd = brief([{"id": "E3", "url": "https://vendor.example/eu"}, {"id": "E9", "url": "https://x.example/"}])
    assert check_brief_evidence(odd, items()) == [
        "The brief approves E3, whose page could not be read; it supports nothing.",
        "The brief approves E9, which is not an evidence item of this run."]
    assert check_brief_evidence(odd, None) == ["The brief approves evidence, but this run did no web research."]
    assert check_brief_evidence(APPROVED, items())[:1] == [
        "The brief approves E3, whose page could not be read; it supports nothing."]


# ---- schema ----------------------------------------------------------------------------------

def test_the_brief_evidence_field_is_optional_and_absent_from_briefs_without_research():
    plain = brief(None)
    assert plain.evidence is None and "evidence" not in json.loads(brief_as_json(plain))
    assert json.loads(brief_as_json(APPROVED))["evidence"][0] == {"id": "E1", "url": PRICING, "title": "Pricing"}


@pytest.mark.parametrize("evidence", [
    [{"id": "E1", "url": PRICING}, {"id": "E1", "url": PRICING}],
    [{"id": "X1", "url": PRICING}], [{"id": "E0", "url": PRICING}], [{"id": "E1"}],
    [{"id": "E1", "url": PRICING, "approved": True}],
])
def test_malformed_evidence_lists_do_not_validate(evidence):
    data = scripting.brief(1) | {"evidence": evidence}
    with pytest.raises(ReplyError):
        parse_brief(json.dumps(data))


def test_issues_of_the_mechanical_gates_are_not_for_model_verdicts():
    assert Issue(type="unapproved_url", detail="x").type == "unapproved_url"
    for kind in ("unapproved_url", "unsupported_price"):
        with pytest.raises(ReplyError, match="mechanical gates only"):
            parse_verdict(json.dumps({"pass": False, "issues": [{"type": kind, "detail": "x", "quote": ""}]}))
    enum = verdict_json_schema()["properties"]["issues"]["items"]["properties"]["type"]["enum"]
    assert enum == ["step_contract", "contradiction", "altered_citation", "invented_citation"]
    with pytest.raises(ValidationError):
        Issue(type="made_up", detail="x")


# ---- context -----------------------------------------------------------------------------------

CTX = Context(task="Compare plans", evidence=(
    Evidence("E1", PRICING + "/", "Pricing", "Pro: $49 per user per month."),
    Evidence("E4", "https://docs.example/limits", "", "Limits apply.")))


def test_evidence_texts_reach_planner_and_executor_but_not_the_verifier():
    rendered = render_context(CTX)
    assert f"# Evidence E1: Pricing ({PRICING}/)\nPro: $49 per user per month." in rendered
    assert "# Evidence E4: untitled (https://docs.example/limits)\nLimits apply." in rendered
    executor = build_executor_request(CTX, APPROVED, 1, RoleConfig(provider="offline", model="m"))
    assert "Pro: $49 per user per month." in executor.messages[1].content
    verifier_input = build_verifier_input(APPROVED, 1, "A draft.")
    assert "Pro: $49" not in verifier_input and PRICING in verifier_input   # the approved list only
    assert render_context(Context(task="t")) == ""


async def test_the_offline_planner_approves_the_pages_the_research_read():
    # A kind of document the offline engine writes (it declines "Compare plans": no such template).
    ctx = replace(CTX, task="Supplier review plan for the vendors whose plans we compare")
    request = CompletionRequest(role="planner", model="offline", messages=(), payload={"context": ctx})
    planned = parse_brief((await OfflineProvider().complete(request)).text)
    assert [(e.id, e.url) for e in planned.evidence] == [("E1", PRICING + "/"), ("E4", "https://docs.example/limits")]
    request = CompletionRequest(role="planner", model="offline", messages=(),
                                payload={"context": replace(ctx, evidence=())})
    assert parse_brief((await OfflineProvider().complete(request)).text).evidence is None


# ---- with the release state machine ------------------------------------------------------------

def evidence_script(drafts: list[str]) -> dict:
    data = scripting.brief(1) | {"evidence": [{"id": "E1", "url": PRICING, "title": "Pricing"}]}
    return scripting.script({1: {"executor": drafts, "verifier": [PASS, PASS]}}, planner=[json.dumps(data)])


def both_gates(evidence):
    return MechanicalChecks(evidence=evidence)


async def test_a_flagged_draft_is_rerendered_and_passes_when_the_rerender_is_clean(tmp_path):
    events, provider = await run_scripted(tmp_path, evidence_script(
        ["Pro is $39 (https://blog.example/cheap).", f"Pro is $49 per user ({PRICING})."]), checks=both_gates(items()))
    released = of_type(events, "step_released")[0]
    assert released["badge"] == "passed_after_rerender"
    mechanical = [v["parsed"] for v in of_type(events, "verdict_recorded") if v["source"] == "mechanical"]
    assert [i["type"] for i in mechanical[0]["issues"]] == ["unapproved_url", "unsupported_price"]
    assert mechanical[1] == {"pass": True, "issues": []}
    rerender = [c for c in provider.calls if c.role == "executor" and c.attempt == 2][0]
    assert "[unapproved_url]" in rerender.messages[-1].content


async def test_a_rerender_that_repeats_the_finding_is_released_with_a_warning(tmp_path):
    events, _ = await run_scripted(tmp_path, evidence_script(["Pro is $39.", "Pro is still $39."]),
                                   checks=both_gates(items()))
    released = of_type(events, "step_released")[0]
    assert released["badge"] == "warning"
    assert "[unsupported_price]" in released["warnings"][0]
