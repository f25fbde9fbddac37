"""A run's warnings are counted whole wherever they are counted: its steps', its own, and the
mechanical checks' findings on its recap (a recap with 25 findings once showed "Warnings 0")."""
from __future__ import annotations

import re

import pytest
from django.core.management import call_command

from beyond_site.runs.models import Run
from beyond_site.runs.sources import source_views
from beyond_site.workspaces.models import Membership
from tests.scripting import PASS
from tests.site.audit_support import run_task
from tests.site.chat_support import client_for

pytestmark = pytest.mark.django_db(transaction=True)

RECAP = "The document applies ISO/IEC 27001:2022 A.99.1 and GDPR Art. 123, which the brief never approved."
ROW = re.compile(r'<td><a href="/w/acme/audit/runs/(\d+)/">.*?</tr>', re.S)


@pytest.fixture
def runs(acme, carol, tmp_path):
    Membership.objects.create(user=carol, workspace=acme, role="auditor")
    noisy = run_task(tmp_path, {1: {"executor": ["Part one."], "verifier": [PASS]}}, summarizer=[RECAP])
    quiet = run_task(tmp_path, {1: {"executor": ["Part one, quietly."], "verifier": [PASS]}}, task="A quiet note")
    return Run.objects.get(pk=noisy["run"]["id"]), Run.objects.get(pk=quiet["run"]["id"])


def warnings_column(html: str) -> dict[int, str]:
    return {int(m.group(1)): re.findall(r"<td>([^<]*)</td>", m.group(0))[1] for m in ROW.finditer(html)}


def test_the_run_list_counts_the_recap_s_findings(runs, carol):
    noisy, quiet = runs
    assert len(noisy.summary_findings) == 2 and noisy.warnings == [] and not noisy.steps.exclude(warnings=[]).exists()
    shown = warnings_column(client_for(carol).get("/w/acme/audit/").content.decode())
    assert shown == {noisy.pk: "2", quiet.pk: "0"}


def test_the_warnings_filter_counts_them_too(runs, carol):
    noisy, quiet = runs
    client = client_for(carol)
    assert set(warnings_column(client.get("/w/acme/audit/?warnings=with").content.decode())) == {noisy.pk}
    assert set(warnings_column(client.get("/w/acme/audit/?warnings=without").content.decode())) == {quiet.pk}


def test_the_exports_count_them_in_the_verification_summary(runs, tmp_path):
    noisy, quiet = runs
    path = tmp_path / "noisy.md"
    call_command("beyond_export", str(noisy.pk), "--format", "md", "--out", str(path))
    assert "Warnings: 2 (2 in the recap)." in path.read_text()
    call_command("beyond_export", str(quiet.pk), "--format", "docx", "--out", str(tmp_path / "quiet.docx"))
    call_command("beyond_export", str(noisy.pk), "--format", "docx", "--out", str(tmp_path / "noisy.docx"))
    import docx
    text = "\n".join(p.text for p in docx.Document(str(tmp_path / "noisy.docx")).paragraphs)
    assert "Warnings: 2 (2 in the recap)." in text
    assert "Warnings:" not in "\n".join(p.text for p in docx.Document(str(tmp_path / "quiet.docx")).paragraphs)


ITEMS = [{"id": "E1", "url": "https://vendor.example/pricing", "status": "ok"},
         {"id": "E2", "url": "https://vendor.example/blog?utm_source=x", "final_url": "https://vendor.example/news",
          "status": "ok"},
         {"id": "E3", "url": "https://other.example/", "status": "ok"},
         {"id": "E4", "url": "https://third.example/", "status": "ok"},
         {"id": "E5", "url": "https://gone.example/", "status": "failed", "reason": "http_404"}]
BRIEF = {"evidence": [{"id": "E1", "url": "https://vendor.example/pricing"},
                      {"id": "E2", "url": "https://vendor.example/news"}]}


def test_a_source_is_used_only_when_the_document_cites_it():
    released = ["See [the price list](https://VENDOR.example/pricing/#plans).", "Also https://third.example."]
    views = {v.id: v.use for v in source_views(ITEMS, BRIEF, released)}
    assert views == {"E1": "used", "E2": "not-cited", "E3": "not-used", "E4": "cited-unapproved", "E5": "failed"}


def test_a_source_cited_at_the_address_it_redirected_to_is_used():
    views = {v.id: v.use for v in source_views(ITEMS, BRIEF, ["Read https://vendor.example/news."])}
    assert views["E2"] == "used" and views["E1"] == "not-cited"
