"""Running a verifier over the calibration corpus: contracts, scoring, resume, budget, concurrency."""
import asyncio
import json

import pytest

from pipeline import prompts
from pipeline.calibration import (CITATION_TYPES, MODEL_ONLY_TYPES, VIOLATION_TYPES, Budget, CallResult,
                                  build_corpus, calibration_report, run_calibration, verifier_request)
from pipeline.providers.base import Completion, ProviderError, Usage
from pipeline.providers.scripted import ScriptedProvider
from pipeline.requests import build_verifier_request
from pipeline.topology import RoleConfig
from tests import scripting

CFG = RoleConfig(provider="scripted", path="verifier.json")
FLAG = scripting.fail("Something here is wrong.", "contradiction")


@pytest.fixture(scope="module")
def corpus():
    return build_corpus(0)


def _scripted(tmp_path, reply, corpus, contracts=2):
    """A scripted file holding `reply` for every verifier call the corpus will make, per step."""
    per_step = {}
    for draft in corpus:
        per_step[draft.step] = per_step.get(draft.step, 0) + contracts
    data = {"steps": {str(step): {"verifier": [reply] * n} for step, n in per_step.items()}}
    path = tmp_path / "verifier.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return ScriptedProvider(path)


class Replies:
    """A test double of the model: answers every verifier call with `reply(request)`."""

    name, offline = "double", False

    def __init__(self, reply, *, cost=None, delay=0.0):
        self.reply, self.cost, self.delay = reply, cost, delay
        self.calls, self.in_flight, self.most_in_flight = [], 0, 0

    async def complete(self, request):
        self.calls.append(request)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
            text = self.reply(request)
            if isinstance(text, Exception):
                raise text
            return Completion(text=text, finish_reason="stop", usage=Usage(input=100, output=20), cost=self.cost,
                              latency_s=0.5)
        finally:
            self.in_flight -= 1

    async def aclose(self):
        return None


async def test_a_verifier_that_flags_every_draft_flags_every_clean_draft(tmp_path, corpus):
    provider = _scripted(tmp_path, FLAG, corpus)
    outcome = await run_calibration(corpus, provider, CFG, concurrency=16)
    report = calibration_report(corpus, outcome.results)
    for contract in ("narrow", "widened"):
        clean = report["contracts"][contract]["clean"]
        assert clean == {"flagged": 34, "n": 34, "rate": 1.0, "ci95": [0.8985, 1.0]}
        issues = report["contracts"][contract]["issues"]
        assert issues["raised"] == len(corpus)
        # every issue on a clean draft is false, and so is a contradiction raised on a citation violation
        assert issues["false"] == len(corpus) - sum(d.truth.kind == "contradicted_judgment" for d in corpus)
    assert len(provider.calls) == 2 * len(corpus)


async def test_a_verifier_that_never_flags_catches_nothing_the_gate_cannot(tmp_path, corpus):
    provider = _scripted(tmp_path, scripting.PASS, corpus, contracts=1)
    outcome = await run_calibration(corpus, provider, CFG, contracts=["narrow"], concurrency=16)
    report = calibration_report(corpus, outcome.results)
    narrow = report["contracts"]["narrow"]
    assert narrow["clean"]["flagged"] == 0 and narrow["issues"] == {"raised": 0, "false": 0, "false_share": None,
                                                                   "by_type": {}}
    for kind in VIOLATION_TYPES:
        assert narrow["violations"][kind]["rate"] == 0.0
    for kind in MODEL_ONLY_TYPES:                       # nobody catches these but the model
        assert narrow["with_mechanical"]["violations"][kind]["rate"] == 0.0
    for kind in CITATION_TYPES:                         # the gate still catches every citation violation
        assert report["mechanical"]["violations"][kind]["rate"] == 1.0
        assert narrow["with_mechanical"]["violations"][kind]["rate"] == 1.0
    assert report["mechanical"]["clean"]["flagged"] == 0 and report["mechanical"]["issues"]["false"] == 0
    assert "widened" not in report["contracts"]


async def test_the_report_has_the_calibrate_json_shape(corpus):
    sample = corpus[:14]
    outcome = await run_calibration(sample, Replies(lambda r: scripting.PASS, cost=0.002), CFG)
    report = calibration_report(sample, outcome.results)
    assert set(report) == {"contracts", "mechanical", "corpus"}
    narrow = report["contracts"]["narrow"]
    assert set(narrow["clean"]) == {"n", "flagged", "rate", "ci95"}
    assert all({"n", "caught", "rate", "ci95"} <= set(v) for v in narrow["violations"].values())
    assert set(narrow["unparseable"]) >= {"n", "rate"} and set(narrow["issues"]) >= {"raised", "false"}
    assert narrow["cost"] == {"usd": 0.028, "calls": 14, "unknown": 0, "per_call_usd": 0.002}
    assert narrow["latency"]["p50_s"] == 0.5 and narrow["tokens"]["total"] == 14 * 120
    json.dumps(report)


async def test_it_counts_unparseable_replies_and_failed_calls_apart(corpus):
    sample = [d for d in corpus if d.truth.clean][:6]
    replies = iter(["not json", '{"pass": true, "issues": [{"type": "contradiction", "detail": "x", "quote": ""}]}',
                    ProviderError("http_500", "server error"), scripting.PASS, scripting.PASS, scripting.PASS])
    outcome = await run_calibration(sample, Replies(lambda r: next(replies)), CFG, contracts=["narrow"], concurrency=1)
    narrow = calibration_report(sample, outcome.results)["contracts"]["narrow"]
    assert narrow["unparseable"] == {"n": 3, "rate": 0.5, "errors": 1}
    assert narrow["clean"]["n"] == 3
    statuses = [r.status for r in outcome.results]
    assert statuses == ["unparseable", "unparseable", "error", "parsed", "parsed", "parsed"]


async def test_a_right_issue_is_real_and_an_extra_one_is_false(corpus):
    sample = [d for d in corpus if d.truth.kind in ("clean", "altered_id", "contradicted_judgment")][:30]
    by_text = {d.text: d for d in sample}

    def reply(request):
        # a violation draft may contain its clean draft whole (a sentence added at the end): the longest wins
        draft = max((d for text, d in by_text.items() if text in request.messages[1].content), key=lambda d: len(d.text))
        issues = [{"type": "step_contract", "detail": "tone", "quote": ""}]           # always false here
        if draft.truth.kind == "altered_id":
            issues.append({"type": "invented_citation", "detail": "not approved", "quote": draft.truth.changed})
        if draft.truth.kind == "contradicted_judgment":
            issues.append({"type": "contradiction", "detail": "against the brief", "quote": draft.truth.changed})
        return json.dumps({"pass": False, "issues": issues})

    outcome = await run_calibration(sample, Replies(reply), CFG, contracts=["narrow"])
    narrow = calibration_report(sample, outcome.results)["contracts"]["narrow"]
    violations = sum(not d.truth.clean for d in sample)
    assert narrow["issues"]["raised"] == len(sample) + violations
    assert narrow["issues"]["false"] == len(sample)
    assert narrow["issues"]["by_type"]["step_contract"] == {"raised": len(sample), "false": len(sample)}
    assert narrow["violations"]["altered_id"]["rate"] == 1.0
    assert narrow["violations"]["contradicted_judgment"]["rate"] == 1.0


async def test_it_resumes_skipping_what_is_done_and_hands_over_each_new_result(corpus):
    sample = corpus[:10]
    first = await run_calibration(sample[:4], Replies(lambda r: scripting.PASS), CFG)
    stored = [r.as_json() for r in first.results]                  # as the caller would persist them
    handed, progress = [], []
    provider = Replies(lambda r: scripting.PASS)
    outcome = await run_calibration(sample, provider, CFG, done=stored, on_result=handed.append,
                                    on_progress=progress.append)
    assert len(provider.calls) == 2 * 6 and outcome.new == 12 and len(handed) == 12
    assert {r.key for r in handed}.isdisjoint({(d["draft_id"], d["contract"]) for d in stored})
    assert [r.key for r in outcome.results] == [(d.draft_id, c) for d in sample for c in ("narrow", "widened")]
    assert [p.done for p in progress] == list(range(9, 21)) and progress[-1].total == 20


async def test_progress_says_the_time_left_at_this_runs_own_pace(corpus):
    sample = corpus[:6]
    first = await run_calibration(sample[:3], Replies(lambda r: scripting.PASS), CFG, contracts=["narrow"])
    progress = []
    # Resumed: the 3 earlier results took no time in this run, so only its own 3 calls set the pace.
    await run_calibration(sample, Replies(lambda r: scripting.PASS, delay=0.1), CFG, contracts=["narrow"],
                          concurrency=1, done=[r.as_json() for r in first.results], on_progress=progress.append)
    assert [(p.done, p.total) for p in progress] == [(4, 6), (5, 6), (6, 6)]
    assert 0.18 <= progress[0].left_s <= 0.3     # one call of 0.1 s made, two to go
    assert 0.08 <= progress[1].left_s <= 0.15
    assert progress[-1].left_s == 0.0


async def test_the_calls_go_one_contract_after_the_other_so_an_endpoint_can_reuse_the_instructions(corpus):
    asked = []
    outcome = await run_calibration(corpus[:5], Replies(lambda r: scripting.PASS), CFG, concurrency=1,
                                    on_result=lambda r: asked.append(r.key))
    assert [contract for _, contract in asked] == ["narrow"] * 5 + ["widened"] * 5
    # The results keep the corpus's order, draft by draft.
    assert [r.key for r in outcome.results] == [(d.draft_id, c) for d in corpus[:5] for c in ("narrow", "widened")]


async def test_a_budget_of_calls_stops_the_run(corpus):
    provider = Replies(lambda r: scripting.PASS)
    outcome = await run_calibration(corpus[:10], provider, CFG, budget=Budget(max_calls=7), concurrency=3)
    assert len(provider.calls) == 7 and outcome.new == 7 and outcome.not_run == 13 and outcome.stopped == "budget"


async def test_a_budget_of_cost_stops_the_run(corpus):
    provider = Replies(lambda r: scripting.PASS, cost=0.01)
    outcome = await run_calibration(corpus[:10], provider, CFG, budget=Budget(max_cost_usd=0.05), concurrency=1)
    assert len(provider.calls) == 5 and outcome.stopped == "budget"
    unlimited = await run_calibration(corpus[:3], Replies(lambda r: scripting.PASS), CFG)
    assert unlimited.stopped is None and unlimited.not_run == 0


async def test_concurrency_is_bounded(corpus):
    provider = Replies(lambda r: scripting.PASS, delay=0.01)
    await run_calibration(corpus[:12], provider, CFG, concurrency=3)
    assert provider.most_in_flight == 3


async def test_an_async_result_callback_is_awaited(corpus):
    seen = []

    async def store(result):
        await asyncio.sleep(0)
        seen.append(result.key)

    await run_calibration(corpus[:2], Replies(lambda r: scripting.PASS), CFG, on_result=store)
    assert len(seen) == 4


def test_the_narrow_contract_is_the_run_request_and_the_widened_one_adds_one_rule(corpus):
    draft = corpus[0]
    narrow = verifier_request("narrow", draft.brief, draft.step, draft.text, CFG)
    assert narrow == build_verifier_request(draft.brief, draft.step, draft.text, CFG)
    widened = verifier_request("widened", draft.brief, draft.step, draft.text, CFG)
    assert widened.messages[1:] == narrow.messages[1:] and widened.payload == narrow.payload
    assert widened.messages[0].content == narrow.messages[0].content + "\n\n" + prompts.load("verifier_widened")
    assert "absent from the brief" in prompts.load("verifier_widened")
    with pytest.raises(ValueError):
        verifier_request("lenient", draft.brief, draft.step, draft.text, CFG)


def test_a_result_round_trips_through_json():
    result = CallResult("d1", "narrow", "parsed", {"pass": True, "issues": []}, "{}", None, 0.3, {"input": 5}, 0.1, "m")
    assert CallResult.from_json(json.loads(json.dumps(result.as_json()))) == result
