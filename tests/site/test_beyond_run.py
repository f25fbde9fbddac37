"""Every row of the release table (docs/verifier-contract.md), driven through `beyond_run` with scripted replies."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from beyond_site.runs.models import ContextRecord, ModelCall, Run
from beyond_site.runs.contexts import context_messages
from tests import scripting
from tests.scripting import PASS, fail

pytestmark = pytest.mark.django_db(transaction=True)


def run_script(tmp_path, data: dict) -> dict:
    path = scripting.write(tmp_path, data)
    out = io.StringIO()
    call_command("beyond_run", "--workspace", "acme", "--task", "Draft an access-control note",
                 "--provider", f"scripted:{path}", "--json", stdout=out)
    return json.loads(out.getvalue())


def released_steps(trace: dict) -> list[int]:
    return [e["step"] for e in trace["events"] if e["type"] == "step_released"]


def test_it_releases_a_pass_on_attempt_one_as_passed(workspace, tmp_path):
    trace = run_script(tmp_path, scripting.script({1: {"executor": ["Part one."], "verifier": [PASS]},
                                                   2: {"executor": ["Part two."], "verifier": [PASS]}}))
    assert trace["run"]["status"] == "completed"
    assert [s["badge"] for s in trace["steps"]] == ["passed", "passed"]
    assert [s["content"] for s in trace["steps"]] == ["Part one.", "Part two."]
    assert released_steps(trace) == [1, 2]
    assert trace["summary"] == "A short recap."
    step = trace["steps"][0]
    assert [v["source"] for v in step["attempts"][0]["verdicts"]] == ["model", "mechanical"]
    assert step["attempts"][0]["verdicts"][0]["parsed"] == {"pass": True, "issues": []}


def test_it_rerenders_once_with_the_issues_and_the_failed_draft(workspace, tmp_path):
    issue = "The note does not say who approves access."
    trace = run_script(tmp_path, scripting.script(
        {1: {"executor": ["First try.", "Managers approve access."], "verifier": [fail(issue), PASS]}}))
    step = trace["steps"][0]
    assert step["badge"] == "passed_after_rerender"
    assert step["content"] == "Managers approve access."
    assert [a["draft"] for a in step["attempts"]] == ["First try.", "Managers approve access."]
    rerender = ModelCall.objects.get(role="executor", attempt=2)
    given = "\n".join(m["content"] for m in context_messages(rerender.context))
    assert issue in given and "First try." in given


def test_it_releases_a_second_failure_with_a_warning(workspace, tmp_path):
    trace = run_script(tmp_path, scripting.script(
        {1: {"executor": ["Draft one.", "Draft two."], "verifier": [fail("missing A"), fail("still missing B")]}}))
    step = trace["steps"][0]
    assert step["status"] == "released"
    assert step["badge"] == "warning"
    assert step["content"] == "Draft two."
    assert any("still missing B" in w for w in step["warnings"])
    assert trace["run"]["status"] == "completed"


def test_it_calls_the_verifier_again_after_a_verifier_error(workspace, tmp_path):
    trace = run_script(tmp_path, scripting.script(
        {1: {"executor": ["Draft."], "verifier": [{"error": "timeout"}, PASS]}}))
    step = trace["steps"][0]
    assert step["badge"] == "passed"
    verdicts = step["attempts"][0]["verdicts"]
    assert verdicts[0]["parsed"] is None and "timeout" in verdicts[0]["error"]
    assert verdicts[1]["parsed"] == {"pass": True, "issues": []}


@pytest.mark.parametrize("bad_replies", [
    [{"error": "timeout"}, {"error": "http_500"}],
    ["not json at all", "```json\n{\"pass\": true}\n```x"],
    [json.dumps({"pass": True, "issues": [{"type": "contradiction", "detail": "x", "quote": ""}]}),
     json.dumps({"pass": False, "issues": []})],
    [json.dumps({"pass": "true", "issues": []}), {"error": "crash"}],
    [json.dumps([{"pass": True}]), json.dumps({"pass": True, "issues": [], "verdict": "ok"})],
    [json.dumps({"passed": True}), json.dumps({"pass": True})],  # no alias, no default for issues
    [json.dumps({"pass": False, "issues": [{"type": "contradiction", "detail": "  "}]}),
     json.dumps({"pass": False, "issues": [{"type": "style", "detail": "too long"}]})],
])
def test_it_halts_when_the_verifier_gives_no_parseable_verdict_twice(workspace, tmp_path, bad_replies):
    trace = run_script(tmp_path, scripting.script({
        1: {"executor": ["Step one."], "verifier": [PASS]},
        2: {"executor": ["Step two."], "verifier": bad_replies},
        3: {"executor": ["Step three."], "verifier": [PASS]},
    }))
    assert trace["run"]["status"] == "halted"
    assert "step 2" in trace["run"]["halt_reason"]
    assert [s["status"] for s in trace["steps"]] == ["released", "halted", "not_released"]
    assert [s["content"] for s in trace["steps"]] == ["Step one.", None, None]
    assert released_steps(trace) == [1]
    assert trace["summary"] is None  # a halted run gets no recap
    assert not ModelCall.objects.filter(role="summarizer").exists()
    assert [e["type"] for e in trace["events"]][-1] == "run_halted"


def test_it_halts_on_an_executor_error(workspace, tmp_path):
    trace = run_script(tmp_path, scripting.script({
        1: {"executor": [{"error": "http_500"}], "verifier": [PASS]},
        2: {"executor": ["Step two."], "verifier": [PASS]},
    }))
    assert trace["run"]["status"] == "halted"
    assert [s["status"] for s in trace["steps"]] == ["halted", "not_released"]
    assert released_steps(trace) == []


def test_it_halts_on_an_executor_error_during_the_rerender(workspace, tmp_path):
    trace = run_script(tmp_path, scripting.script({
        1: {"executor": ["Step one.", {"error": "crash"}], "verifier": [fail()]},
    }))
    assert trace["run"]["status"] == "halted"
    assert trace["steps"][0]["content"] is None


def test_a_halt_lets_earlier_steps_finish_their_rerender_and_release_in_order(workspace, tmp_path):
    trace = run_script(tmp_path, scripting.script({
        1: {"executor": [{"content": "One.", "delay_s": 0.2}, "One, fixed."], "verifier": [fail(), PASS]},
        2: {"executor": ["Two."], "verifier": [{"error": "crash"}, {"error": "crash"}]},
        3: {"executor": ["Three."], "verifier": [PASS]},
    }))
    assert [s["status"] for s in trace["steps"]] == ["released", "halted", "not_released"]
    assert trace["steps"][0]["badge"] == "passed_after_rerender"
    assert trace["steps"][0]["content"] == "One, fixed."
    assert released_steps(trace) == [1]


def test_it_marks_a_truncated_draft_still_verifies_it_and_never_calls_it_passed(workspace, tmp_path):
    cut = {"content": "Cut off mid-sen", "finish_reason": "length"}
    trace = run_script(tmp_path, scripting.script({1: {"executor": [cut, cut], "verifier": [PASS, PASS]}}))
    step = trace["steps"][0]
    assert [a["truncated"] for a in step["attempts"]] == [True, True]
    assert step["badge"] == "warning"  # the verifier passed it; the output limit's cut is a finding of its own
    assert step["warnings"][0].startswith("Truncated")
    verdicts = step["attempts"][0]["verdicts"]
    assert [v["parsed"]["pass"] for v in verdicts] == [True, False]  # the model's, then the mechanical
    assert verdicts[1]["parsed"]["issues"][0]["type"] == "truncated_draft"


def test_a_planner_reply_that_does_not_validate_gets_one_retry(workspace, tmp_path):
    trace = run_script(tmp_path, scripting.script(
        {1: {"executor": ["Only step."], "verifier": [PASS]}},
        planner=['{"task": "x", "steps": []}', json.dumps(scripting.brief(1))]))
    assert trace["run"]["status"] == "completed"
    assert [e["type"] for e in trace["events"]].count("planner_rejected") == 1


@pytest.mark.parametrize("replies", [
    ["not a brief", '{"task": "x"}'],
    [{"error": "http_429"}, {"error": "timeout"}],
    [json.dumps(scripting.brief(1)).replace('"index": 1', '"index": 2'), "[]"],
])
def test_a_second_invalid_brief_fails_the_run_before_any_step(workspace, tmp_path, replies):
    trace = run_script(tmp_path, scripting.script({}, planner=replies))
    assert trace["run"]["status"] == "failed"
    assert trace["brief"] is None
    assert trace["steps"] == []
    assert not ModelCall.objects.filter(role="executor").exists()
    assert trace["events"][-1]["type"] == "run_failed"


def test_a_failing_summarizer_leaves_the_run_completed_with_no_recap_and_a_warning(workspace, tmp_path):
    trace = run_script(tmp_path, scripting.script(
        {1: {"executor": ["Only step."], "verifier": [PASS]}}, summarizer=[{"error": "http_500"}, ""]))
    assert trace["run"]["status"] == "completed"
    assert trace["summary"] is None
    assert any("No recap" in w for w in trace["run"]["warnings"])
    assert ModelCall.objects.filter(role="summarizer").count() == 2


def test_running_out_of_scripted_replies_is_an_error_of_that_call(workspace, tmp_path):
    trace = run_script(tmp_path, scripting.script({1: {"executor": ["Only step."], "verifier": []}}))
    assert trace["run"]["status"] == "halted"
    verdicts = trace["steps"][0]["attempts"][0]["verdicts"]
    assert all("no more step 1 verifier replies" in v["error"] for v in verdicts)


def test_the_trace_has_the_spec_fields_and_ordered_microsecond_events(workspace, tmp_path):
    trace = run_script(tmp_path, scripting.script({1: {"executor": ["Only step."], "verifier": [PASS]}}))
    assert set(trace) >= {"run", "brief", "steps", "summary", "events"}
    assert set(trace["run"]) >= {"id", "status", "halt_reason", "topology"}
    assert trace["run"]["topology"]["verifier"]["provider"] == "scripted"
    assert trace["run"]["topology"]["planner"]["effort"] == "high"
    assert [e["seq"] for e in trace["events"]] == list(range(1, len(trace["events"]) + 1))
    assert all("." in e["at"] and len(e["at"].split(".")[1]) >= 6 for e in trace["events"])
    types = [e["type"] for e in trace["events"]]
    assert types[:2] == ["run_requested", "run_started"] and "brief_ready" in types and types[-1] == "run_completed"
    run = Run.objects.get(pk=trace["run"]["id"])
    assert run.status == "completed" and ContextRecord.objects.exists()


def test_it_refuses_a_malformed_scripted_file_with_a_clear_message(workspace, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"planner": [1, 2]')
    with pytest.raises(CommandError, match="not valid JSON"):
        call_command("beyond_run", "--workspace", "acme", "--task", "x", "--provider", f"scripted:{path}")
    path.write_text('{"planner": [], "steps": {"one": {}}}')
    with pytest.raises(CommandError, match="malformed"):
        call_command("beyond_run", "--workspace", "acme", "--task", "x", "--provider", f"scripted:{path}")
    assert not Run.objects.exists()


@pytest.mark.parametrize("args, message", [
    (["--workspace", "nope", "--task", "x"], "unknown workspace"),
    (["--workspace", "acme", "--task", "x", "--provider", "gpt"], "unknown provider shorthand"),
    (["--workspace", "acme", "--task", "x", "--topology", "{"], "not valid JSON"),
    (["--workspace", "acme", "--task", "x", "--topology", ""], "not valid JSON"),  # never a silent default
    (["--workspace", "acme", "--task", "x", "--provider", ""], "unknown provider shorthand"),
    (["--workspace", "acme", "--task", "x", "--topology", '{"planner": {"provider": "openai"}}'], "invalid topology"),
])
def test_it_refuses_bad_arguments(workspace, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("beyond_run", *args)


def test_the_command_exits_non_zero_with_a_message_on_an_unknown_workspace(tmp_path):
    import subprocess
    import sys

    env = {"DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", "PATH": "/usr/bin:/bin", "DJANGO_SECRET_KEY": "x" * 50}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], env=env, check=True)
    done = subprocess.run([sys.executable, "manage.py", "beyond_run", "--workspace", "ghost", "--task", "x"],
                          env=env, capture_output=True, text=True)
    assert done.returncode != 0
    assert "unknown workspace 'ghost'" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_bad_default_provider_or_a_missing_key_is_a_clear_error(workspace, settings, monkeypatch):
    settings.BEYOND_PROVIDER = "gpt-5"
    with pytest.raises(CommandError, match="unknown provider shorthand"):
        call_command("beyond_run", "--workspace", "acme", "--task", "x")
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    with pytest.raises(CommandError, match="OPENROUTER_API_KEY"):
        call_command("beyond_run", "--workspace", "acme", "--task", "x", "--provider", "openrouter:z-ai/glm-5.3")
    assert not Run.objects.exists()


def test_a_database_refusal_while_recording_fails_the_run_instead_of_leaving_it_running(workspace, tmp_path,
                                                                                        monkeypatch):
    from beyond_site.runs import recorder

    def refuse(self, data, row):
        raise RuntimeError("disk full")

    monkeypatch.setattr(recorder.EventRecorder, "_on_attempt_drafted", refuse)
    trace = run_script(tmp_path, scripting.script({1: {"executor": ["One."], "verifier": [PASS]}}))
    assert trace["run"]["status"] == "failed"
    assert "internal error while recording" in trace["run"]["halt_reason"]
    assert released_steps(trace) == []


def test_an_overlong_provider_string_is_cut_not_fatal(workspace, tmp_path):
    data = scripting.script({1: {"executor": [{"content": "One.", "finish_reason": "x" * 80}], "verifier": [PASS]}})
    trace = run_script(tmp_path, data)
    assert trace["run"]["status"] == "completed"
    assert len(ModelCall.objects.get(role="executor").finish_reason) == 40
