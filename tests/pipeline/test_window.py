"""A run's context fits its models' windows (pipeline/window.py): the budget is the site's unless a
planner's or an executor's window needs less, with room for instructions, brief and reply."""
from __future__ import annotations

import pytest

from pipeline.topology import ROLES, parse_topology
from pipeline.window import BRIEF_TOKENS, MARGIN, REPLY_TOKENS, context_budget, role_window

LOCAL = {"provider": "openai", "model": "gemma", "base_url": "http://127.0.0.1:8088/v1"}


def topology(**roles):
    return parse_topology({role: roles.get(role, {"provider": "offline"}) for role in ROLES})


def test_no_known_window_keeps_the_sites_budget():
    fitted = context_budget(topology(planner=LOCAL, executor=LOCAL), 100_000)
    assert (fitted.budget, fitted.window) == (100_000, None)


def test_the_profiles_window_decides_with_room_for_the_rest():
    model = {**LOCAL, "profile": "llama-cpp-python"}
    fitted = context_budget(topology(planner=model, executor=model), 100_000)
    assert (fitted.window, fitted.role) == (8192, "executor")  # the executor also carries the brief
    assert fitted.budget <= (8192 - REPLY_TOKENS - BRIEF_TOKENS) * MARGIN


def test_a_roles_context_tokens_and_max_tokens_override_the_profile():
    small = {**LOCAL, "profile": "llama-cpp-python", "context_tokens": 4096, "max_tokens": 512}
    fitted = context_budget(topology(planner=small), 100_000)
    assert (fitted.window, fitted.role) == (4096, "planner") and 0 < fitted.budget < 4096 - 512
    assert role_window(parse_topology({r: small for r in ROLES}).verifier) == 4096


def test_the_verifier_and_summarizer_windows_do_not_limit_the_context():
    fitted = context_budget(topology(verifier={**LOCAL, "context_tokens": 2048}), 100_000)
    assert fitted.budget == 100_000  # they never see the context


@pytest.mark.parametrize("window", [511, 0])
def test_a_window_too_small_to_be_one_is_a_topology_error(window):
    with pytest.raises(Exception, match="context_tokens"):
        topology(planner={**LOCAL, "context_tokens": window})


def test_what_the_server_said_wins_over_the_profile_and_a_roles_setting_only_lowers_it():
    model = {**LOCAL, "profile": "llama-cpp-python"}
    assert context_budget(topology(planner=model, executor=model), 100_000,
                          {"planner": 32_768, "executor": 32_768}).window == 32_768
    lowered = {**model, "context_tokens": 4096}
    fitted = context_budget(topology(planner=lowered, executor=model), 100_000,
                            {"planner": 32_768, "executor": 32_768})
    assert (fitted.window, fitted.role) == (4096, "planner")
    raised = {**model, "context_tokens": 65_536}   # set higher than the server runs it: the server's holds
    assert role_window(topology(planner=raised).planner, 16_384) == 16_384
