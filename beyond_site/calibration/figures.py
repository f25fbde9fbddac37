"""A calibration report as the command prints it, the page compares it, and the exports give it."""
from __future__ import annotations

from collections.abc import Iterator

from pipeline.calibration import VIOLATION_TYPES, wilson
from beyond_site.calibration.charts import Row, interval_chart, percent, seconds
from beyond_site.calibration.models import CalibrationReport
from beyond_site.lib.csv_guard import guarded_csv
from beyond_site.runs.selectors import iso

CSV_FIELDS = ("report", "verifier", "contract", "measure", "type", "n", "count", "rate", "ci95_low", "ci95_high",
              "value")


def _when(dt) -> str | None:
    return iso(dt) if dt else None


def report_meta(report: CalibrationReport) -> dict:
    return {"id": report.pk, "workspace": report.workspace.slug, "status": report.status, "message": report.message,
            "verifier": report.verifier, "topology": report.topology, "options": report.options,
            "progress": report.progress, "created_by": report.created_by.get_username() if report.created_by else None,
            "created_at": _when(report.created_at), "started_at": _when(report.started_at),
            "finished_at": _when(report.finished_at)}


def report_document(report: CalibrationReport, *, results: bool = False) -> dict:
    """`{"contracts": {...}, "mechanical": {...}, "corpus": {...}, "report": {...}}` (and every
    stored call with `results`); the figures are empty until a run of the report has ended."""
    figures = report.report or {"contracts": {}, "mechanical": None, "corpus": None}
    document = {**figures, "report": report_meta(report)}
    if results:
        document["results"] = [{"kind": r.kind, "source": r.source, **r.result}
                               for r in report.results.order_by("id")]
    return document


def _ci(block: dict) -> tuple[float, float] | None:
    ci = block.get("ci95")
    return (ci[0], ci[1]) if ci else None


def _unparseable(contract: dict) -> tuple[int, int]:
    return contract["unparseable"]["n"], contract.get("drafts") or 0


def _blank(value):
    return "" if value is None else value


def _rate_cells(block: dict, count_key: str) -> dict:
    lo, hi = block.get("ci95") or ("", "")
    return {"n": block["n"], "count": block[count_key], "rate": _blank(block["rate"]), "ci95_low": lo, "ci95_high": hi}


def _csv_rows(figures: dict) -> Iterator[dict]:
    for name, contract in (figures.get("contracts") or {}).items():
        yield {"contract": name, "measure": "clean_flagged", **_rate_cells(contract["clean"], "flagged")}
        for kind, block in contract["violations"].items():
            yield {"contract": name, "measure": "violation_caught", "type": kind, **_rate_cells(block, "caught")}
        with_gate = contract.get("with_mechanical")
        if with_gate:
            yield {"contract": name, "measure": "clean_flagged_with_gate", **_rate_cells(with_gate["clean"], "flagged")}
            for kind, block in with_gate["violations"].items():
                yield {"contract": name, "measure": "violation_caught_with_gate", "type": kind,
                       **_rate_cells(block, "caught")}
        failed, total = _unparseable(contract)
        lo, hi = wilson(failed, total)
        yield {"contract": name, "measure": "unparseable", "n": total, "count": failed,
               "rate": _blank(contract["unparseable"]["rate"]), "ci95_low": round(lo, 4), "ci95_high": round(hi, 4)}
        issues = contract["issues"]
        yield {"contract": name, "measure": "issues_false", "n": issues["raised"], "count": issues["false"],
               "rate": _blank(issues["false_share"])}
        latency = contract["latency"]
        for measure, value in (("cost_usd", contract["cost"]["usd"]), ("latency_p50_s", latency["p50_s"]),
                               ("latency_p95_s", latency["p95_s"]), ("tokens", contract["tokens"]["total"])):
            yield {"contract": name, "measure": measure, "value": _blank(value)}
    gate = figures.get("mechanical")
    if gate:
        yield {"contract": "citation_gate", "measure": "clean_flagged", **_rate_cells(gate["clean"], "flagged")}
        for kind, block in gate["violations"].items():
            yield {"contract": "citation_gate", "measure": "violation_caught", "type": kind,
                   **_rate_cells(block, "caught")}


def csv_text(report: CalibrationReport) -> str:
    """One row per measure: per contract, clean drafts flagged, each violation type caught (by the
    model alone and with the citation gate), unparseable verdicts, issues false, cost, latency and
    tokens; then the citation gate alone."""
    # The verifier's name comes from a topology an admin typed: the one CSV guard defuses formulas.
    return guarded_csv(CSV_FIELDS, ({"report": report.pk, "verifier": report.verifier, **row}
                                 for row in _csv_rows(report.report or {})))


def short_label(report: CalibrationReport, limit: int = 30) -> str:
    verifier = report.verifier if len(report.verifier) <= limit else report.verifier[: limit - 1] + "…"
    return f"#{report.pk} {verifier}"


def comparison_charts(reports: list[CalibrationReport]) -> list[dict]:
    """Clean drafts flagged and unparseable verdicts per contract, and recall per violation type,
    with the reports side by side in each group."""
    measured = [r for r in reports if r.report and r.report.get("contracts")]
    contracts = [c for c in ("narrow", "widened") if any(c in r.report["contracts"] for r in measured)]
    flagged, unparseable = [], []
    for contract in contracts:
        rows_flagged, rows_unparseable = [], []
        for report in measured:
            block = report.report["contracts"].get(contract)
            if block is None:
                continue
            clean = block["clean"]
            rows_flagged.append(Row(short_label(report), clean["rate"], _ci(clean),
                                    f"{clean['flagged']}/{clean['n']} · {percent(clean['rate'])}", contract))
            failed, total = _unparseable(block)
            rows_unparseable.append(Row(short_label(report), failed / total if total else None,
                                        wilson(failed, total) if total else None, f"{failed}/{total}", contract))
        flagged.append((f"{contract} contract", rows_flagged))
        unparseable.append((f"{contract} contract", rows_unparseable))
    recall = []
    for kind in VIOLATION_TYPES:
        rows = []
        for report in measured:
            for contract in contracts:
                block = (report.report["contracts"].get(contract) or {}).get("violations", {}).get(kind)
                if block:
                    rows.append(Row(f"{short_label(report, 22)} · {contract}", block["rate"], _ci(block),
                                    f"{block['caught']}/{block['n']} · {percent(block['rate'])}", contract))
        recall.append((kind.replace("_", " "), rows))
    return [
        {"id": "chart-clean", "chart": interval_chart("Clean drafts flagged (lower is better)", flagged),
         "caption": "Share of faithful drafts the verifier failed, with its Wilson 95% interval."},
        {"id": "chart-recall", "chart": interval_chart("Planted violations caught (higher is better)", recall),
         "caption": "Share of drafts with one planted violation whose verdict reported that violation."},
        {"id": "chart-unparseable", "chart": interval_chart("Unparseable verdicts and failed calls", unparseable),
         "caption": "Share of calls that gave no parseable verdict; these count for nothing above."},
    ]


def _interval(block: dict) -> str:
    lo, hi = block.get("ci95") or (0, 1)
    count = block.get("caught", block.get("flagged"))
    return f"{count}/{block['n']} · {percent(block['rate'])} [{percent(lo)}, {percent(hi)}]"


def _contract_cells(block: dict) -> dict[str, str]:
    """What the comparison table shows of one contract of one report, by measure."""
    cost = block["cost"]
    cells = {"clean flagged": _interval(block["clean"])}
    cells.update({f"{kind.replace('_', ' ')} caught": _interval(block["violations"][kind])
                  for kind in VIOLATION_TYPES if kind in block["violations"]})
    cells["unparseable"] = f"{block['unparseable']['n']}/{block['drafts']}"
    cells["issues false / raised"] = f"{block['issues']['false']}/{block['issues']['raised']}"
    cells["cost"] = f"${cost['usd']:.4f}" + (f" ({cost['unknown']} calls unknown)" if cost["unknown"] else "")
    cells["latency p50 / p95"] = f"{seconds(block['latency']['p50_s'])} / {seconds(block['latency']['p95_s'])}"
    return cells


def comparison_table(reports: list[CalibrationReport]) -> list[tuple[str, list[str]]]:
    """Rows of (measure, one cell per report): the figures the charts draw, and cost and latency."""
    rows = [("Verifier", [r.verifier for r in reports]), ("Status", [r.status for r in reports]),
            ("Corpus drafts", [str(((r.report or {}).get("corpus") or {}).get("drafts", "–")) for r in reports])]
    for contract in ("narrow", "widened"):
        blocks = [((r.report or {}).get("contracts") or {}).get(contract) for r in reports]
        cells = [_contract_cells(block) if block else {} for block in blocks]
        for measure in dict.fromkeys(m for c in cells for m in c):
            rows.append((f"{contract}: {measure}", [c.get(measure, "–") for c in cells]))
    return rows


def label_charts(shares: dict) -> list[dict]:
    """The false share of labelled issues per verifier model and per issue type, by month."""
    charts = []
    for group, title in (("by_verifier", "False issues per verifier model"),
                         ("by_type", "False issues per issue type")):
        groups = []
        for key, periods in shares.get(group, {}).items():
            rows = [Row(month, s["rate"], _ci(s), f"{s['false']}/{s['labelled']} false", "labels")
                    for month, s in periods["months"].items()]
            overall = periods["overall"]
            rows.append(Row("all months", overall["rate"], _ci(overall),
                            f"{overall['false']}/{overall['labelled']} false", "overall"))
            groups.append((key or "(no type)", rows))
        charts.append({"id": f"chart-labels-{group.replace('_', '-')}", "chart": interval_chart(title, groups),
                       "caption": "Current labels only (a later label of an issue replaces the earlier one), "
                                  "by the month the issue was raised."})
    return charts
