"""Live labels: auditors judge each issue a verifier model raised in a real run, real or false.

An issue is item `index` of a model verdict's parsed issues (the mechanical checks' findings are
the citation gate's, not a verifier's, and are not labelled here). Labels are append-only: the
latest label of an issue is its current one, the earlier ones stay as its history. The share of
false issues is counted over current labels, per verifier model and per issue type, by the month
the issue was raised.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Max

from pipeline.calibration.report import proportion
from beyond_site.calibration.models import IssueLabel, verifier_name
from beyond_site.runs.models import Run, Verdict

NOTE_MAX = 2000


@dataclass
class RaisedIssue:
    verdict: Verdict
    index: int
    issue: dict
    history: list[IssueLabel] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.verdict.pk}-{self.index}"

    @property
    def current(self) -> IssueLabel | None:
        return self.history[-1] if self.history else None

    @property
    def step(self) -> int:
        return self.verdict.attempt.step.index

    @property
    def attempt(self) -> int:
        return self.verdict.attempt.attempt


def _model_verdicts(run: Run):
    return (Verdict.objects.filter(attempt__step__run=run, source=Verdict.MODEL, parsed__isnull=False)
            .select_related("attempt__step").order_by("attempt__step__index", "attempt__attempt", "id"))


def raised_issues(run: Run) -> list[RaisedIssue]:
    """Every issue the run's verifier model raised, in document order, with its labels oldest first."""
    history: dict[tuple[int, int], list[IssueLabel]] = defaultdict(list)
    for label in IssueLabel.objects.filter(run=run).select_related("labelled_by").order_by("id"):
        history[(label.verdict_id, label.issue_index)].append(label)
    return [RaisedIssue(verdict, index, issue, history[(verdict.pk, index)])
            for verdict in _model_verdicts(run)
            for index, issue in enumerate((verdict.parsed or {}).get("issues") or [])]


class LabelRefused(ValueError):
    """The label names no issue of this run, or no known label."""


def label_issue(run: Run, verdict_id: int, index: int, label: str, note: str, user) -> IssueLabel:
    """Record `user`'s label of issue `index` of verdict `verdict_id` of `run` (a new row, always)."""
    if label not in (IssueLabel.REAL, IssueLabel.FALSE):
        raise LabelRefused("a label is real or false")
    verdict = _model_verdicts(run).filter(pk=verdict_id).first()
    issues = ((verdict.parsed or {}).get("issues") or []) if verdict else []
    if not 0 <= index < len(issues):
        raise LabelRefused("this run's verifier raised no such issue")
    return IssueLabel.objects.create(
        workspace_id=run.workspace_id, run=run, verdict=verdict, issue_index=index,
        issue_type=str(issues[index].get("type", ""))[:40], verifier=verifier_name(run.topology)[:250],
        raised_at=verdict.created_at, label=label, note=note.strip()[:NOTE_MAX], labelled_by=user)


def current_labels(workspace):
    """Each labelled issue's latest label in `workspace`."""
    latest = (IssueLabel.objects.filter(workspace=workspace).values("verdict_id", "issue_index")
              .annotate(last=Max("id")).values("last"))
    return IssueLabel.objects.filter(id__in=latest)


def _share(false: int, labelled: int) -> dict:
    return {"labelled": labelled, "false": false, **proportion(false, labelled)}


def false_share(workspace) -> dict:
    """`{"by_verifier": {...}, "by_type": {...}, "labelled": n}`: for each verifier model and each
    issue type, the share of its labelled issues labelled false, overall and by month raised
    ("YYYY-MM", oldest first), with Wilson 95% intervals."""
    counts = {"by_verifier": defaultdict(lambda: defaultdict(lambda: [0, 0])),
              "by_type": defaultdict(lambda: defaultdict(lambda: [0, 0]))}
    rows = current_labels(workspace).values_list("verifier", "issue_type", "raised_at", "label")
    for verifier, issue_type, raised_at, label in rows:
        month = raised_at.strftime("%Y-%m")
        for group, key in (("by_verifier", verifier), ("by_type", issue_type)):
            for period in ("overall", month):
                cell = counts[group][key][period]
                cell[0] += label == IssueLabel.FALSE
                cell[1] += 1
    result = {"labelled": len(rows)}
    for group, keys in counts.items():
        result[group] = {
            key: {"overall": _share(*periods["overall"]),
                  "months": {m: _share(*periods[m]) for m in sorted(periods) if m != "overall"}}
            for key, periods in sorted(keys.items())}
    return result
