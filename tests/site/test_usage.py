"""Usage at a glance (/w/<slug>/audit/usage/ and usage.csv): the figures, "not reported", access,
escaping, the CSV's formula guard and a constant number of queries.

The record is seeded directly with known numbers: two months (March and April 2026), two roles
(executor, verifier), two models, and calls that reported no usage or no cost. Every expected
figure below is worked out by hand from the table in `seeded`.
"""
from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from html.parser import HTMLParser
from unittest import mock

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from beyond_site.runs.models import ModelCall, Run, Step
from beyond_site.workspaces.models import Workspace

pytestmark = pytest.mark.django_db

PAGE = "/w/acme/audit/usage/"
CSV_URL = "/w/acme/audit/usage.csv"
RANGE = {"date_from": "2026-03-01", "date_to": "2026-04-30"}
TOKENS = ("input_tokens", "output_tokens", "reasoning_tokens", "cache_read_tokens", "cache_write_tokens")


def at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC)


def make_run(workspace, day: str, status: str, steps: list[tuple[str, str | None]] = ()) -> Run:
    with mock.patch("django.utils.timezone.now", return_value=at(day)):
        run = Run.objects.create(workspace=workspace, task=f"task of {day}", topology={}, status=status)
    for index, (step_status, badge) in enumerate(steps):
        Step.objects.create(run=run, index=index, title=f"Step {index}", content_spec="", status=step_status,
                            badge=badge)
    return run


def make_call(run: Run, day: str, role: str, model: str, tokens: tuple | None, cost: float | None = None,
              source: str | None = None) -> ModelCall:
    """`tokens`: (input, output, reasoning, cache read, cache write), any of them None; None for all."""
    values = dict(zip(TOKENS, tokens or (None,) * 5))
    with mock.patch("django.utils.timezone.now", return_value=at(day)):
        return ModelCall.objects.create(run=run, role=role, provider="scripted", model=model, cost=cost,
                                        cost_source=source, **values)


@pytest.fixture
def seeded(people, acme):
    """Seven calls in three runs.

    | call | month | role     | model   | in  | out | reas | c.read | c.write | cost  | source    |
    | c1   | 03    | executor | model-a | 100 | 50  | 10   | 20     | 5       | 0.5   | reported  |
    | c2   | 03    | verifier | model-b | 200 | 30  | -    | 0      | 0       | 0.25  | estimated |
    | c3   | 03    | executor | model-a | -   | -   | -    | -      | -       | -     |           |
    | c4   | 04    | executor | model-b | 300 | 70  | 5    | 40     | 0       | 1.0   | reported  |
    | c5   | 04    | verifier | model-a | 400 | 20  | 0    | -      | -       | -     |           |
    | c6   | 04    | verifier | model-a | 50  | 10  | 2    | 0      | 0       | 0.125 | reported  |
    | c7   | 04    | executor | model-b | -   | -   | -    | -      | -       | -     |           |
    """
    march = make_run(acme, "2026-03-10", Run.COMPLETED, [(Step.RELEASED, "passed"), (Step.RELEASED, "warning")])
    april = make_run(acme, "2026-04-05", Run.HALTED,
                     [(Step.RELEASED, "passed_after_rerender"), (Step.HALTED, None)])
    failed = make_run(acme, "2026-04-20", Run.FAILED, [(Step.PENDING, None)])
    make_call(march, "2026-03-10", "executor", "model-a", (100, 50, 10, 20, 5), 0.5, "reported")
    make_call(march, "2026-03-11", "verifier", "model-b", (200, 30, None, 0, 0), 0.25, "estimated")
    make_call(march, "2026-03-12", "executor", "model-a", None)
    make_call(april, "2026-04-05", "executor", "model-b", (300, 70, 5, 40, 0), 1.0, "reported")
    make_call(april, "2026-04-06", "verifier", "model-a", (400, 20, 0, None, None))
    make_call(april, "2026-04-07", "verifier", "model-a", (50, 10, 2, 0, 0), 0.125, "reported")
    make_call(failed, "2026-04-20", "executor", "model-b", None)
    return people


class Tables(HTMLParser):
    """Every table of a page by id: its rows as lists of cell texts (whitespace squeezed)."""

    def __init__(self):
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._table = self._row = self._cell = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self._table = self.tables.setdefault(dict(attrs).get("id") or f"t{len(self.tables)}", [])
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self._table.append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data + " ")


def tables(response) -> dict[str, dict[str, list[str]]]:
    parser = Tables()
    parser.feed(response.content.decode())
    return {name: {row[0]: row[1:] for row in rows} for name, rows in parser.tables.items()}


def get_page(client, user, **params):
    client.force_login(user)
    response = client.get(PAGE, {**RANGE, **params})
    assert response.status_code == 200
    return response


def read_csv(client, user, **params) -> list[dict]:
    client.force_login(user)
    response = client.get(CSV_URL, {**RANGE, **params})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def test_the_page_sums_by_role_and_says_how_many_calls_did_not_report(client, seeded):
    by_role = tables(get_page(client, seeded["auditor"]))["usage-by-role"]
    assert by_role["executor"] == [
        "4",
        "400 2 calls not reported", "120 2 calls not reported", "15 2 calls not reported",
        "60 2 calls not reported", "5 2 calls not reported",
        "$1.5000 2 calls not reported",
    ]
    assert by_role["verifier"] == [
        "3", "650", "60", "2 1 call not reported", "0 1 call not reported", "0 1 call not reported",
        "$0.3750 $0.2500 of it estimated by a gateway; 1 call not reported",
    ]
    total = tables(get_page(client, seeded["auditor"]))["usage-total"]["All calls"]
    assert total == ["7", "1,050 2 calls not reported", "180 2 calls not reported", "17 3 calls not reported",
                     "60 3 calls not reported", "5 3 calls not reported",
                     "$1.8750 $0.2500 of it estimated by a gateway; 3 calls not reported"]


def test_the_page_sums_by_model(client, seeded):
    by_model = tables(get_page(client, seeded["admin"]))["chart-tokens-model-table"]
    assert by_model["model-a"] == [
        "4", "550 1 call not reported", "80 1 call not reported", "12 1 call not reported",
        "20 2 calls not reported", "5 2 calls not reported", "$0.6250 2 calls not reported",
    ]
    assert by_model["model-b"] == [
        "3", "500 1 call not reported", "100 1 call not reported", "5 2 calls not reported",
        "40 1 call not reported", "0 1 call not reported",
        "$1.2500 $0.2500 of it estimated by a gateway; 1 call not reported",
    ]


def test_the_page_gives_the_cost_per_month_and_role(client, seeded):
    page = get_page(client, seeded["auditor"])
    per_month = tables(page)["chart-cost-month-table"]
    assert per_month["Month"] == ["executor", "verifier", "All roles"]
    assert per_month["2026-03"] == ["$0.5000 1 call not reported", "$0.2500 $0.2500 of it estimated by a gateway",
                                    "$0.7500 $0.2500 of it estimated by a gateway; 1 call not reported"]
    assert per_month["2026-04"] == ["$1.0000 1 call not reported", "$0.1250 1 call not reported",
                                    "$1.1250 2 calls not reported"]
    body = page.content.decode()
    assert 'id="usage-calls">7<' in body and 'id="usage-runs">3<' in body
    # The chart is drawn on the server, with its table named as its description.
    assert '<svg class="usage-chart"' in body and 'aria-describedby="chart-cost-month-table"' in body
    assert "<script" not in body.split("</head>")[1]


def test_the_page_counts_runs_by_status_and_steps_by_badge(client, seeded):
    found = tables(get_page(client, seeded["auditor"]))
    assert found["chart-runs-status-table"] == {
        "Status": ["Runs"], "queued": ["0"], "running": ["0"], "completed": ["1"], "halted": ["1"], "failed": ["1"],
        "cancelled": ["0"], "declined": ["0"]}
    assert found["chart-steps-badge-table"] == {
        "Badge": ["Steps", "Runs with one"], "passed": ["1", "1"], "passed after re-render": ["1", "1"],
        "checked mechanically": ["0", "0"], "warning": ["1", "1"], "halted": ["1", "1"], "not released": ["1", "1"]}


def test_the_csv_has_one_row_per_month_role_and_model_with_the_same_numbers(client, seeded):
    rows = read_csv(client, seeded["auditor"])
    assert [(r["month"], r["role"], r["model"]) for r in rows] == [
        ("2026-03", "executor", "model-a"), ("2026-03", "verifier", "model-b"),
        ("2026-04", "executor", "model-b"), ("2026-04", "verifier", "model-a")]
    march_exec, march_verif, april_exec, april_verif = rows
    assert march_exec == {
        "month": "2026-03", "role": "executor", "model": "model-a", "calls": "2",
        "input_tokens": "100", "input_tokens_not_reported": "1", "output_tokens": "50",
        "output_tokens_not_reported": "1", "reasoning_tokens": "10", "reasoning_tokens_not_reported": "1",
        "cache_read_tokens": "20", "cache_read_tokens_not_reported": "1", "cache_write_tokens": "5",
        "cache_write_tokens_not_reported": "1", "cost_usd": "0.500000", "cost_estimated_usd": "",
        "cost_not_reported": "1"}
    # No call of the row reported reasoning tokens: an empty cell, not 0.
    assert (march_verif["reasoning_tokens"], march_verif["reasoning_tokens_not_reported"]) == ("", "1")
    assert (march_verif["cost_usd"], march_verif["cost_estimated_usd"]) == ("0.250000", "0.250000")
    assert (april_exec["input_tokens"], april_exec["input_tokens_not_reported"], april_exec["cost_usd"]) == \
        ("300", "1", "1.000000")
    assert (april_verif["input_tokens"], april_verif["cache_read_tokens"], april_verif["cache_read_tokens_not_reported"],
            april_verif["cost_usd"], april_verif["cost_not_reported"]) == ("450", "0", "1", "0.125000", "1")
    # The CSV adds up to the page's totals.
    assert sum(int(r["input_tokens"] or 0) for r in rows) == 1050
    assert sum(int(r["input_tokens_not_reported"]) for r in rows) == 2
    assert round(sum(float(r["cost_usd"] or 0) for r in rows), 6) == 1.875


def test_the_filters_narrow_to_a_role_a_model_and_a_range(client, seeded):
    verifier = tables(get_page(client, seeded["auditor"], role="verifier"))
    assert list(verifier["usage-by-role"]) == ["Role", "verifier"]
    assert verifier["chart-runs-status-table"]["failed"] == ["0"]  # its one call was an executor's
    model_b = read_csv(client, seeded["auditor"], model="model-b")
    assert {r["model"] for r in model_b} == {"model-b"} and len(model_b) == 2
    april = tables(get_page(client, seeded["auditor"], date_from="2026-04-01"))
    assert april["usage-total"]["All calls"][0] == "4"
    assert "2026-03" not in april["chart-cost-month-table"]
    assert april["chart-runs-status-table"]["completed"] == ["0"]


def test_a_bad_filter_is_ignored_with_its_error_shown(client, seeded):
    page = get_page(client, seeded["auditor"], model="no-such-model", date_to="2026-02-01")
    body = page.content.decode()
    assert body.count("(filter ignored)") == 2
    assert tables(page)["usage-total"]["All calls"][0] == "7"


def test_a_figure_no_call_reported_reads_not_reported_never_zero(client, people, acme):
    run = make_run(acme, "2026-03-10", Run.COMPLETED)
    make_call(run, "2026-03-10", "planner", "quiet-model", None)
    make_call(run, "2026-03-11", "planner", "quiet-model", None)
    row = tables(get_page(client, people["auditor"]))["usage-by-role"]["planner"]
    assert row == ["2", *["not reported by 2 calls"] * 5, "not reported by 2 calls"]
    [line] = read_csv(client, people["auditor"])
    assert [line[f] for f in TOKENS] == [""] * 5 and line["cost_usd"] == ""
    assert [line[f"{f}_not_reported"] for f in TOKENS] == ["2"] * 5 and line["cost_not_reported"] == "2"


def test_the_default_range_is_the_last_twelve_months(client, people, acme):
    old = make_run(acme, "2025-11-30", Run.COMPLETED)
    make_call(old, "2025-11-30", "executor", "model-a", (1, 1, 0, 0, 0), 0.01, "reported")
    recent = make_run(acme, "2025-12-01", Run.COMPLETED)
    make_call(recent, "2025-12-01", "executor", "model-a", (7, 1, 0, 0, 0), 0.02, "reported")
    client.force_login(people["auditor"])
    with mock.patch("django.utils.timezone.now", return_value=at("2026-11-15")):
        page = client.get(PAGE)
    found = tables(page)
    assert found["usage-total"]["All calls"][:2] == ["1", "7"]
    months = [m for m in found["chart-cost-month-table"] if m != "Month"]
    assert months[0] == "2025-12" and months[-1] == "2026-11" and len(months) == 12


def test_the_chart_starts_at_the_workspaces_creation_unless_calls_are_on_record_before(client, people, acme):
    Workspace.objects.filter(pk=acme.pk).update(created_at=at("2026-09-02"))
    run = make_run(acme, "2026-10-05", Run.COMPLETED)
    make_call(run, "2026-10-05", "executor", "model-a", (1, 1, 0, 0, 0), 0.01, "reported")
    client.force_login(people["auditor"])

    def months():
        with mock.patch("django.utils.timezone.now", return_value=at("2026-11-15")):
            return [m for m in tables(client.get(PAGE))["chart-cost-month-table"] if m != "Month"]

    assert months() == ["2026-09", "2026-10", "2026-11"]  # not the year before the workspace existed
    earlier = make_run(acme, "2026-06-20", Run.COMPLETED)  # e.g. a history copied in from elsewhere
    make_call(earlier, "2026-06-20", "executor", "model-a", (1, 1, 0, 0, 0), 0.01, "reported")
    assert months()[0] == "2026-06" and len(months()) == 6


@pytest.mark.parametrize("url", [PAGE, CSV_URL])
def test_admins_and_auditors_may_read_it_members_may_not_and_strangers_see_nothing(client, seeded, globex, url):
    for who, status in (("admin", 200), ("auditor", 200), ("member", 403), ("stranger", 404)):
        client.force_login(seeded[who])
        assert client.get(url).status_code == status, who
    client.force_login(seeded["member"])
    assert b"for the workspace&#x27;s admins and auditors" in client.get(url).content
    client.logout()
    assert client.get(url).status_code == 302


def test_another_workspace_is_a_404_even_for_an_auditor(client, seeded, globex):
    other = make_run(globex, "2026-03-10", Run.COMPLETED)
    make_call(other, "2026-03-10", "executor", "globex-secret-model", (1, 1, 1, 1, 1), 9.0, "reported")
    client.force_login(seeded["auditor"])
    assert client.get("/w/globex/audit/usage/").status_code == 404
    assert client.get("/w/globex/audit/usage.csv").status_code == 404
    page = client.get(PAGE, RANGE)
    assert b"globex-secret-model" not in page.content
    assert tables(page)["usage-total"]["All calls"][0] == "7"


def test_it_refuses_posts(client, seeded):
    client.force_login(seeded["auditor"])
    assert client.post(PAGE).status_code == 405
    assert client.post(CSV_URL).status_code == 405


def test_the_link_shows_for_auditors_on_the_run_list_and_not_for_members(client, seeded):
    client.force_login(seeded["auditor"])
    assert PAGE.encode() in client.get("/w/acme/audit/").content
    client.force_login(seeded["member"])
    assert PAGE.encode() not in client.get("/w/acme/audit/").content


def test_a_model_name_with_html_is_escaped_on_the_page_and_in_the_chart(client, people, acme):
    name = '<img src=x onerror="alert(1)">'
    run = make_run(acme, "2026-03-10", Run.COMPLETED)
    make_call(run, "2026-03-10", "executor", name, (10, 1, 0, 0, 0), 0.1, "reported")
    body = get_page(client, people["auditor"]).content.decode()
    assert "<img src=x" not in body
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in body  # the table, the filter, the chart's <title>
    assert "&lt;img src=x onerror=&quot;a…" in body  # the chart's cut label


def test_the_csv_defuses_formulas_in_model_names(client, people, acme):
    run = make_run(acme, "2026-03-10", Run.COMPLETED)
    for model in ('=HYPERLINK("http://evil.example","x")', "+1+1", "-2+3", "@SUM(A1)", "plain-model"):
        make_call(run, "2026-03-10", "executor", model, (1, 1, 0, 0, 0), 0.1, "reported")
    models = sorted(r["model"] for r in read_csv(client, people["auditor"]))
    assert models == ["'+1+1", "'-2+3", '\'=HYPERLINK("http://evil.example","x")', "'@SUM(A1)", "plain-model"]


def _queries(client, url) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url, RANGE).status_code == 200
    return len(captured.captured_queries)


def test_the_number_of_queries_does_not_grow_with_the_calls(client, seeded, acme):
    client.force_login(seeded["auditor"])
    page_before, csv_before = _queries(client, PAGE), _queries(client, CSV_URL)
    for month in ("2026-03", "2026-04"):
        run = make_run(acme, f"{month}-15", Run.COMPLETED, [(Step.RELEASED, "passed")] * 1)
        for i in range(40):
            make_call(run, f"{month}-15", ("planner", "summarizer")[i % 2], f"model-{i % 5}", (i, i, i, i, i),
                      0.01 * i, "reported")
    assert (_queries(client, PAGE), _queries(client, CSV_URL)) == (page_before, csv_before)
    assert page_before <= 10


def test_the_chart_axes_end_on_round_numbers_and_counts_on_whole_ones():
    from beyond_site.audit.usage_charts import Bar, axis_end, bar_chart
    assert [axis_end(v) for v in (0, 0.06, 0.11, 7, 12000)] == [1.0, 0.06, 0.12, 8, 12000]
    assert [axis_end(v, whole=True) for v in (0, 1, 5, 9, 101)] == [4, 4, 8, 12, 120]
    chart = bar_chart("t", [Bar("a", (("x", 3), ("y", 1))), Bar("b", (("x", 0),))], [("x", "x"), ("y", "y")],
                      whole=True)
    first, second = chart["rows"]
    # 3 and 1 of an axis ending at 4: three quarters and one quarter of the plot, side by side.
    assert [(p["cls"], p["w"]) for p in first["parts"]] == [("usage-s0", 240.0), ("usage-s1", 80.0)]
    assert first["parts"][1]["x"] == first["parts"][0]["x"] + 240.0
    assert second["parts"] == [] and [t["label"] for t in chart["ticks"]] == ["0", "1", "2", "3", "4"]


@pytest.mark.parametrize("params", [{"date_to": "9999-12-31"}, {"date_from": "0001-01-01"},
                                    {"date_from": "2026-13-45"}, {"role": "boss", "model": "x" * 500}])
def test_odd_filters_are_ignored_never_a_500(client, seeded, params):
    client.force_login(seeded["auditor"])
    for url in (PAGE, CSV_URL):
        assert client.get(url, params).status_code == 200
    assert "(filter ignored)" in client.get(PAGE, params).content.decode()
