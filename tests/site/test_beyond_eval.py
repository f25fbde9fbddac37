"""`beyond_eval`: a task set N times per topology through the run path, compared per topology."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from beyond_site.runs.models import Run
from tests import scripting
from tests.scripting import PASS

pytestmark = pytest.mark.django_db(transaction=True)


def topology(path) -> str:
    role = {"provider": "scripted", "path": str(path)}
    return json.dumps({r: role for r in ("planner", "executor", "verifier", "summarizer")})


@pytest.fixture
def two_topologies(tmp_path):
    steady = scripting.write(tmp_path, scripting.script({1: {"executor": ["One."], "verifier": [PASS]},
                                                        2: {"executor": ["Two."], "verifier": [PASS]}}), "steady.json")
    # Its verifier gives no parseable verdict on step 2, twice: every run halts there.
    garbled = scripting.write(tmp_path, scripting.script({
        1: {"executor": ["One."], "verifier": [PASS]},
        2: {"executor": ["Two."], "verifier": ["no json", "no json"]}}), "garbled.json")
    return topology(steady), topology(garbled)


@pytest.fixture
def tasks(tmp_path):
    path = tmp_path / "tasks.txt"
    path.write_text("# two tasks\nDraft an access-control note\n\nDraft a supplier policy\n")
    return path


def evaluate(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("beyond_eval", "--workspace", "acme", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_it_runs_each_task_n_times_per_topology_and_compares_them(acme, tasks, two_topologies):
    steady, garbled = two_topologies
    out, err = evaluate("--tasks", str(tasks), "--trials", "2", "--topology", steady, "--topology", garbled, "--json")
    result = json.loads(out)["topologies"]
    first, second = result.values()
    assert list(result) == ["1: scripted:steady.json", "2: scripted:garbled.json"]
    assert first["runs"] == second["runs"] == 4
    assert first["statuses"] == {"completed": 4} and first["halts"] == 0
    assert first["parseable_verdicts"]["parsed"] == 8 and first["parseable_verdicts"]["rate"] == 1.0
    assert second["statuses"] == {"halted": 4} and second["halts"] == 4
    assert second["parseable_verdicts"]["parsed"] == 4 and second["parseable_verdicts"]["n"] == 12
    assert set(first["by_task"]) == {"Draft an access-control note", "Draft a supplier policy"}
    # Six calls a run, and one more planner call for each run of the supplier policy: the scripted brief
    # traces only the access-control note, so its brief is sent back once for the task's "supplier policy".
    assert first["wall_time_s"]["mean"] is not None and first["cost"]["calls"] == 4 * 6 + 2
    assert first["topology"]["verifier"]["provider"] == "scripted"
    # every run went through the run path: persisted, in its workspace, visible to auditors
    ids = first["run_ids"] + second["run_ids"]
    assert Run.objects.filter(pk__in=ids, workspace=acme).count() == 8
    assert err.count("trial") == 8


def test_without_json_it_prints_a_summary_per_topology(acme, tasks, two_topologies):
    steady, _ = two_topologies
    out, _ = evaluate("--tasks", str(tasks), "--topology", steady)
    assert "Topology 1: scripted:steady.json: 2 runs (completed 2)" in out
    assert "parseable verdicts: 4/4 100.0%" in out and "halts: 0" in out


def test_it_refuses_bad_arguments(acme, tasks, tmp_path):
    with pytest.raises(CommandError, match="cannot read the tasks"):
        evaluate("--tasks", str(tmp_path / "missing.txt"), "--topology", "offline")
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n")
    with pytest.raises(CommandError, match="holds no task"):
        evaluate("--tasks", str(empty), "--topology", "offline")
    with pytest.raises(CommandError, match="not valid JSON"):
        evaluate("--tasks", str(tasks), "--topology", "{oops")
    with pytest.raises(CommandError, match="unknown workspace"):
        call_command("beyond_eval", "--workspace", "nowhere", "--tasks", str(tasks), "--topology", "offline")
    assert not Run.objects.exists()
