"""One guard for every CSV the site writes (lib/csv_guard.py, after OWASP's "CSV Injection"): no
cell a spreadsheet would run as a formula, whatever separator it splits the file on (a semicolon
in much of Europe, a tab, a pipe), and numbers stay numbers."""
from __future__ import annotations

import csv
import io

import pytest

from beyond_site.calibration.models import CalibrationReport
from beyond_site.lib.csv_guard import FORMULA_STARTS, guarded_csv, safe_cell
from beyond_site.runs.models import Run
from tests.site.chat_support import client_for
from tests.site.test_calibration_pages import two_reports  # noqa: F401  (a fixture)
from tests.site.test_usage import RANGE, make_call, make_run

pytestmark = pytest.mark.django_db

HOSTILE = ['=HYPERLINK("http://evil.example","x")', "+1+1", "-2+3", "@SUM(A1)", "\t=1+1", "\r=1+1",
           "x;=1+1", "x,=1+1", "x\t=1+1", "x|=1+1", "x =1+1", "x;-2+3", "x;@SUM(A1)", "x\n=1+1",
           "＝1+1", "x;＋1+1"]
BENIGN = ["plain-model", "openai/gpt-4o-mini", "llama3:8b", "z-ai/glm-5.3", "2026-03", "executor", ""]


def cells_under_every_separator(text: str) -> list[str]:
    """Every cell a spreadsheet could see, splitting the file on each separator it may be set to."""
    cells = []
    for row in csv.reader(io.StringIO(text)):
        for cell in row:
            for separator in (",", ";", "\t", "|", " ", ":", "\n"):
                cells += cell.split(separator)
    return cells


def runs_as_formula(cell: str) -> bool:
    return cell.lstrip(" ").startswith(FORMULA_STARTS)


@pytest.mark.parametrize("value", HOSTILE)
def test_no_hostile_cell_is_a_formula_under_any_separator(value):
    assert not any(runs_as_formula(cell) for cell in cells_under_every_separator(guarded_csv(["a"], [[value]])))


@pytest.mark.parametrize("value", BENIGN)
def test_ordinary_text_is_left_alone(value):
    assert safe_cell(value) == value


@pytest.mark.parametrize("value", [-3, -0.5, 12, 1.5e-7, None])
def test_numbers_stay_numbers_and_none_is_an_empty_cell(value):
    assert safe_cell(value) == ("" if value is None else value)
    [row] = list(csv.reader(io.StringIO(guarded_csv(["n"], [[value]]))))[1:]
    assert row == ["" if value is None else str(value)]


def test_the_header_and_dict_rows_are_guarded_too():
    text = guarded_csv(["=head", "b"], [{"=head": "=x", "b": 2}, {"b": 3}])
    assert list(csv.reader(io.StringIO(text))) == [["'=head", "b"], ["'=x", "2"], ["", "3"]]


def test_the_usage_csv_defuses_a_formula_behind_a_semicolon(client, people, acme):
    run = make_run(acme, "2026-03-10", Run.COMPLETED)
    for model in ("x;=1+1", "x;-2+3", "plain-model"):
        make_call(run, "2026-03-10", "executor", model, (1, 1, 0, 0, 0), 0.1, "reported")
    client.force_login(people["auditor"])
    text = client.get("/w/acme/audit/usage.csv", RANGE).content.decode()
    assert "plain-model" in text
    assert not any(runs_as_formula(cell) for cell in cells_under_every_separator(text))


@pytest.mark.django_db(transaction=True)  # calibrating runs on threads of its own
def test_the_calibration_csv_defuses_a_formula_in_the_verifiers_name(people, two_reports):  # noqa: F811
    report = two_reports[0]
    topology = {**report.topology, "verifier": {**report.topology["verifier"], "model": "x;=HYPERLINK(\"h\")"}}
    CalibrationReport.objects.filter(pk=report.pk).update(topology=topology)
    text = client_for(people["admin"]).get(f"/w/acme/calibration/{report.pk}.csv").content.decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows and all(r["verifier"].startswith("scripted:x;") for r in rows)
    assert not any(runs_as_formula(cell) for cell in cells_under_every_separator(text))
