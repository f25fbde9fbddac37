"""Trust at a glance (issue 48, items 4 and 5): a model's pass from a verifier never calibrated, or
calibrated below the bar, reads "Passed · uncalibrated verifier" (or "· verifier below thresholds")
in a neutral colour with the trust sentence in its tip, in the chat, the run list, the audit page
and the audit edition; only a verifier meeting the workspace's requirement or the site's bar gets
the plain pass. And every surface names the engine each role used, never "Offline engine" when a
model verified."""
from __future__ import annotations

import re

import pytest

from pipeline import events as ev
from pipeline.events import Event
from beyond_site.exports.formats import FORMATS
from beyond_site.runs.models import Run
from beyond_site.runs.trust import BELOW_THRESHOLDS, UNCALIBRATED, pass_standing
from tests.site.chat_support import brief_ready, client_for, new_run, record, released, workspace_with

pytestmark = pytest.mark.django_db

GEMMA = {"provider": "openai", "model": "gemma-3-270m", "base_url": "http://127.0.0.1:8088/v1"}
OFFLINE = {"provider": "offline", "model": "beyond-offline-1"}
NEVER = {"report": None, "calibrated_at": None, "provider": "openai", "model": "gemma-3-270m",
         "endpoint": "http://127.0.0.1:8088/v1", "language_model": True, "clean_flagged_rate": None,
         "unparseable_rate": None}


def calibrated(flagged: float, drafts: int = 40) -> dict:
    return {**NEVER, "report": 7, "calibrated_at": "2026-12-04T10:00:00+00:00", "clean_flagged_rate": flagged,
            "clean_drafts": drafts, "unparseable_rate": 0.0, "caught_rate": 0.9, "planted": drafts}


def finished_run(alice, trust: dict, verifier=GEMMA, slug="acme"):
    run = new_run(workspace_with(slug, admin=alice), alice)
    topology = {"planner": OFFLINE, "executor": OFFLINE, "summarizer": OFFLINE, "verifier": verifier}
    Run.objects.filter(pk=run.pk).update(verifier_trust=trust, topology=topology, offline=True)
    run.refresh_from_db()
    record(run, brief_ready(2), released(1, "Part one."), released(2, "Part two.", badge="passed_after_rerender"),
           Event(ev.SummaryReady(summary="Done.")), Event(ev.RunCompleted()))
    return run


def pages(run, alice) -> tuple[str, str, str, str]:
    client = client_for(alice)
    slug = run.workspace.slug
    chat = client.get(f"/w/{slug}/c/{run.conversation_id}/").content.decode()
    listed = client.get(f"/w/{slug}/audit/").content.decode()
    audit = client.get(f"/w/{slug}/audit/runs/{run.pk}/").content.decode()
    edition = FORMATS["md"].render(run, "audit").decode()
    return chat, listed, audit, edition


def test_the_standing_of_a_models_pass(settings):
    settings.BEYOND_CALIBRATION_MIN_DRAFTS = 30
    assert pass_standing(NEVER) == UNCALIBRATED
    assert pass_standing(calibrated(0.5)) == BELOW_THRESHOLDS  # over the site's bar of 20% flagged
    assert pass_standing(calibrated(0.05, drafts=4)) == BELOW_THRESHOLDS  # too few drafts to count
    assert pass_standing(calibrated(0.05)) is None
    assert pass_standing({**calibrated(0.5), "requirement": {"met_by": 7}}) is None  # the workspace's own bar
    assert pass_standing({**calibrated(0.05), "requirement": {"met_by": None}}) == BELOW_THRESHOLDS
    assert pass_standing({"language_model": False}) is None and pass_standing(None) is None


def test_an_uncalibrated_verifiers_pass_says_so_everywhere(alice):
    run = finished_run(alice, NEVER)
    chat, listed, audit, edition = pages(run, alice)
    badges = re.findall(r'<span class="badge badge--(\w+)( badge--unproven)?"[^>]*data-standing="(\w+)"[^>]*'
                        r'title="([^"]*)"[^>]*>([^<]*)</span>', chat)
    assert [(b[0], b[1], b[2], b[4]) for b in badges] == [
        ("passed", " badge--unproven", "uncalibrated", "Passed · uncalibrated verifier"),
        ("passed_after_rerender", " badge--unproven", "uncalibrated", "Passed after re-render · uncalibrated verifier")]
    assert all(b[3].startswith("Never calibrated in this workspace") for b in badges)  # the sentence in its tip
    assert "by a model · uncalibrated verifier" in listed
    assert audit.count("passed · uncalibrated verifier") == 1 and "audit-badge-unproven" in audit
    assert "Its passes are an uncalibrated verifier's" in edition


def test_a_verifier_meeting_the_bar_gets_the_plain_pass(alice):
    run = finished_run(alice, calibrated(0.05))
    chat, listed, audit, edition = pages(run, alice)
    assert "badge--unproven" not in chat and "data-standing" not in chat
    assert re.search(r'<span class="badge badge--passed"[^>]*>Passed</span>', chat)
    assert "uncalibrated" not in listed and "below thresholds" not in listed
    assert "Its passes are" not in edition


def test_a_verifier_below_the_bar_says_so(alice):
    run = finished_run(alice, calibrated(0.6))
    chat, listed, _, edition = pages(run, alice)
    assert "Passed · verifier below thresholds" in chat and "by a model · verifier below thresholds" in listed
    assert "below the thresholds" in edition


def test_every_surface_names_each_roles_engine_never_offline_engine_when_a_model_verified(alice):
    run = finished_run(alice, NEVER)
    chat, listed, audit, _ = pages(run, alice)
    said = "offline (planner, executor, summarizer) · openai gemma-3-270m (verifier)"
    assert f"Engines: {said}" in chat and ">Offline engine<" not in chat
    assert f'data-engines="{said}"' in listed and f'data-engines="{said}"' in audit
    offline_only = finished_run(alice, {"language_model": False}, verifier=OFFLINE, slug="globex")
    chat = client_for(alice).get(f"/w/{offline_only.workspace.slug}/c/{offline_only.conversation_id}/").content.decode()
    assert ">Offline engine<" in chat and "Engines:" not in chat
