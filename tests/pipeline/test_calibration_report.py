"""Scoring: Wilson intervals, which issue reports a planted violation, and the topology comparison."""
import pytest

from pipeline.calibration import Truth, compare_topologies, issue_matches, read_tasks, wall_time_s, wilson


@pytest.mark.parametrize("k, n, lo, hi", [
    (0, 10, 0.0, 0.2775),
    (10, 10, 0.7225, 1.0),
    (5, 10, 0.2366, 0.7634),
    (1, 10, 0.0179, 0.4042),
    (0, 0, 0.0, 1.0),
    (81, 100, 0.7222, 0.8749),
    (34, 34, 0.8985, 1.0),
])
def test_the_wilson_interval_matches_known_values(k, n, lo, hi):
    low, high = wilson(k, n)
    assert (round(low, 4), round(high, 4)) == (lo, hi)


def test_the_wilson_interval_always_holds_the_observed_rate():
    for n in range(1, 40):
        for k in range(n + 1):
            low, high = wilson(k, n)
            assert 0.0 <= low <= k / n <= high <= 1.0


ALTERED = Truth("altered_id", "A.5.15 changed to A.5.17", "A.5.17",
                "It implements Annex A control A.5.17 (Access control).", ("altered_citation", "invented_citation"))
REMOVED = Truth("removed_requirement", "removed the part delivering \"owner\"", "## Policy owner\n\nThe CISO.", "",
                ("step_contract",))


@pytest.mark.parametrize("truth, issue, real", [
    (ALTERED, {"type": "invented_citation", "detail": "x", "quote": "A.5.17"}, True),
    (ALTERED, {"type": "altered_citation", "detail": "x", "quote": "Annex A control A.5.17 (Access control)"}, True),
    (ALTERED, {"type": "altered_citation", "detail": "x", "quote": ""}, True),                 # no quote: type alone
    (ALTERED, {"type": "altered_citation", "detail": "x", "quote": "A.5.16 (Identity management)"}, False),
    (ALTERED, {"type": "contradiction", "detail": "x", "quote": "A.5.17"}, False),
    (REMOVED, {"type": "step_contract", "detail": "the owner is missing", "quote": "## Purpose"}, True),
    (REMOVED, {"type": "contradiction", "detail": "x", "quote": ""}, False),
    (Truth(), {"type": "step_contract", "detail": "x", "quote": ""}, False),                  # clean: always false
])
def test_an_issue_reports_the_planted_violation_by_type_and_place(truth, issue, real):
    assert issue_matches(issue, truth) is real


def _trace(task, status, *, steps, calls, created="2026-03-01T10:00:00.000000+00:00",
           finished="2026-03-01T10:01:30.000000+00:00"):
    return {"run": {"id": 1, "status": status, "task": task, "created_at": created, "finished_at": finished},
            "steps": steps, "model_calls": calls, "events": []}


def _step(badge, verdicts_per_attempt):
    return {"index": 1, "badge": badge, "attempts": [
        {"attempt": n, "verdicts": [{"source": "model", "parsed": {"pass": True, "issues": []} if ok else None}
                                    for ok in oks] + [{"source": "mechanical", "parsed": {"pass": True, "issues": []}}]}
        for n, oks in enumerate(verdicts_per_attempt, 1)]}


def _call(cost, output=10):
    return {"role": "verifier", "usage": {"input": 100, "cache_read": 0, "cache_write": 0, "output": output,
                                          "reasoning": 0}, "cost": cost}


def test_it_compares_topologies_over_run_traces():
    a = [_trace("Policy", "completed", steps=[_step("passed", [[True]]), _step("warning", [[True], [True]])],
                calls=[_call(0.01), _call(0.02)]),
         _trace("Policy", "halted", steps=[_step(None, [[False, False]])], calls=[_call(None)],
                finished="2026-03-01T10:00:30.000000+00:00")]
    b = [_trace("Policy", "completed", steps=[_step("passed_after_rerender", [[True], [True]])], calls=[_call(0.5)])]
    result = compare_topologies({"glm": a, "haiku": b})["topologies"]
    glm = result["glm"]
    assert glm["runs"] == 2 and glm["statuses"] == {"completed": 1, "halted": 1} and glm["halts"] == 1
    assert glm["parseable_verdicts"]["parsed"] == 3 and glm["parseable_verdicts"]["n"] == 5
    assert glm["warnings"] == 1 and glm["rerenders"] == 1 and glm["steps"] == 3
    assert glm["wall_time_s"] == {"mean": 60.0, "median": 60.0, "max": 90.0}
    assert glm["tokens"]["total"] == 330 and glm["tokens"]["per_run"] == 165.0
    assert glm["cost"] == {"usd": 0.03, "per_run_usd": 0.015, "calls": 3, "unknown": 1}
    assert result["haiku"]["parseable_verdicts"]["rate"] == 1.0 and result["haiku"]["rerenders"] == 1
    assert set(glm["by_task"]) == {"Policy"} and glm["by_task"]["Policy"]["runs"] == 2


def test_wall_time_falls_back_to_the_events():
    trace = {"run": {}, "events": [{"at": "2026-03-01T10:00:00.000000+00:00"}, {"at": "2026-03-01T10:00:02.500000+00:00"}]}
    assert wall_time_s(trace) == 2.5 and wall_time_s({"run": {}, "events": []}) is None


@pytest.mark.parametrize("text, tasks", [
    ('["Write a policy", "Write an email"]', ["Write a policy", "Write an email"]),
    ('{"tasks": [{"task": "Write a policy"}, "Write an email"]}', ["Write a policy", "Write an email"]),
    ("# hard tasks\nWrite a policy\n\nWrite an email\n", ["Write a policy", "Write an email"]),
])
def test_it_reads_a_task_file(text, tasks):
    assert read_tasks(text) == tasks


def test_an_empty_task_file_is_an_error():
    with pytest.raises(ValueError):
        read_tasks("# nothing\n")
