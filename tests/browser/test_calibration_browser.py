"""Calibration in Chromium: an auditor labels an issue on a run's audit page; an admin reads the
reports side by side and the false share of labelled issues. Nothing breaks the CSP."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import login, seeded_server


@pytest.fixture(scope="module")
def calibration_server(tmp_path_factory):
    """(base URL, seeded ids) of a server of its own, on a database holding the calibration scenario."""
    with seeded_server(tmp_path_factory, "calibration") as server:
        yield server


def test_an_auditor_labels_an_issue_false_with_a_note(page, calibration_server, csp_errors):
    base, ids = calibration_server
    login(page, base, "audrey")
    page.goto(f"{base}/w/calib/audit/runs/{ids['run']}/")
    issue = page.locator("#issue-labels .cal-issue").first
    expect(issue).to_contain_text("The draft does not name who approves access.")
    expect(issue).to_have_attribute("data-label", "")
    issue.locator("input[name=label][value=false]").check()
    issue.locator("input[name=note]").fill("The CISO approves access: the brief says so.")
    issue.get_by_role("button", name="Save label").click()
    page.wait_for_url(re.compile(rf"/w/calib/audit/runs/{ids['run']}/#issue-\d+-0$"))
    issue = page.locator("#issue-labels .cal-issue").first
    expect(issue).to_have_attribute("data-label", "false")
    expect(issue.locator(".cal-current")).to_contain_text("false by audrey")
    expect(issue.locator(".cal-current")).to_contain_text("The CISO approves access")
    expect(page.locator(".page-messages")).to_contain_text("Issue labelled false.")
    # an auditor labels but does not see the reports page
    assert page.goto(f"{base}/w/calib/calibration/").status == 403
    assert csp_errors == []


def test_an_admin_reads_the_reports_side_by_side(page, calibration_server, csp_errors):
    base, ids = calibration_server
    flagging, passing = ids["reports"]
    login(page, base, "adam")
    page.goto(f"{base}/w/calib/calibration/")
    clean = page.locator("#chart-clean svg")
    expect(clean).to_be_visible()
    expect(clean.locator(".cal-row")).to_have_count(4)
    expect(clean).to_contain_text(f"#{flagging} scripted:scripted")
    expect(clean).to_contain_text(f"#{passing} scripted:scripted")
    bar = clean.locator(".cal-series-narrow .cal-bar").nth(1)           # the flagging report: 100%
    assert bar.bounding_box()["width"] > 100
    fill = bar.evaluate("element => getComputedStyle(element).fill")
    assert fill == "rgb(47, 91, 211)"                                    # the stylesheet reached the SVG
    expect(page.locator("#chart-recall svg")).to_be_visible()
    expect(page.locator("#chart-unparseable svg")).to_be_visible()
    # choose one report to compare
    page.locator(f"input[name=r][value='{passing}']").uncheck()
    page.get_by_role("button", name="Compare the selected reports").click()
    expect(page.locator("#chart-clean svg .cal-row")).to_have_count(2)
    export = page.request.get(f"{base}/w/calib/calibration/{flagging}.csv")
    assert export.status == 200 and export.text().startswith("report,verifier,contract,measure")
    assert csp_errors == []


def test_the_labelled_issue_counts_in_the_false_share(page, calibration_server):
    base, ids = calibration_server
    login(page, base, "audrey")
    page.goto(f"{base}/w/calib/audit/runs/{ids['run']}/")
    issue = page.locator("#issue-labels .cal-issue").first
    issue.locator("input[name=label][value=real]").check()
    issue.get_by_role("button", name="Save label").click()
    expect(page.locator("#issue-labels .cal-issue").first).to_have_attribute("data-label", "real")
    page.context.clear_cookies()
    login(page, base, "adam")
    page.goto(f"{base}/w/calib/calibration/")
    chart = page.locator("#chart-labels-by-verifier svg")
    expect(chart).to_be_visible()
    expect(chart).to_contain_text("scripted:scripted")
    expect(chart).to_contain_text("0/1 false")                           # the latest label counts, once
