"""Frameworks a task names, and the run warning for those the workspace has not enabled."""
from __future__ import annotations

import pytest

from pipeline.context import Context
from pipeline.frameworks import load_packs, named_frameworks
from pipeline.task_check import task_framework_warnings


@pytest.mark.parametrize("text, keys", [
    ("Map our access control practices to NIST CSF 2.0 PR.AA", ["nist-csf-2.0"]),
    ("Write an access control policy per ISO 27001", ["iso27001-2022"]),
    ("Gap analysis against ISO 27001:2013 Annex A", ["iso27001-2013"]),
    ("Email to the board about our SOC 2 Type II readiness", ["soc2-tsc-2017"]),
    ("Risk assessment per NIST SP 800-53 and the Cybersecurity Framework", ["nist-800-53r5", "nist-csf-2.0"]),
    ("Record of processing under Regulation (EU) 2016/679", ["gdpr"]),
    ("Statement of applicability for A.5.15 and A.8.5", []),
])
def test_it_finds_the_frameworks_a_text_names(text, keys):
    assert [pack.key for pack in named_frameworks(text)] == keys


def test_it_looks_only_among_the_packs_it_is_given():
    packs = load_packs()
    assert named_frameworks("per ISO 27001 and GDPR", {"gdpr": packs["gdpr"]}) == [packs["gdpr"]]


def test_it_warns_about_a_named_framework_the_workspace_has_not_enabled():
    ctx = Context(task="Map our access control practices to NIST CSF 2.0 PR.AA",
                  enabled_frameworks=("ISO/IEC 27001:2022", "GDPR"))
    [warning] = task_framework_warnings(ctx)
    assert "NIST CSF 2.0" in warning and "not enabled" in warning and "ISO/IEC 27001:2022, GDPR" in warning


@pytest.mark.parametrize("task, enabled", [
    ("Map our practices to NIST CSF 2.0", ("ISO/IEC 27001:2022", "NIST CSF 2.0")),
    ("Access control policy per ISO 27001", ("ISO 27001:2022",)),  # an enabled name written another way
    ("Asset register", ("GDPR",)),
    ("Map our practices to NIST CSF 2.0", ()),  # a workspace that enables nothing restricts nothing
])
def test_it_says_nothing_when_the_named_frameworks_are_enabled(task, enabled):
    assert task_framework_warnings(Context(task=task, enabled_frameworks=enabled)) == []
