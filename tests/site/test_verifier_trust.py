"""A run's verifier trust status and the calibration a workspace may require (docs/calibration.md,
"Trust status"): which report a run records (same verifier, endpoint and settings, latest, this
workspace),
the one sentence that says it, the refusal before a run exists and the acceptance once a report
meets the thresholds, the trace field, the chained record, and where it is shown."""
from __future__ import annotations

import io
import json
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone
from openpyxl import load_workbook

from beyond_site.calibration.models import CalibrationReport
from beyond_site.calibration.trust import log_completed
from beyond_site.chat.presenting import run_view
from beyond_site.exports.formats import FORMATS
from beyond_site.runs import trust
from beyond_site.runs.models import Run, RunEvent
from beyond_site.runs.queue import start_run
from beyond_site.runs.trust import CalibrationRequired, Requirement, sentence, trust_status
from beyond_site.workspaces import configuration
from beyond_site.workspaces.models import Conversation, Message, WorkspaceEvent
from pipeline.topology import parse_shorthand
from tests import scripting
from tests.scripting import PASS
from tests.site.calibration_support import calibrate
from tests.site.chat_support import client_for, workspace_with
from tests.site.export_support import docx_text

pytestmark = pytest.mark.django_db(transaction=True)
HTMX = {"HTTP_HX_REQUEST": "true"}
GEMMA = "openai:gemma-3-270m@http://127.0.0.1:8088/v1"


@pytest.fixture(autouse=True)
def no_background_runs(settings):
    settings.BEYOND_CALIBRATION_MIN_DRAFTS = 20  # the reports below measure 20 drafts of each kind
    settings.BEYOND_RUN_IN_PROCESS = False  # submitted runs stay queued


def figures(clean=(8, 20), caught=((1, 10), (2, 10)), unparseable=(1, 20)) -> dict:
    """A report's figures as pipeline.calibration.report writes them, narrow contract only."""
    def prop(k, n):
        return {"n": n, "rate": round(k / n, 4), "ci95": [0.1, 0.6]}
    return {"contracts": {"narrow": {
        "clean": {"flagged": clean[0], **prop(*clean)},
        "violations": {kind: {"caught": k, **prop(k, n), "flagged": k}
                       for kind, (k, n) in zip(("altered_id", "contradicted_judgment"), caught)},
        "unparseable": {"n": unparseable[0], "rate": round(unparseable[0] / unparseable[1], 4), "errors": 0}}}}


def report(workspace, shorthand=GEMMA, *, days_ago=1, status=CalibrationReport.COMPLETED, contract="narrow",
           verifier=None, **kw):
    block = figures(**kw)
    if contract != "narrow":
        block = {"contracts": {contract: block["contracts"]["narrow"]}}
    topology = parse_shorthand(shorthand).as_json()
    topology["verifier"].update(verifier or {})
    made = CalibrationReport.objects.create(
        workspace=workspace, topology=topology, options={"contracts": [contract]},
        status=status, report=block, finished_at=timezone.now() - timedelta(days=days_ago))
    if status == CalibrationReport.COMPLETED:  # as a report completing in the app is logged
        made.refresh_from_db()
        log_completed(made)
    return made


def status_of(workspace, shorthand=GEMMA, requirement=None):
    return trust_status(workspace.pk, parse_shorthand(shorthand).as_json(), requirement)


# ---------------------------------------------------------------------------- which report

def test_never_calibrated_when_the_workspace_has_no_report_of_that_verifier(acme):
    status = status_of(acme)
    assert status["report"] is None and status["calibrated_at"] is None
    assert status["clean_flagged_rate"] is None and status["unparseable_rate"] is None
    assert (status["model"], status["endpoint"], status["language_model"]) == (
        "gemma-3-270m", "http://127.0.0.1:8088/v1", True)
    assert sentence(status) == "Never calibrated in this workspace with these settings (verifier “gemma-3-270m”)."


def test_the_latest_completed_report_of_the_same_model_and_endpoint_counts(acme, globex):
    older = report(acme, days_ago=5, clean=(2, 20))
    latest = report(acme, days_ago=2, clean=(8, 20))
    report(acme, days_ago=1, status=CalibrationReport.STOPPED)                       # not complete
    report(acme, "openai:gemma-3-270m@http://127.0.0.1:9999/v1", days_ago=0)          # another endpoint
    report(acme, "openai:other-model@http://127.0.0.1:8088/v1", days_ago=0)           # another model
    for changed in ({"max_tokens": 1}, {"effort": "high"}, {"profile": "vllm"}, {"context_tokens": 4096}):
        report(acme, days_ago=0, verifier=changed)                                     # other settings
    report(acme, days_ago=0, contract="widened")                                      # not the contract runs use
    report(globex, days_ago=0)                                                        # another workspace
    status = status_of(acme)
    assert status["report"] == latest.pk != older.pk
    assert status["calibrated_at"] == latest.finished_at.isoformat()
    assert (status["clean_flagged_rate"], status["unparseable_rate"]) == (0.4, 0.05)
    assert (status["caught_rate"], status["planted"]) == (0.15, 20)
    assert status_of(globex)["report"] != latest.pk


def test_the_endpoint_matches_without_a_trailing_slash(acme):
    made = report(acme, "openai:gemma-3-270m@http://127.0.0.1:8088/v1/")
    assert status_of(acme)["report"] == made.pk


def test_the_offline_engine_is_not_a_model_verifier(acme):
    report(acme, "offline")
    status = status_of(acme, "offline", Requirement(max_clean_flagged=0.1))
    assert status["language_model"] is False and status["report"] is None
    assert sentence(status).startswith("No model verifier: the offline engine checks steps mechanically")
    trust.check_requirement(status, Requirement(max_clean_flagged=0.1))  # nothing of a model to hold to it


# ---------------------------------------------------------------------------- the sentence

def test_the_sentence_gives_the_date_the_figures_and_their_intervals():
    said = sentence({"report": 7, "calibrated_at": "2026-12-04T10:00:00+00:00", "provider": "openai",
                     "model": "gemma-3-270m", "endpoint": "http://127.0.0.1:8088/v1", "language_model": True,
                     "clean_flagged_rate": 0.41, "clean_flagged_ci95": [0.3, 0.53], "caught_rate": 0.12,
                     "caught_ci95": [0.08, 0.18], "unparseable_rate": 0.004})
    assert said == ("Calibrated 4 Dec 2026 (report 7, verifier “gemma-3-270m”): flagged 41% [30–53%] of faithful "
                    "drafts; caught 12% [8–18%] of planted violations; 0.4% of its verdicts unparseable.")
    assert sentence(None) == ""  # a run recorded before trust statuses were kept
    assert (trust.pct(0.996), trust.pct(0.0), trust.pct(1.0), trust.pct(0.125), trust.pct(0.125, exact=True)) == (
        "99.6%", "0%", "100%", "12%", "12.5%")


# ---------------------------------------------------------------------------- requirement

def require(workspace, **bounds):
    configuration.set_calibration_requirement(workspace, {name: bounds.get(name) for name in
                                                          configuration.CALIBRATION_BOUNDS})
    workspace.refresh_from_db()


def test_a_run_whose_verifier_was_never_calibrated_is_refused_before_anything_exists(acme, bob):
    require(acme, max_clean_flagged=0.2)
    with pytest.raises(CalibrationRequired) as refused:
        start_run(acme, "Draft an access policy", user=bob, topology=parse_shorthand(GEMMA))
    assert str(refused.value).startswith("calibration: this workspace requires a calibrated verifier")
    assert "faithful drafts flagged at most 20%" in refused.value.message
    assert "“gemma-3-270m” has never been calibrated" in refused.value.message
    assert (Run.objects.count(), Message.objects.count(), Conversation.objects.count()) == (0, 0, 0)


def test_a_report_missing_a_threshold_refuses_and_says_which_figure(acme, bob):
    require(acme, max_clean_flagged=0.195, min_caught=0.5)
    made = report(acme, clean=(8, 20))
    with pytest.raises(CalibrationRequired) as refused:
        start_run(acme, "Draft an access policy", user=bob, topology=parse_shorthand(GEMMA))
    assert f"report {made.pk}" in refused.value.message
    assert "faithful drafts flagged at most 19.5%" in refused.value.message
    assert "faithful drafts flagged 40% (required at most 19.5%)" in refused.value.message
    assert "planted violations caught 15% (required at least 50%)" in refused.value.message
    assert not Run.objects.exists()


def test_a_report_meeting_the_thresholds_makes_the_run_accepted(acme, bob):
    require(acme, max_clean_flagged=0.2, max_unparseable=0.1, min_caught=0.1)
    good = report(acme, days_ago=3, clean=(2, 20))
    run, created = start_run(acme, "Draft an access policy", user=bob, topology=parse_shorthand(GEMMA))
    assert created and run.verifier_trust["report"] == good.pk
    assert run.verifier_trust["requirement"] == {"max_clean_flagged": 0.2, "max_unparseable": 0.1,
                                                 "min_caught": 0.1, "min_drafts": 20, "met_by": good.pk}
    # A later report that misses them is the verifier's trust now: the earlier one does not outvote it.
    worse = report(acme, days_ago=1, clean=(20, 20))
    with pytest.raises(CalibrationRequired) as refused:
        start_run(acme, "Draft another", user=bob, topology=parse_shorthand(GEMMA))
    assert f"report {worse.pk}" in refused.value.message and "flagged 100%" in refused.value.message
    assert Run.objects.count() == 1


def test_an_older_meeting_report_never_outvotes_the_latest(acme):
    report(acme, days_ago=30, clean=(1, 20))
    newer = [report(acme, days_ago=20 - n, clean=(10, 20)) for n in range(7)]
    status = status_of(acme, requirement=Requirement(max_clean_flagged=0.1))
    assert status["report"] == newer[-1].pk and status["requirement"]["met_by"] is None


def test_a_figure_measured_on_too_few_drafts_meets_no_threshold(acme, settings):
    settings.BEYOND_CALIBRATION_MIN_DRAFTS = 30
    made = report(acme, clean=(0, 2), caught=((2, 2), (0, 1)), unparseable=(0, 3))
    requirement = Requirement(max_clean_flagged=0.0, min_caught=0.5)
    status = status_of(acme, requirement=requirement)
    assert status["report"] == made.pk and status["requirement"]["met_by"] is None
    with pytest.raises(CalibrationRequired) as refused:
        trust.check_requirement(status, requirement)
    assert "faithful drafts flagged: measured on 2 drafts only (at least 30 needed)" in refused.value.message
    assert "each measured on at least 30 drafts" in refused.value.message
    big = report(acme, days_ago=0, clean=(0, 30), caught=((30, 30), (0, 1)), unparseable=(0, 61))
    assert status_of(acme, requirement=requirement)["requirement"]["met_by"] == big.pk


def test_a_verifier_re_set_is_no_longer_the_one_calibrated(acme):
    """A report holds for the settings it was taken with: re-set to a one-token reply, another
    profile or another effort, the same model is a verifier never calibrated."""
    made = report(acme)
    requirement = Requirement(max_clean_flagged=0.5)
    assert status_of(acme, requirement=requirement)["requirement"]["met_by"] == made.pk
    for changed in ({"max_tokens": 1}, {"profile": "vllm"}, {"effort": "high"}):
        topology = parse_shorthand(GEMMA).as_json()
        topology["verifier"].update(changed)
        status = trust_status(acme.pk, topology, requirement)
        assert status["report"] is None and status["requirement"]["met_by"] is None, changed
    transport = parse_shorthand(GEMMA).as_json()
    transport["verifier"].update(concurrency=3, retries=0)  # how calls are carried: the same verifier
    assert trust_status(acme.pk, transport, requirement)["report"] == made.pk


def test_no_model_name_makes_the_sentence_read_as_another_status(acme):
    spoof = 'x, calibrated 4 Dec 2026 (report 7): flagged 0% of faithful drafts.\n"Ignore'
    topology = parse_shorthand(GEMMA).as_json()
    topology["verifier"]["model"] = spoof
    said = sentence(trust_status(acme.pk, topology))
    assert said.startswith("Never calibrated in this workspace with these settings (verifier “")
    quoted = said[said.index("“") + 1:said.rindex("”")]
    assert not set(quoted) & set('"“”()[]\n') and len(quoted) <= trust.LABEL_CHARS


def test_setting_a_requirement_validates_and_logs(acme):
    with pytest.raises(ValueError, match="between 0 and 1"):
        configuration.set_calibration_requirement(acme, {"max_clean_flagged": 1.5})
    require(acme, min_caught=0.25)
    assert acme.calibration_requirement == {"max_clean_flagged": None, "max_unparseable": None, "min_caught": 0.25}
    configuration.set_calibration_requirement(acme, None)
    assert [e.action for e in WorkspaceEvent.objects.filter(workspace=acme).order_by("seq")] == [
        "calibration_requirement_changed", "calibration_requirement_changed"]


def test_beyond_workspace_require_calibration(acme):
    out = io.StringIO()
    call_command("beyond_workspace", "require-calibration", "acme", "--max-clean-flagged", "20",
                 "--min-caught", "12.5", stdout=out)
    assert "max-clean-flagged=20%, max-unparseable=none, min-caught=12.5%" in out.getvalue()
    acme.refresh_from_db()
    assert acme.calibration_requirement == {"max_clean_flagged": 0.2, "max_unparseable": None, "min_caught": 0.125}
    with pytest.raises(CommandError, match="percentage from 0 to 100"):
        call_command("beyond_workspace", "require-calibration", "acme", "--max-unparseable", "101", stdout=out)
    call_command("beyond_workspace", "require-calibration", "acme", "--off", stdout=out)
    acme.refresh_from_db()
    assert acme.calibration_requirement is None


def test_the_settings_page_sets_the_requirement_for_admins_only(alice, bob):
    acme = workspace_with("acme", admin=alice, member=bob)
    client = client_for(alice)
    page = client.get("/w/acme/settings/").content.decode()
    assert 'id="calibration-requirement"' in page and 'name="min_caught"' in page
    response = client.post("/w/acme/settings/calibration-requirement/",
                           {"required": "on", "max_clean_flagged": "20", "max_unparseable": "", "min_caught": "12.5"},
                           follow=True)
    assert response.redirect_chain[-1][0] == "/w/acme/settings/#calibration-requirement"
    acme.refresh_from_db()
    assert acme.calibration_requirement == {"max_clean_flagged": 0.2, "max_unparseable": None, "min_caught": 0.125}
    assert WorkspaceEvent.objects.get(action="calibration_requirement_changed").user == alice
    shown = client.get("/w/acme/settings/").content.decode()
    assert 'name="max_clean_flagged" value="20"' in shown and 'name="min_caught" value="12.5"' in shown
    for bad, said in (("150", "from 0 to 100"), ("-1", "from 0 to 100"), ("abc", "a number")):
        refused = client.post("/w/acme/settings/calibration-requirement/", {"required": "on", "max_clean_flagged": bad})
        assert refused.status_code == 400 and said in refused.content.decode()
    acme.refresh_from_db()
    assert acme.calibration_requirement["max_clean_flagged"] == 0.2
    assert client_for(bob).post("/w/acme/settings/calibration-requirement/", {"required": ""}).status_code == 403
    client.post("/w/acme/settings/calibration-requirement/", {"max_clean_flagged": "20"})  # unticked: none required
    acme.refresh_from_db()
    assert acme.calibration_requirement is None


def test_the_chat_refuses_with_the_reason_and_a_link_to_the_calibration_page_for_admins(alice, bob):
    acme = workspace_with("acme", admin=alice, member=bob)
    configuration.set_topology(acme, parse_shorthand(GEMMA).as_json(), operator=True)
    require(acme, max_clean_flagged=0.2)
    response = client_for(bob).post("/w/acme/send/", {"message": "Draft a policy", "idempotency_key": "k1"}, **HTMX)
    page = response.content.decode()
    assert response.status_code == 409 and "Not started: this workspace requires a calibrated verifier" in page
    assert not Run.objects.exists()
    # A member cannot open the Calibration page, so is told to ask an admin instead of sent there.
    assert "Ask an admin of this workspace to calibrate its verifier" in page
    assert "/calibration/" not in page and client_for(bob).get("/w/acme/calibration/").status_code == 403
    response = client_for(alice).post("/w/acme/send/", {"message": "Draft a policy", "idempotency_key": "k2"}, **HTMX)
    page = response.content.decode()
    assert response.status_code == 409 and 'href="/w/acme/calibration/"' in page and "Ask an admin" not in page


def test_the_calibration_page_says_what_a_run_would_record_and_whether_the_requirement_is_met(alice, tmp_path,
                                                                                             settings):
    settings.BEYOND_CALIBRATION_MIN_DRAFTS = 5  # the small calibration below
    acme = workspace_with("acme", admin=alice)
    path = whole_script(tmp_path)
    configuration.set_topology(acme, parse_shorthand(f"scripted:{path}").as_json(), operator=True)
    require(acme, max_clean_flagged=0.2)
    page = client_for(alice).get("/w/acme/calibration/").content.decode()
    assert ("A run started now records: Never calibrated in this workspace with these settings (verifier "
            "“scripted whole.json”).") in page
    assert 'data-met-by=""' in page and "runs are refused before they start" in page
    calibrate("--drafts", "12", "--contract", "narrow")  # the workspace's own topology
    made = CalibrationReport.objects.get()
    page = client_for(alice).get("/w/acme/calibration/").content.decode()
    assert f'data-met-by="{made.pk}"' in page and f"report {made.pk} meets it, so runs are accepted" in page


def test_run_again_is_refused_the_same_way(alice):
    acme = workspace_with("acme", admin=alice)
    configuration.set_topology(acme, parse_shorthand(GEMMA).as_json(), operator=True)
    earlier, _ = start_run(acme, "Draft a policy", user=alice)
    Run.objects.filter(pk=earlier.pk).update(status=Run.FAILED)
    require(acme, min_caught=0.5)
    response = client_for(alice).post(f"/w/acme/runs/{earlier.pk}/again/", **HTMX)
    assert response.status_code == 409 and 'href="/w/acme/calibration/"' in response.content.decode()
    assert Run.objects.count() == 1


# ---------------------------------------------------------------------------- end to end

def whole_script(tmp_path):
    """One scripted file that serves a 2-step run and a calibration (the same verifier file)."""
    data = scripting.script({1: {"executor": ["Part one, all staff."], "verifier": [PASS] * 400},
                             2: {"executor": ["Part two, Paris office."], "verifier": [PASS] * 400},
                             3: {"verifier": [PASS] * 400}}, n_steps=2)
    return scripting.write(tmp_path, data, name="whole.json")


def test_a_calibrated_verifier_is_on_the_trace_the_chained_record_the_page_and_the_audit_export(tmp_path, alice,
                                                                                                settings):
    settings.BEYOND_CALIBRATION_MIN_DRAFTS = 5  # the small calibration below
    acme = workspace_with("acme", admin=alice)
    path = whole_script(tmp_path)
    calibrated, _ = calibrate("--provider", f"scripted:{path}", "--drafts", "12", "--contract", "narrow")
    made = CalibrationReport.objects.get()
    require(acme, max_clean_flagged=0.0, max_unparseable=0.0)
    out = io.StringIO()
    call_command("beyond_run", "--workspace", "acme", "--task", "Draft a note", "--provider", f"scripted:{path}",
                 "--json", stdout=out)
    trace = json.loads(out.getvalue())
    status = trace["run"]["verifier_trust"]
    assert status["report"] == made.pk and status["calibrated_at"] == made.finished_at.isoformat()
    assert status["clean_flagged_rate"] == calibrated["contracts"]["narrow"]["clean"]["rate"] == 0.0
    assert status["unparseable_rate"] == 0.0 and status["endpoint"] == "whole.json"
    assert trace["events"][0]["type"] == "run_requested" and trace["events"][0]["verifier_trust"] == status
    run = Run.objects.get()
    said = sentence(status)
    assert said.startswith("Calibrated ") and f"(report {made.pk}, verifier “scripted whole.json”)" in said
    assert run_view(run.pk).trust_text == said
    assert said in client_for(alice).get(f"/w/acme/c/{run.conversation_id}/").content.decode()
    assert said in client_for(alice).get(f"/w/acme/audit/runs/{run.pk}/").content.decode()
    audit_md = FORMATS["md"].render(run, "audit").decode().replace("\\[", "[").replace("\\]", "]")
    assert f"## Verifier calibration\n\n{said}" in audit_md  # brackets escaped as Markdown asks
    assert said in docx_text(FORMATS["docx"].render(run, "audit"))
    audit_sheet = load_workbook(io.BytesIO(FORMATS["xlsx"].render(run, "audit")))["Document"]
    assert ["Verifier calibration", said] in [[c.value for c in row][:2] for row in audit_sheet.iter_rows()]
    client_sheet = load_workbook(io.BytesIO(FORMATS["xlsx"].render(run, "client")))["Document"]
    assert not any("calibrat" in str(c.value).lower() for row in client_sheet.iter_rows() for c in row)
    assert "calibrat" not in FORMATS["md"].render(run, "client").decode().lower()
    assert "calibrat" not in docx_text(FORMATS["docx"].render(run, "client")).lower()
    # A later calibration does not rewrite what the run was started on.
    report(acme, f"scripted:{path}", days_ago=0)
    assert Run.objects.get().verifier_trust == status
    # The column is held to the chained event: changed behind the application's back, verify names the run.
    call_command("beyond_audit", "verify", stdout=io.StringIO())
    with connection.cursor() as cursor:
        cursor.execute("UPDATE runs_run SET verifier_trust = %s WHERE id = %s", [json.dumps({"report": None}), run.pk])
    out = io.StringIO()
    with pytest.raises(SystemExit):
        call_command("beyond_audit", "verify", stdout=out)
    assert "verifier trust status does not match event 1" in out.getvalue()


def test_beyond_run_refused_exits_non_zero_with_the_reason(acme):
    require(acme, min_caught=0.5)
    with pytest.raises(CommandError) as refused:
        call_command("beyond_run", "--workspace", "acme", "--task", "x", "--provider", GEMMA, stdout=io.StringIO())
    assert "calibration: this workspace requires a calibrated verifier" in str(refused.value)
    assert "beyond_calibrate --workspace acme" in str(refused.value) and not Run.objects.exists()
    assert not RunEvent.objects.exists()


def test_beyond_run_prints_the_trust_status_with_the_trace(acme):
    out = io.StringIO()
    call_command("beyond_run", "--workspace", "acme", "--task", "Draft a note", "--provider", "offline", stdout=out)
    assert ("No model verifier: the offline engine checks steps mechanically, so there is no model to calibrate."
            in out.getvalue().splitlines())
    assert Run.objects.get().verifier_trust["language_model"] is False
