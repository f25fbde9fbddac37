"""`beyond_calibrate`: the verifier of a topology over the corpus, the report's JSON shape, every result
stored as it comes, resuming without asking anything twice, and the workspace's own drafts."""
from __future__ import annotations

import io
import json
from collections import Counter
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from pipeline.calibration import CITATION_TYPES, MODEL_ONLY_TYPES, build_corpus, wilson
from beyond_site.calibration.calibrating import workspace_runs
from beyond_site.calibration.models import CalibrationReport, CalibrationResult
from beyond_site.runs.models import Run
from tests import scripting
from tests.scripting import PASS
from tests.site.audit_support import run_task
from tests.site.calibration_support import FLAG, calibrate, verifier_script

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_verifier_that_flags_every_draft_flags_every_clean_draft(acme, tmp_path):
    report, err = calibrate("--provider", f"scripted:{verifier_script(tmp_path, FLAG)}", "--drafts", "40")
    assert set(report["contracts"]) == {"narrow", "widened"}
    for contract in report["contracts"].values():
        assert contract["clean"] == {"flagged": 20, "n": 20, "rate": 1.0, "ci95": [0.8389, 1.0]}
        assert contract["issues"]["raised"] == 40
        # every issue is false but the contradictions raised on drafts with a contradicted judgment
        assert contract["issues"]["false"] == 40 - contract["violations"]["contradicted_judgment"]["n"]
        assert contract["unparseable"]["n"] == 0
    assert "calibrating: 80/80 done" in err


def test_a_verifier_that_never_flags_catches_no_model_only_violation(acme, tmp_path):
    report, _ = calibrate("--provider", f"scripted:{verifier_script(tmp_path, PASS)}", "--drafts", "40",
                          "--contract", "narrow")
    assert set(report["contracts"]) == {"narrow"}
    narrow = report["contracts"]["narrow"]
    assert narrow["clean"] == {"flagged": 0, "n": 20, "rate": 0.0, "ci95": [0.0, 0.1611]}
    for kind in MODEL_ONLY_TYPES:
        violations = narrow["violations"][kind]
        assert violations["caught"] == 0 and violations["rate"] == 0.0
        assert violations["ci95"] == [0.0, round(wilson(0, violations["n"])[1], 4)]
        assert narrow["with_mechanical"]["violations"][kind]["rate"] == 0.0   # the gate cannot catch these either
    for kind in CITATION_TYPES:
        assert narrow["violations"][kind]["rate"] == 0.0
        assert report["mechanical"]["violations"][kind]["rate"] == 1.0          # reported apart from the model
    assert narrow["issues"] == {"raised": 0, "false": 0, "false_share": None, "by_type": {}}


def test_the_report_has_the_fixed_fields_and_every_result_is_stored(acme, tmp_path):
    report, _ = calibrate("--provider", f"scripted:{verifier_script(tmp_path, PASS)}", "--drafts", "12")
    for contract in report["contracts"].values():
        assert set(contract["clean"]) == {"n", "flagged", "rate", "ci95"}
        assert all({"n", "caught", "rate", "ci95"} <= set(v) for v in contract["violations"].values())
        assert {"n", "rate"} <= set(contract["unparseable"]) and {"raised", "false"} <= set(contract["issues"])
    stored = CalibrationReport.objects.get(pk=report["report"]["id"])
    assert stored.status == "completed" and stored.report["contracts"] == report["contracts"]
    assert stored.progress == {"done": 24, "total": 24, "calls": 24, "cost_usd": 0.0, "left_s": 0.0}
    results = CalibrationResult.objects.filter(report=stored)
    assert Counter(r.contract for r in results) == {"narrow": 12, "widened": 12}
    corpus = {d.draft_id: d for d in build_corpus(0, size=12)}
    for result in results:
        assert result.kind == corpus[result.draft_id].truth.kind and result.source == "seed"
        assert result.result["verdict"] == {"pass": True, "issues": []} and result.status == "parsed"
    assert report["report"]["verifier"] == "scripted:scripted" and report["report"]["status"] == "completed"


def test_a_budget_stops_it_and_resume_asks_only_what_is_missing(acme, tmp_path):
    path = verifier_script(tmp_path, PASS)
    first, err = calibrate("--provider", f"scripted:{path}", "--drafts", "20", "--max-calls", "9", "--concurrency", "2")
    report = CalibrationReport.objects.get(pk=first["report"]["id"])
    assert report.status == "stopped" and report.message.startswith("budget: 31 of 40 calls not made")
    assert f"--resume {report.pk}" in err
    done = set(CalibrationResult.objects.filter(report=report).values_list("draft_id", "contract"))
    assert len(done) == 9

    # A script with exactly one reply per missing call: asking a done item again would run a step
    # out of replies, and that call would count as failed.
    missing = Counter(d.step for d in build_corpus(0, size=20) for c in ("narrow", "widened")
                      if (d.draft_id, c) not in done)
    path.write_text(json.dumps({"steps": {str(step): {"verifier": [PASS] * n} for step, n in missing.items()}}))

    resumed, _ = calibrate("--resume", str(report.pk))
    assert resumed["report"]["status"] == "completed"
    assert CalibrationResult.objects.filter(report=report).count() == 40
    for contract in resumed["contracts"].values():
        assert contract["unparseable"]["n"] == 0 and contract["drafts"] == 20


def test_resume_keeps_the_topology_and_the_corpus(acme, tmp_path):
    first, _ = calibrate("--provider", f"scripted:{verifier_script(tmp_path, PASS)}", "--drafts", "10",
                         "--max-calls", "2")
    with pytest.raises(CommandError, match="leave out --provider, --drafts"):
        calibrate("--resume", str(first["report"]["id"]), "--provider", "offline", "--drafts", "4")
    with pytest.raises(CommandError, match="no calibration report 999"):
        calibrate("--resume", "999")


def test_the_workspace_s_passed_drafts_join_the_corpus(acme, tmp_path):
    run_task(tmp_path, {1: {"executor": ["Access is approved by managers for all staff of the Paris office."],
                            "verifier": [PASS]},
                        2: {"executor": ["First try.", "Access is reviewed every quarter."],
                            "verifier": [scripting.fail(), PASS]}})
    report, _ = calibrate("--provider", f"scripted:{verifier_script(tmp_path, PASS)}", "--contract", "narrow")
    assert report["corpus"]["sources"]["workspace"] > 0
    stored = CalibrationResult.objects.filter(source="workspace")
    # step 1 passed on its first inspection; step 2 only after a re-render, so it is no clean sample
    assert {r.kind for r in stored} >= {"clean"} and stored.filter(kind="clean").count() == 1
    assert report["contracts"]["narrow"]["by_source"]["workspace"]["n"] == 1


def test_workspace_drafts_are_the_passed_steps_of_runs_completed_before_the_report(acme, tmp_path):
    first = run_task(tmp_path, {1: {"executor": ["One."], "verifier": [PASS]},
                                2: {"executor": ["Two.", "Two again."], "verifier": [scripting.fail(), PASS]}})
    run_task(tmp_path, {1: {"executor": ["Halted."], "verifier": ["no json", "no json"]}}, task="Another task")
    later = run_task(tmp_path, {1: {"executor": ["Later."], "verifier": [PASS]}}, task="A third task")
    first_run, later_run = Run.objects.get(pk=first["run"]["id"]), Run.objects.get(pk=later["run"]["id"])
    assert workspace_runs(acme, finished_by=first_run.finished_at, limit=50) == [(first_run.brief, 1, "One.")]
    assert [text for _, _, text in workspace_runs(acme, finished_by=later_run.finished_at, limit=50)] == [
        "Later.", "One."]
    assert workspace_runs(acme, finished_by=later_run.finished_at, limit=1)[0][2] == "Later."


def test_it_refuses_an_unknown_workspace_and_a_bad_topology(acme, tmp_path):
    with pytest.raises(CommandError, match="unknown workspace 'nowhere'"):
        calibrate("--provider", "offline", slug="nowhere")
    with pytest.raises(CommandError, match="not valid JSON"):
        calibrate("--topology", "{not json")
    with pytest.raises(CommandError, match="does not exist"):
        calibrate("--provider", f"scripted:{tmp_path / 'missing.json'}")
    with pytest.raises(CommandError):
        calibrate("--provider", "offline", "--drafts", "0")
    assert not CalibrationReport.objects.exists()


def test_without_json_it_prints_the_figures_in_words(acme):
    out = io.StringIO()
    call_command("beyond_calibrate", "--workspace", "acme", "--provider", "offline", "--drafts", "14",
                 "--contract", "narrow", stdout=out, stderr=io.StringIO())
    text = out.getvalue()
    assert "verifier offline:beyond-offline-1" in text and "narrow contract (14 calls)" in text
    assert "clean drafts flagged" in text and "citation gate alone" in text
    assert json.loads(json.dumps(CalibrationReport.objects.get().report))  # stored as plain JSON


def test_a_failed_report_says_why_and_resumes_once_the_cause_is_gone(acme, tmp_path):
    path = verifier_script(tmp_path, PASS)
    first, _ = calibrate("--provider", f"scripted:{path}", "--drafts", "10", "--max-calls", "4")
    text = path.read_text()
    path.unlink()
    with pytest.raises(CommandError, match=r"failed: scripted file .* does not exist; resume it with --resume"):
        calibrate("--resume", str(first["report"]["id"]))
    report = CalibrationReport.objects.get(pk=first["report"]["id"])
    assert report.status == "failed" and report.results.count() == 4
    path.write_text(text)
    resumed, _ = calibrate("--resume", str(report.pk))
    assert resumed["report"]["status"] == "completed" and report.results.count() == 20


def test_a_report_running_elsewhere_is_left_alone_until_its_runner_falls_silent(acme, tmp_path, settings):
    path = verifier_script(tmp_path, PASS)
    first, _ = calibrate("--provider", f"scripted:{path}", "--drafts", "10", "--max-calls", "2")
    running = CalibrationReport.objects.filter(pk=first["report"]["id"])
    running.update(status="running", lease_owner="elsewhere:1:0.0",
                   lease_expires_at=timezone.now() + timedelta(seconds=settings.BEYOND_RUN_LEASE_S))
    with pytest.raises(CommandError, match="is being run by elsewhere:1:0.0"):
        calibrate("--resume", str(first["report"]["id"]))
    running.update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    resumed, _ = calibrate("--resume", str(first["report"]["id"]))
    assert resumed["report"]["status"] == "completed"
