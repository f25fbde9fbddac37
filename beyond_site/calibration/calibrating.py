"""Running a calibration report: the corpus, the verifier of the report's topology, and every result
stored the moment it comes, so that a report stopped by its budget or by a crash resumes where it
was. One code path for `beyond_calibrate` and the page's button (docs/calibration.md).
"""
from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from asgiref.sync import ThreadSensitiveContext
from channels.db import database_sync_to_async
from django.db.models import Q
from django.utils import timezone

from pipeline import badges
from pipeline.calibration import (CONTRACTS, Budget, CallResult, CorpusDraft, Progress, build_corpus,
                                  calibration_report, run_calibration)
from pipeline.providers import close_all
from pipeline.topology import Topology, parse_topology
from beyond_site.calibration.models import CalibrationReport, CalibrationResult
from beyond_site.calibration.trust import complete
from beyond_site.lib.endpoints import role_providers
from beyond_site.runs.context import enabled_imported_packs
from beyond_site.runs.models import Run, Step
from beyond_site.lib import leases

log = logging.getLogger("beyond.calibration")

#: Clean drafts taken from the workspace's own runs at most (the most recent first): the seed corpus
#: is the fixed part, the workspace's drafts the part that looks like its real work.
WORKSPACE_DRAFTS = 50
SEED = 0
CONCURRENCY = 4


def workspace_runs(workspace, *, finished_by: datetime, limit: int) -> list[tuple[dict, int, str]]:
    """(brief, step index, released text) of the most recent steps that passed their first
    inspection, in the workspace's runs completed by `finished_by`. A pass recorded in a run no
    model checked (an older offline run's) is not one: no model read that draft."""
    steps = (Step.objects.filter(run__workspace=workspace, run__status=Run.COMPLETED, run__brief__isnull=False,
                                 run__finished_at__lte=finished_by, status=Step.RELEASED, badge=badges.PASSED)
             .exclude(run__verification=badges.MECHANICAL)
             .select_related("run").order_by("-run__finished_at", "-run_id", "index"))
    return [(step.run.brief, step.index, step.content) for step in steps[:max(0, limit)]]


def report_corpus(report: CalibrationReport) -> tuple[list[CorpusDraft], list]:
    """The report's corpus, the same on every call for the same report (the workspace's runs that
    were completed when it was created), and the imported packs it is checked with."""
    options = report.options
    packs = enabled_imported_packs(report.workspace)
    runs = workspace_runs(report.workspace, finished_by=report.created_at,
                          limit=options.get("workspace_drafts", WORKSPACE_DRAFTS))
    corpus = build_corpus(options.get("seed", SEED), runs=runs, size=options.get("drafts"), packs=packs)
    return corpus, packs


def create_report(workspace, topology: Topology, *, contracts=CONTRACTS, drafts: int | None = None,
                  workspace_drafts: int = WORKSPACE_DRAFTS, concurrency: int = CONCURRENCY,
                  max_calls: int | None = None, max_cost_usd: float | None = None, user=None) -> CalibrationReport:
    """A queued report. Its corpus is fixed now: the workspace's runs completed by this moment."""
    return CalibrationReport.objects.create(workspace=workspace, topology=topology.as_json(), created_by=user, options={
        "contracts": [c for c in CONTRACTS if c in contracts], "drafts": drafts, "workspace_drafts": workspace_drafts,
        "seed": SEED, "concurrency": concurrency, "max_calls": max_calls, "max_cost_usd": max_cost_usd})


def set_limits(report: CalibrationReport, *, concurrency: int | None = None, max_calls: int | None = None,
               max_cost_usd: float | None = None) -> None:
    """New limits for the next run of a report (a resume); the corpus and contracts stay."""
    report.options = {**report.options, "max_calls": max_calls, "max_cost_usd": max_cost_usd,
                      **({"concurrency": concurrency} if concurrency else {})}
    report.save(update_fields=["options"])


def interrupted(report: CalibrationReport) -> bool:
    """A report still marked running whose runner is gone or silent past its lease."""
    if report.status != CalibrationReport.RUNNING:
        return False
    return leases.lapsed(report.lease_owner, report.lease_expires_at, without_lease=True)


def claim_report(report_id: int, owner: str) -> bool:
    """Take a report to run it (lib/leases.py): one not completed and not running, or running
    under a runner that is gone."""
    free = Q(status__in=(CalibrationReport.QUEUED, CalibrationReport.STOPPED, CalibrationReport.FAILED))
    current = CalibrationReport.objects.filter(pk=report_id).first()
    if current is not None and interrupted(current):
        free |= Q(status=CalibrationReport.RUNNING, lease_owner=current.lease_owner)
    return leases.claim(CalibrationReport.objects.filter(free, pk=report_id), owner,
                        status=CalibrationReport.RUNNING, started_at=timezone.now(), finished_at=None, message="")


def requeue(report: CalibrationReport) -> bool:
    """Queue a stopped, failed or interrupted report again, to be resumed to the end without the
    first run's budget (the page's Resume); False when it cannot be resumed now."""
    if not (report.status in (CalibrationReport.STOPPED, CalibrationReport.FAILED) or interrupted(report)):
        return False
    set_limits(report)
    return CalibrationReport.objects.filter(pk=report.pk, status=report.status,
                                            lease_owner=report.lease_owner).update(
        status=CalibrationReport.QUEUED, lease_owner=None, lease_expires_at=None) == 1


def _mine(report_id: int, owner: str):
    return leases.held(CalibrationReport.objects.filter(pk=report_id, status=CalibrationReport.RUNNING), owner)


def queued_reports() -> list[dict]:
    """Reports created but never started (their process stopped first), for the sweeps."""
    return [{"report_id": pk} for pk in CalibrationReport.objects.filter(status=CalibrationReport.QUEUED)
            .order_by("id").values_list("pk", flat=True)[:50]]


def stored_results(report: CalibrationReport) -> list[dict]:
    return list(report.results.order_by("id").values_list("result", flat=True))


@dataclass
class _Store:
    """Writes each result as it comes, and the progress with a heartbeat, while this runner owns the report."""

    report_id: int
    owner: str
    drafts: dict[str, CorpusDraft]
    lost: bool = False

    def result(self, result: CallResult) -> None:
        if self.lost or not _mine(self.report_id, self.owner).exists():
            self.lost = True
            return
        draft = self.drafts[result.draft_id]
        CalibrationResult.objects.create(report_id=self.report_id, draft_id=result.draft_id, contract=result.contract,
                                         kind=draft.truth.kind, source=draft.source, status=result.status,
                                         result=result.as_json())

    def progress(self, progress: Progress) -> None:
        if not self.lost:
            _mine(self.report_id, self.owner).update(
                progress={"done": progress.done, "total": progress.total, "calls": progress.calls,
                          "cost_usd": progress.cost_usd, "left_s": progress.left_s})

    def beat(self) -> bool:
        if not self.lost and not leases.renew(_mine(self.report_id, self.owner), self.owner):
            self.lost = True
        return not self.lost

    def finish(self, status: str, message: str = "", figures: dict | None = None) -> bool:
        fields = {"status": status, "message": message, "finished_at": timezone.now(), "lease_expires_at": None}
        if figures is not None:
            fields["report"] = figures

        def update() -> bool:
            return _mine(self.report_id, self.owner).update(**fields) == 1
        if status != CalibrationReport.COMPLETED:
            return update()
        return complete(self.report_id, update)  # on the change log as it completes


def _load(report_id: int):
    report = CalibrationReport.objects.select_related("workspace").get(pk=report_id)
    corpus, packs = report_corpus(report)
    return report, corpus, packs, stored_results(report)


async def calibrate(report_id: int, owner: str, *, on_progress: Callable | None = None,
                    transport=None, operator_topology: bool = False) -> CalibrationReport:
    """Run a claimed report to its end (or its budget) and return it as stored.

    Every result is stored as it comes; results already stored are not asked again. The figures
    are computed over all of them, and written with the final status: completed, stopped (the
    budget ran out: resume it) or failed (the reason is in `message`). The verifier connects
    through the endpoint policy, as the workspace's runs do, unless `operator_topology` says the
    operator gave this topology on the command line just now (a stored one is never trusted more).
    """
    store = _Store(report_id, owner, {})
    # A thread of its own for this calibration's database calls (asgiref's ThreadSensitiveContext):
    # they keep their order (its progress is written as it was made, last figure last), and a
    # calibration running for minutes waits behind no run's writes, nor they behind it.
    async with ThreadSensitiveContext():
        async with leases.holding(_on_lane(store.beat), name=f"calibration {report_id}"):
            return await _calibrate(store, on_progress, transport, operator_topology)


def _on_lane(func):
    """`func` on this calibration's own thread (`calibrate`), in the order called."""
    return database_sync_to_async(func)


async def _calibrate(store: _Store, on_progress, transport, operator_topology: bool) -> CalibrationReport:
    report_id = store.report_id
    providers: dict = {}

    async def progress(value: Progress) -> None:
        await _on_lane(store.progress)(value)
        if on_progress is not None and inspect.isawaitable(shown := on_progress(value)):
            await shown

    try:
        report, corpus, packs, done = await _on_lane(_load)(report_id)
        store.drafts = {d.draft_id: d for d in corpus}
        options, topology = report.options, parse_topology(report.topology)
        providers = role_providers(topology, operator_topology=operator_topology, transport=transport)
        outcome = await run_calibration(
            corpus, providers["verifier"], topology.role("verifier"), contracts=report.contracts, done=done,
            concurrency=options.get("concurrency") or CONCURRENCY,
            budget=Budget(max_calls=options.get("max_calls"), max_cost_usd=options.get("max_cost_usd")),
            on_result=_on_lane(store.result), on_progress=progress)
        figures = calibration_report(corpus, outcome.results, packs=packs)
        if outcome.stopped:
            status, message = CalibrationReport.STOPPED, (
                f"budget: {outcome.not_run} of {len(corpus) * len(report.contracts)} calls not made; resume to finish")
        else:
            status, message = CalibrationReport.COMPLETED, ""
        await _on_lane(store.finish)(status, message, figures)
    except Exception as exc:
        reason = str(exc) if isinstance(exc, ValueError) else f"internal error ({type(exc).__name__})"
        log.exception("calibration %s failed", report_id)
        await _on_lane(store.finish)(CalibrationReport.FAILED, f"failed: {reason}")
    finally:
        await close_all(providers)
    return await _on_lane(CalibrationReport.objects.get)(pk=report_id)
