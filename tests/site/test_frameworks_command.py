"""`beyond_frameworks import-oscal` and `list`: OSCAL catalogues become packs workspaces can enable."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from beyond_site.audit.changes import change_rows
from beyond_site.workspaces import configuration
from beyond_site.workspaces import knowledge
from beyond_site.workspaces.changelog import verify_changes
from beyond_site.runs.context import assemble_context
from beyond_site.workspaces.frameworks import available_packs
from beyond_site.workspaces.models import FrameworkPack, Workspace, WorkspaceEvent
from tests.site.chat_support import client_for
from tests.site.context_support import queued_run

pytestmark = pytest.mark.django_db

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "oscal" / "nist-csf-2.0-govern-protect.json"
CATALOGUES = Path(__file__).resolve().parents[1] / "fixtures" / "oscal"


@pytest.fixture
def superuser(alice):
    """Alice as a superuser, to whom the Django admin is open."""
    alice.is_staff = alice.is_superuser = True
    alice.save()
    return alice


def run(*args) -> str:
    out = io.StringIO()
    call_command("beyond_frameworks", *args, stdout=out)
    return out.getvalue()


def test_it_imports_an_oscal_catalogue_as_a_pack_a_workspace_can_enable():
    out = run("import-oscal", str(FIXTURE), "--key", "csf-lite", "--name", "CSF Lite")
    assert "Imported framework pack csf-lite (CSF Lite): 105 entries" in out
    pack = available_packs()["csf-lite"]
    assert pack.get("GV.OC").title == "Organizational Context"
    workspace = Workspace.objects.create(slug="acme", name="Acme")
    configuration.set_enabled_frameworks(workspace, ["gdpr", "csf-lite"])
    ctx = assemble_context(queued_run(workspace, "Describe our organizational context under CSF Lite"))
    assert "CSF Lite" in ctx.enabled_frameworks
    assert ("CSF Lite", "GV.OC") in {(e.framework, e.ref) for e in ctx.frameworks}
    assert "csf-lite" in run("list") and "imported" in run("list")


def test_importing_again_updates_the_pack_instead_of_duplicating_it():
    run("import-oscal", str(FIXTURE), "--key", "csf-lite")
    assert "Updated framework pack csf-lite" in run("import-oscal", str(FIXTURE), "--key", "csf-lite")
    assert FrameworkPack.objects.count() == 1


def test_it_derives_key_and_name_from_the_catalogue_title():
    run("import-oscal", str(FIXTURE))
    row = FrameworkPack.objects.get()
    assert row.name == "Electronic Version of NIST Cybersecurity Framework 2.0"
    assert row.key == "electronic-version-of-nist-cybersecurity-framework-20"


@pytest.mark.parametrize("content, message", [
    ("{not json", "is not valid JSON"),
    ("[1, 2]", "is not an OSCAL catalogue"),
    ('{"profile": {}}', "is not an OSCAL catalogue"),
    ('{"catalog": {"metadata": {"title": "Empty"}}}', "nothing to import"),
    ('{"catalog": {"metadata": {}, "groups": [{"title": "no id"}]}}', "malformed OSCAL catalogue"),
])
def test_it_refuses_a_bad_file_with_a_clear_message(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(CommandError, match=message):
        run("import-oscal", str(path), "--key", "bad")
    assert not FrameworkPack.objects.exists()


def test_it_refuses_a_missing_file_and_a_shipped_key(tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        run("import-oscal", str(tmp_path / "nope.json"))
    with pytest.raises(CommandError, match="shipped framework pack"):
        run("import-oscal", str(FIXTURE), "--key", "gdpr")


def test_it_lists_the_shipped_packs():
    out = run("list")
    assert "iso27001-2022" in out and "ISO/IEC 27001:2022" in out and "shipped" in out


@pytest.mark.parametrize("name, entries", [("NIST_SP-800-53_rev5_catalog-min_v5.0.1.json", 1209),
                                           ("NIST_CSF_v2.0_catalog-min.json", 225)])
def test_it_imports_the_full_nist_catalogues(name, entries):
    out = run("import-oscal", str(CATALOGUES / name), "--key", "imported-" + str(entries))
    assert f": {entries} entries" in out


def test_an_imported_pack_is_built_once_and_again_when_its_row_changes():
    from beyond_site.workspaces.frameworks import imported_packs
    run("import-oscal", str(FIXTURE), "--key", "csf-lite")
    first = imported_packs()["csf-lite"]
    assert imported_packs()["csf-lite"] is first  # unchanged row: the pack already built
    row = FrameworkPack.objects.get(key="csf-lite")
    row.data["entries"][0]["title"] = "Renamed by a re-import"
    row.save()
    renamed = imported_packs()["csf-lite"]
    assert renamed is not first and next(iter(renamed.entries.values())).title == "Renamed by a re-import"
    row.delete()
    assert "csf-lite" not in imported_packs()


def test_a_run_start_reads_the_imported_packs_once_for_its_context_and_its_checks():
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from beyond_site.runs.runner import starting as _starting
    run("import-oscal", str(FIXTURE), "--key", "csf-lite", "--name", "CSF Lite")
    workspace = Workspace.objects.create(slug="acme", name="Acme")
    configuration.set_enabled_frameworks(workspace, ["gdpr", "csf-lite"])
    queued = queued_run(workspace, "Describe our organizational context under CSF Lite")
    with CaptureQueriesContext(connection) as queries:
        start = _starting(queued.pk)
    ctx, packs = start.context, start.packs
    assert [p.name for p in packs] == ["CSF Lite"] and "CSF Lite" in ctx.enabled_frameworks
    assert sum('FROM "workspaces_frameworkpack"' in q["sql"] for q in queries.captured_queries) == 1


def test_importing_updating_and_removing_a_pack_is_logged_in_the_workspaces_that_enabled_it(superuser):
    """Packs are site-wide: what a workspace's runs are told of a framework changes with its pack,
    so each change is in the change log of every workspace that enabled it, and of no other."""
    run("import-oscal", str(FIXTURE), "--key", "csf-lite", "--name", "CSF Lite")
    acme, globex = (Workspace.objects.create(slug=s, name=s) for s in ("acme", "globex"))
    configuration.set_enabled_frameworks(acme, ["gdpr", "csf-lite"])
    configuration.set_enabled_frameworks(globex, ["gdpr"])

    def pack_changes(workspace):
        return list(WorkspaceEvent.objects.filter(workspace=workspace, action__startswith="framework_pack_")
                    .order_by("seq"))

    run("import-oscal", str(FIXTURE), "--key", "csf-lite", "--name", "CSF Lite")
    assert pack_changes(acme) == []  # the same catalogue again: nothing changed
    run("import-oscal", str(FIXTURE), "--key", "csf-lite", "--name", "CSF Lite 2.0")
    [updated] = pack_changes(acme)
    assert updated.action == "framework_pack_updated" and updated.via == WorkspaceEvent.COMMAND
    assert updated.detail == {"pack": "csf-lite"}
    assert (updated.before["name"], updated.after["name"]) == ("CSF Lite", "CSF Lite 2.0")
    assert updated.before["entries"] == updated.after["entries"] == 105
    assert updated.before["sha256"] != updated.after["sha256"]

    admin = client_for(superuser)
    row = FrameworkPack.objects.get(key="csf-lite")
    assert admin.post(f"/admin/workspaces/frameworkpack/{row.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not FrameworkPack.objects.exists()
    removed = pack_changes(acme)[-1]
    assert removed.action == "framework_pack_removed" and removed.after is None
    assert removed.via == WorkspaceEvent.ADMIN_SITE and removed.user == superuser
    assert "CSF Lite" not in assemble_context(queued_run(acme, "Describe our context under CSF Lite")).enabled_frameworks

    run("import-oscal", str(FIXTURE), "--key", "csf-lite", "--name", "CSF Lite")
    imported = pack_changes(acme)[-1]
    assert imported.action == "framework_pack_imported" and imported.before is None
    assert [r.action for r in pack_changes(acme)] == ["framework_pack_updated", "framework_pack_removed",
                                                      "framework_pack_imported"]
    assert pack_changes(globex) == []
    assert verify_changes(acme) == [] and verify_changes(globex) == []
    [shown_removed, shown_imported] = change_rows([removed, imported])
    assert shown_removed["what"] == "Framework pack removed" and shown_removed["lines"][0] == ("", "imported", "none")
    assert shown_imported["lines"][0] == ("", "none", "imported")


def test_a_refused_import_logs_nothing():
    acme = Workspace.objects.create(slug="acme", name="acme")
    run("import-oscal", str(FIXTURE), "--key", "csf-lite")
    configuration.set_enabled_frameworks(acme, ["csf-lite"])
    with pytest.raises(ValueError):
        knowledge.save_framework_pack({"key": "csf-lite", "name": "Empty", "entries": []})
    assert not WorkspaceEvent.objects.filter(action__startswith="framework_pack_").exists()


def test_removing_packs_with_the_admins_bulk_action_is_logged_too(superuser):
    acme = Workspace.objects.create(slug="acme", name="acme")
    run("import-oscal", str(FIXTURE), "--key", "csf-lite")
    run("import-oscal", str(FIXTURE), "--key", "csf-copy")
    configuration.set_enabled_frameworks(acme, ["csf-lite", "csf-copy"])
    admin = client_for(superuser)
    response = admin.post("/admin/workspaces/frameworkpack/", {
        "action": "delete_selected", "post": "yes",
        "_selected_action": [str(pk) for pk in FrameworkPack.objects.values_list("pk", flat=True)]})
    assert response.status_code == 302 and not FrameworkPack.objects.exists()
    removed = WorkspaceEvent.objects.filter(workspace=acme, action="framework_pack_removed").order_by("seq")
    assert [row.detail["pack"] for row in removed] == ["csf-copy", "csf-lite"]
    assert all(row.via == WorkspaceEvent.ADMIN_SITE for row in removed)


def test_a_pack_removed_twice_from_stale_copies_is_logged_once():
    """Two admins deleting the same pack from pages opened before either removal."""
    acme = Workspace.objects.create(slug="acme", name="acme")
    run("import-oscal", str(FIXTURE), "--key", "csf-lite")
    configuration.set_enabled_frameworks(acme, ["csf-lite"])
    first, second = FrameworkPack.objects.get(), FrameworkPack.objects.get()
    knowledge.delete_framework_pack(first)
    knowledge.delete_framework_pack(second)
    assert WorkspaceEvent.objects.filter(action="framework_pack_removed").count() == 1
    assert not FrameworkPack.objects.exists()


def test_a_pack_is_read_only_in_the_admin(superuser):
    run("import-oscal", str(FIXTURE), "--key", "csf-lite")
    admin = client_for(superuser)
    row = FrameworkPack.objects.get()
    page = admin.get(f"/admin/workspaces/frameworkpack/{row.pk}/change/")
    assert page.status_code == 200 and 'name="_save"' not in page.content.decode()
    admin.post(f"/admin/workspaces/frameworkpack/{row.pk}/change/", {"key": "x", "name": "y"})
    assert FrameworkPack.objects.get().updated_at == row.updated_at
