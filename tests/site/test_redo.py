"""Redo a step from the command line (docs/working-loop.md, docs/interfaces.md):
`beyond_run --redo RUN_ID --step K`, scripted providers, the whole record checked afterwards."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from beyond_site.runs.contexts import context_messages
from beyond_site.runs.models import ModelCall, Run, Step
from beyond_site.runs.versions import document_version
from beyond_site.workspaces.models import Membership
from tests import scripting
from tests.scripting import PASS, fail

pytestmark = pytest.mark.django_db(transaction=True)

INSTRUCTION = "Use the 24 h deadline from our policy."


def _run(tmp_path, *args: str, name: str) -> dict:
    out = io.StringIO()
    call_command("beyond_run", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def _first_run(tmp_path) -> dict:
    """Three steps; the verifier fails step 2's draft and its re-render: a ⚠ warning."""
    path = scripting.write(tmp_path, scripting.script({
        1: {"executor": ["Part one."], "verifier": [PASS]},
        2: {"executor": ["Part two, vague.", "Part two, still vague."], "verifier": [fail("no deadline"), fail("no deadline")]},
        3: {"executor": ["Part three."], "verifier": [PASS]}}), "first.json")
    return _run(tmp_path, "--workspace", "acme", "--task", "Draft an access-control note",
                "--provider", f"scripted:{path}", name="first")


def _redo_script(tmp_path, verifier: list) -> str:
    path = scripting.write(tmp_path, scripting.script(
        {2: {"executor": ["Part two: report within 24 h.", "Part two: report within 24 h of detection."],
             "verifier": verifier}}, planner=[], n_steps=3), "redo.json")
    return f"scripted:{path}"


def test_a_redo_of_a_warning_step_carries_the_others_and_inspects_it_anew(workspace, tmp_path):
    first = _first_run(tmp_path)
    assert [s["badge"] for s in first["steps"]] == ["passed", "warning", "passed"]
    earlier = first["run"]["id"]
    # The verifier failed this step twice in the first run; in the redo it fails once, then passes.
    trace = _run(tmp_path, "--redo", str(earlier), "--step", "2", "--instruction", INSTRUCTION,
                 "--provider", _redo_script(tmp_path, [fail("no deadline"), PASS]), name="redo")
    run = trace["run"]
    assert run["status"] == "completed" and run["id"] != earlier
    assert run["redo_of"] == {"run": earlier, "step": 2, "instruction": INSTRUCTION}
    assert run["conversation"] == first["run"]["conversation"] and run["task"] == first["run"]["task"]
    assert trace["brief"] == first["brief"]
    steps = trace["steps"]
    assert [s["carried_over"] for s in steps] == [True, False, True]
    assert [s["content"] for s in steps] == ["Part one.", "Part two: report within 24 h of detection.", "Part three."]
    assert [s["badge"] for s in steps] == ["passed", "passed_after_rerender", "passed"]
    assert steps[0]["attempts"] == [] and steps[2]["attempts"] == []  # not inspected again
    assert [a["attempt"] for a in steps[1]["attempts"]] == [1, 2]
    released = [e for e in trace["events"] if e["type"] == "step_released"]
    assert [e.get("carried_over", False) for e in released] == [True, False, True]
    assert {c["role"] for c in trace["model_calls"]} == {"executor", "verifier", "summarizer"}  # no planner
    # The instruction reached the step's executor and never its verifier.
    new = Run.objects.get(pk=run["id"])
    given = {c.role: [] for c in ModelCall.objects.filter(run=new)}
    for call in ModelCall.objects.filter(run=new):
        given[call.role].append("\n".join(m["content"] for m in context_messages(call.context)))
    assert all(INSTRUCTION in text for text in given["executor"])
    assert not any(INSTRUCTION in text for text in given["verifier"])
    # The earlier run stays as it was; the conversation's document is now the redo's.
    old = Run.objects.get(pk=earlier)
    assert [s.content for s in old.steps.order_by("index")][1] == "Part two, still vague."
    assert document_version(new).current and not document_version(old).current
    out = tmp_path / "doc.md"
    call_command("beyond_export", str(new.pk), "--format", "md", "--edition", "client", "--out", str(out))
    exported = out.read_text()
    assert "Part one." in exported and "report within 24 h of detection" in exported and "Part three." in exported
    assert "still vague" not in exported
    verify = io.StringIO()
    call_command("beyond_audit", "verify", stdout=verify)  # exits 1 (SystemExit) when a record is broken


def test_a_redo_that_gets_no_verdict_halts_and_releases_nothing_after_the_step(workspace, tmp_path):
    earlier = _first_run(tmp_path)["run"]["id"]
    trace = _run(tmp_path, "--redo", str(earlier), "--step", "2",
                 "--provider", _redo_script(tmp_path, [{"error": "timeout"}, {"error": "timeout"}]), name="redo")
    assert trace["run"]["status"] == "halted"
    assert [s["status"] for s in trace["steps"]] == ["released", "halted", "not_released"]
    # The redo released step 1 but halted: it is no version, and the document it redoes stays the newest.
    assert document_version(Run.objects.get(pk=trace["run"]["id"])).number is None
    assert document_version(Run.objects.get(pk=earlier)).current is True
    call_command("beyond_audit", "verify", stdout=io.StringIO())


def test_the_redo_says_what_is_wrong_and_starts_nothing(workspace, tmp_path, alice):
    earlier = _first_run(tmp_path)["run"]["id"]
    provider = _redo_script(tmp_path, [PASS])
    before = Run.objects.count()
    cases = [
        (("--redo", "999999", "--step", "2"), "no run 999999"),
        (("--redo", str(earlier), "--step", "4"), "has no step 4 (its steps are 1 to 3)"),
        (("--redo", str(earlier), "--step", "0"), "has no step 0"),
        (("--redo", str(earlier)), "--redo RUN_ID and --step K go together"),
        (("--redo", str(earlier), "--step", "2", "--user", "alice"), "'alice' may not start runs"),
    ]
    for args, message in cases:
        with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
            call_command("beyond_run", *args, "--provider", provider, stdout=io.StringIO())
    Membership.objects.create(user=alice, workspace=workspace, role=Membership.AUDITOR)
    with pytest.raises(CommandError, match="may not start runs"):  # an auditor reads, never starts
        call_command("beyond_run", "--redo", str(earlier), "--step", "2", "--user", "alice", "--provider", provider)
    unfinished = Run.objects.create(workspace=workspace, task="x", topology=Run.objects.get(pk=earlier).topology,
                                    conversation_id=Run.objects.get(pk=earlier).conversation_id)
    with pytest.raises(CommandError, match="has not finished"):
        call_command("beyond_run", "--redo", str(unfinished.pk), "--step", "1", "--provider", provider)
    assert Run.objects.count() == before + 1  # only the unfinished run made by hand
    Membership.objects.filter(user=alice).update(role=Membership.MEMBER)
    trace = _run(tmp_path, "--redo", str(earlier), "--step", "2", "--user", "alice", "--provider", provider, name="x")
    assert trace["run"]["created_by"] == "alice" and trace["run"]["status"] == "completed"


def test_verify_names_a_redo_whose_carried_steps_or_link_were_changed_behind_the_application(workspace, tmp_path):
    earlier = _first_run(tmp_path)["run"]["id"]
    redo = _run(tmp_path, "--redo", str(earlier), "--step", "2", "--instruction", INSTRUCTION,
                "--provider", _redo_script(tmp_path, [PASS]), name="redo")["run"]["id"]
    call_command("beyond_audit", "verify", stdout=io.StringIO())  # intact
    Step.objects.filter(run_id=redo, index=1).update(carried_over=False)  # raw SQL's reach, not the app's
    Run.objects.filter(pk=redo).update(redo_instruction="Something else.")
    out = io.StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("beyond_audit", "verify", stdout=out)
    assert exited.value.code == 1
    line = next(line for line in out.getvalue().splitlines() if line.startswith(f"run {redo}: "))
    assert "the release of step 1 does not match" in line and "the step it redoes does not match" in line
