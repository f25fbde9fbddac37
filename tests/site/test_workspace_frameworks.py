"""Enabled frameworks: every shipped pack by default, narrowed by an admin, shown to the planner."""
from __future__ import annotations

import pytest

from beyond_site.workspaces import configuration
from beyond_site.runs.context import assemble_context
from beyond_site.workspaces.models import WorkspaceEvent
from pipeline.frameworks import SHIPPED_FRAMEWORKS
from tests.site.context_support import queued_run

pytestmark = pytest.mark.django_db


def test_a_new_workspace_has_every_shipped_pack_enabled(workspace):
    assert workspace.enabled_frameworks == SHIPPED_FRAMEWORKS


def test_an_admin_can_narrow_the_list_and_it_is_kept_in_display_order(workspace, alice):
    assert configuration.set_enabled_frameworks(workspace, ["gdpr", "iso27001-2022", "gdpr"], alice) == [
        "iso27001-2022", "gdpr"]
    workspace.refresh_from_db()
    assert workspace.enabled_frameworks == ["iso27001-2022", "gdpr"]
    assert WorkspaceEvent.objects.get(action="frameworks_changed").user == alice


def test_it_refuses_an_unknown_pack_and_changes_nothing(workspace):
    with pytest.raises(ValueError, match="unknown framework pack.*hipaa"):
        configuration.set_enabled_frameworks(workspace, ["gdpr", "hipaa"])
    workspace.refresh_from_db()
    assert workspace.enabled_frameworks == SHIPPED_FRAMEWORKS


def test_the_context_lists_enabled_frameworks_and_the_relevant_entries(workspace):
    configuration.set_enabled_frameworks(workspace, ["iso27001-2022", "gdpr", "nist-800-53r5"])
    ctx = assemble_context(queued_run(workspace, "Write a GDPR record of processing and a supplier policy"))
    assert ctx.enabled_frameworks == ("ISO/IEC 27001:2022", "GDPR", "NIST SP 800-53 Rev. 5")
    refs = {(e.framework, e.ref) for e in ctx.frameworks}
    assert ("ISO/IEC 27001:2022", "9") in refs and ("ISO/IEC 27001:2022", "A.5") in refs  # structure
    assert ("NIST SP 800-53 Rev. 5", "AC") in refs  # a family: structure of every enabled pack
    assert ("GDPR", "Art. 30") in refs  # the task names GDPR: its articles are in
    assert ("ISO/IEC 27001:2022", "A.5.19") in refs  # "supplier" matches the title
    assert ("NIST SP 800-53 Rev. 5", "AC-2") not in refs  # not named, title unrelated
    assert not any(e.framework == "SOC 2 TSC 2017" for e in ctx.frameworks)  # not enabled
    order = [(e.framework, e.ref) for e in ctx.frameworks]
    assert assemble_context(queued_run(workspace, "Write a GDPR record of processing and a supplier policy")
                            ).frameworks == ctx.frameworks and len(order) == len(set(order))


def test_the_framework_slice_stays_within_its_share_of_the_budget(workspace):
    configuration.set_enabled_frameworks(workspace, ["nist-800-53r5"])
    ctx = assemble_context(queued_run(workspace, "Map our controls to NIST SP 800-53"), budget=5000)
    assert 0 < len(ctx.frameworks) < 100
    assert any("entries of the frameworks the task names left out" in n for n in ctx.notes)
