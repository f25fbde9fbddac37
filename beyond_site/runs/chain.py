"""The tamper-evident run record (docs/audit.md, "Tamper evidence").

Each event of a run is a link of the run's hash chain (lib/chaining.py): its hash covers the run
id, its seq, type, data and time, and the previous event's hash. The rows an event implies (an
attempt, a verdict, a model call and its context record, a step's release, the run's final
fields) are covered through that event's data: `verify_run` checks each row against the event that
introduced it. When a run finishes, its final event hash becomes a link of its workspace's ledger
(`WorkspaceLedger`), so a removed tail of events, or a removed run, breaks the ledger too. An
anchor (`beyond_audit anchor`) is a copy of the ledger heads kept outside the database: a chain
recomputed after an edit no longer matches it.

The recorder calls `event_hash` and `append_to_ledger`; `beyond_audit verify`, the periodic check
and the audit page call the rest.
"""
from __future__ import annotations

import asyncio
import collections
import dataclasses
from collections.abc import Callable
import logging
from datetime import timedelta
from typing import Iterable

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.crypto import constant_time_compare, salted_hmac

from pipeline import events as ev
from beyond_site.lib.chaining import GENESIS, as_read_back, canonical_json, link_hash
from beyond_site.runs.bytes_check import blob_problems, evidence_named, file_problems
from beyond_site.runs.contexts import record_sha256
from beyond_site.runs import projection
from beyond_site.runs.projection import FINAL_STATUS, NO_RECAP, fingerprint as _fingerprint, recap_fingerprint, release_fingerprint
from beyond_site.runs.provenance import NOT_CHECKED, Provenance
from beyond_site.runs.models import (Attempt, ChainCheck, ContextRecord, LedgerAnchor, ModelCall, Run, RunEvent, Step, Verdict,
                                     WorkspaceLedger)
from beyond_site.runs.verification import combined, step_checker
from beyond_site.workspaces.changelog import settings_problems, verify_changes
from beyond_site.workspaces.models import Workspace, WorkspaceEvent

# The admin change log's own chain (workspaces/changelog.py) is verified with the runs. It is
# looked up by name only until both branches are merged; then this becomes a plain import.

log = logging.getLogger("beyond.audit")

ANCHOR_KIND = "beyond-ledger-anchor"
#: Problems shown per run on one line; the rest are counted.
PROBLEMS_PER_RUN = 10
#: Context records already checked in one pass (shared by many runs, each is checked once); past
#: this many the pass forgets them, so its memory stays bounded however large the record.
CONTEXTS_REMEMBERED = 50_000
#: How often the embedded server asks whether a periodic check is due (the interval itself is
#: BEYOND_CHAIN_CHECK_EVERY_S).
CHECK_POLL_S = 60


# -- the links ------------------------------------------------------------------------------------

def event_hash(prev_hash: str, run_id: int, seq: int, type_: str, data: dict, at) -> str:
    """The hash of one event: its content, linked to the previous event's hash (GENESIS first)."""
    return link_hash(prev_hash, {"run": run_id, "seq": seq, "type": type_, "data": as_read_back(data), "at": at})


def ledger_hash(prev_hash: str, workspace_id: int, seq: int, run_id: int, run_hash: str, at) -> str:
    return link_hash(prev_hash, {"workspace": workspace_id, "seq": seq, "run": run_id, "run_hash": run_hash,
                                 "at": at})


def head_query(run_id: int):
    """The run's last event: [(seq, hash)], or none before its first event."""
    return RunEvent.objects.filter(run_id=run_id).order_by("-seq").values_list("seq", "hash")[:1]


def run_head(run_id: int) -> tuple[int, str]:
    """The run's last sequence number and that event's hash ((0, GENESIS) before its first event):
    sequence numbers start at 1 and have no gaps, so the last is also the count."""
    found = list(head_query(run_id))
    return tuple(found[0]) if found else (0, GENESIS)


def ledger_lock_query(workspace_id: int):
    # NO KEY UPDATE: appenders take turns, yet rows that merely point at the workspace (a new run,
    # a message) are not held up by it (PostgreSQL; a no-op on SQLite).
    return Workspace.objects.select_for_update(no_key=True).filter(pk=workspace_id).order_by().values_list("pk")[:1]


def ledger_head_query(workspace_id: int):
    """The workspace ledger's last link: [(seq, hash)], or none before its first."""
    return WorkspaceLedger.objects.filter(workspace_id=workspace_id).order_by("-seq").values_list("seq", "hash")[:1]


def append_to_ledger(run: Run, final_hash: str) -> None:
    """Chain a finished run's final event hash into its workspace's ledger.

    The workspace row is locked first, so two runs finishing at once take turns (on SQLite the
    writers take turns anyway); the unique (workspace, seq) makes a fork impossible regardless.
    Call inside the transaction that records the run's final event: a failure here rolls all of it
    back, so no savepoint of its own is needed.
    """
    with transaction.atomic(savepoint=False):
        list(ledger_lock_query(run.workspace_id))
        last = next(iter(ledger_head_query(run.workspace_id)), None)
        seq, prev = (last[0] + 1, last[1]) if last else (1, GENESIS)
        at = timezone.now()
        WorkspaceLedger.objects.bulk_create([WorkspaceLedger(
            workspace_id=run.workspace_id, seq=seq, run_id=run.pk, run_hash=final_hash, at=at,
            hash=ledger_hash(prev, run.workspace_id, seq, run.pk, final_hash, at))])


@dataclasses.dataclass
class _Expected:
    """What the event log says the relational record must hold (fingerprints, keyed by row)."""

    attempts: dict = dataclasses.field(default_factory=dict)  # (step, attempt) -> (seq, fp)
    verdicts: dict = dataclasses.field(default_factory=dict)  # (step, attempt) -> [(seq, fp)]
    calls: list = dataclasses.field(default_factory=list)  # [(seq, fp)] in order
    released: dict = dataclasses.field(default_factory=dict)  # step -> (seq, fp)
    brief: tuple | None = None  # (seq, brief)
    summary: tuple | None = None  # (seq, summary, findings)
    specifics: dict = dataclasses.field(default_factory=dict)  # step (None: the recap) -> (seq, fp, count)
    final: tuple | None = None  # (seq, type, reason, at)
    topology: dict | None = None  # run_started's: who checked a release recorded before it said so
    checkers: list = dataclasses.field(default_factory=list)  # per release, who checked it
    #: Who asked for what, and who stopped the run (runs/provenance.py).
    provenance: Provenance = dataclasses.field(default_factory=Provenance)
    #: The stored bytes the events name: {sha256: how they name them} (runs/bytes_check.py).
    blobs: dict = dataclasses.field(default_factory=dict)

    def add(self, seq: int, type_: str, data: dict, at) -> None:
        p = ev.load(type_, data)
        self.provenance.add(seq, type_, data, p)
        if type_ == ev.RUN_STARTED:
            self.topology = p.topology
        elif type_ == ev.ATTEMPT_DRAFTED:
            self.attempts[(p.step, p.attempt)] = (seq, _fingerprint(*projection.attempt(p).values()))
        elif type_ == ev.VERDICT_RECORDED:
            self.verdicts.setdefault((p.step, p.attempt), []).append(
                (seq, _fingerprint(*projection.verdict(p).values())))
        elif type_ == ev.MODEL_CALL:
            self.calls.append((seq, _fingerprint(*projection.model_call(p).values())))
        elif type_ == ev.STEP_RELEASED:
            self.released[p.step] = (seq, release_fingerprint(*projection.release(p, at).values()))
            self.checkers.append(step_checker(p.checked_by, self.topology))
        elif type_ == ev.BRIEF_READY:
            self.brief = (seq, _fingerprint(p.brief), [(s["index"], s["title"], s["content_spec"])
                                                        for s in p.brief.get("steps", [])])
        elif type_ == ev.SUMMARY_READY:
            self.summary = (seq, recap_fingerprint(*projection.recap(p).values()))
        elif type_ == ev.SPECIFICS_LISTED and p.error is None:
            self.specifics[p.step] = (seq, _fingerprint(*projection.specifics(p).values()), len(p.unsourced))
        elif type_ == ev.EVIDENCE_COLLECTED:
            self.blobs.update(evidence_named(p.items))
        elif type_ in FINAL_STATUS:
            self.final = (seq, type_, getattr(p, "reason", None))


# -- verifying ---------------------------------------------------------------------------------------

@dataclasses.dataclass
class RunReport:
    run_id: int
    events: int = 0
    problems: list[str] = dataclasses.field(default_factory=list)
    #: The first event whose link is broken (None when every link holds).
    first_broken: int | None = None
    ledger_seq: int | None = None
    final_hash: str | None = None
    #: Recorded before its request was chained: its task, starter, conversation and message could
    #: not be checked (runs/provenance.py).
    request_unchecked: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems

    def line(self) -> str:
        shown = self.problems[:PROBLEMS_PER_RUN]
        more = len(self.problems) - len(shown)
        return f"run {self.run_id}: " + "; ".join(shown) + (f"; and {more} more" if more else "")


def _check_events(run: Run, report: RunReport, expected: _Expected) -> str | None:
    """Walk the event log in order, checking every link; returns the last event's stored hash."""
    prev, last_seq, at_final = GENESIS, 0, None
    rows = (RunEvent.objects.filter(run_id=run.pk).order_by("seq")
            .values_list("seq", "type", "data", "at", "hash").iterator(chunk_size=200))
    for seq, type_, data, at, stored in rows:
        report.events += 1
        if seq != last_seq + 1:
            missing = f"event {last_seq + 1}" if seq == last_seq + 2 else f"events {last_seq + 1} to {seq - 1}"
            report.problems.append(f"{missing} missing (the log jumps from {last_seq} to {seq})")
            report.first_broken = report.first_broken or last_seq + 1
        try:
            valid = event_hash(prev, run.pk, seq, type_, data, at) == stored
        except (TypeError, ValueError):
            valid = False
        if not valid:
            report.problems.append(f"event {seq} does not match its hash")
            report.first_broken = report.first_broken or seq
        try:
            expected.add(seq, type_, data, at)
        except (KeyError, TypeError, AttributeError, ValueError):
            report.problems.append(f"event {seq} ({type_}) cannot be read as its type")
        if type_ in FINAL_STATUS:
            at_final = at
        prev, last_seq = stored, seq
    if expected.final is not None:
        expected.final = (*expected.final, at_final)
    return None if last_seq == 0 else prev


def _compare(report: RunReport, what: str, expected: dict, stored: dict) -> None:
    """`expected` and `stored`: {row key: (seq or None, fingerprint)}; each difference is a problem."""
    for key, (seq, fp) in expected.items():
        row = stored.get(key)
        if row is None:
            report.problems.append(f"event {seq} records {what} {_key(key)} that is missing")
        elif row != fp:
            report.problems.append(f"{what} {_key(key)} does not match event {seq}")
    for key in stored.keys() - expected.keys():
        report.problems.append(f"{what} {_key(key)} has no event recording it")


def _key(key) -> str:
    if isinstance(key, tuple) and len(key) == 2:
        return f"(step {key[0]}, attempt {key[1]})"
    if isinstance(key, tuple):
        return f"(step {key[0]}, attempt {key[1]}, #{key[2] + 1})"
    return str(key)


def _check_rows(run: Run, report: RunReport, expected: _Expected, contexts_seen: set[str]) -> None:
    _compare(report, "the attempt", expected.attempts, {
        (step, attempt): _fingerprint(*values) for step, attempt, *values in
        Attempt.objects.filter(step__run_id=run.pk).values_list("step__index", "attempt", *projection.ATTEMPT_COLUMNS)})

    expected_verdicts, stored_verdicts = {}, {}
    for (step, attempt), items in expected.verdicts.items():
        for n, item in enumerate(items):
            expected_verdicts[(step, attempt, n)] = item
    counters: dict = {}
    for step, attempt, *values in (Verdict.objects.filter(attempt__step__run_id=run.pk).order_by("id").values_list(
            "attempt__step__index", "attempt__attempt", *projection.VERDICT_COLUMNS)):
        n = counters[(step, attempt)] = counters.get((step, attempt), -1) + 1
        stored_verdicts[(step, attempt, n)] = _fingerprint(*values)
    _compare(report, "the verdict", expected_verdicts, stored_verdicts)

    calls = ModelCall.objects.filter(run_id=run.pk).order_by("id").values_list(*projection.MODEL_CALL_COLUMNS)
    expected_calls = {f"#{n + 1}": item for n, item in enumerate(expected.calls)}
    stored_calls, context_shas = {}, set()
    for n, values in enumerate(calls.iterator(chunk_size=200)):
        stored_calls[f"#{n + 1}"] = _fingerprint(*values)
        if values[-1]:
            context_shas.add(values[-1])
    _compare(report, "model call", expected_calls, stored_calls)
    _check_contexts(report, context_shas - contexts_seen)
    if len(contexts_seen) > CONTEXTS_REMEMBERED:  # memory stays bounded; a record is then checked again
        contexts_seen.clear()
    contexts_seen.update(context_shas)

    steps = {index: (title, spec, release_fingerprint(*row), row[0], row[1])
             for index, title, spec, *row in Step.objects.filter(run_id=run.pk).values_list(
                 "index", "title", "content_spec", *projection.RELEASE_COLUMNS)}
    _compare(report, "the release of step", expected.released,
             {index: s[2] for index, s in steps.items() if s[3] == Step.RELEASED or s[4] is not None})
    _compare(report, "the unsourced specifics of step", _specifics_of_released(expected),
             {index: _fingerprint(*values) for index, *values in Step.objects.filter(
                 run_id=run.pk, status=Step.RELEASED).exclude(unsourced=None).values_list("index", *projection.SPECIFICS_COLUMNS)})
    planned = {index: (title, spec) for index, title, spec in (expected.brief[2] if expected.brief else [])}
    for index, (title, spec, *_rest) in steps.items():
        if planned.get(index) != (title, spec):
            report.problems.append(f"step {index} is not the step the brief planned")
    for index in planned.keys() - steps.keys():
        report.problems.append(f"step {index} of the brief is missing")

    _check_run_fields(run, report, expected)
    report.problems += expected.provenance.problems(run.pk)
    report.request_unchecked = not expected.provenance.chained
    report.problems += blob_problems(expected.blobs)


def shown_tampered(runs: dict[int, Run], steps: dict[int, list[Step]]) -> set[int]:
    """The runs among `runs` whose released steps or recap, as the pages show them, no longer
    match the events that released them: what the chat and the run list check as they draw runs,
    so an edited step is marked at once, not at the next periodic check. Two queries for any
    number of runs; `steps` holds each run's Step rows, as the page read them."""
    released: dict[int, dict[int, str]] = collections.defaultdict(dict)
    recaps: dict[int, str] = {}
    rows = RunEvent.objects.filter(run_id__in=list(runs), type__in=(ev.STEP_RELEASED, ev.SUMMARY_READY))
    for run_id, type_, data, at in rows.values_list("run_id", "type", "data", "at"):
        p = ev.load(type_, data)
        if type_ == ev.STEP_RELEASED:
            released[run_id][p.step] = release_fingerprint(*projection.release(p, at).values())
        else:
            recaps[run_id] = recap_fingerprint(*projection.recap(p).values())
    tampered = set()
    for run_id, run in runs.items():
        shown = {s.index: release_fingerprint(*(getattr(s, column) for column in projection.RELEASE_COLUMNS))
                 for s in steps.get(run_id, []) if s.status == Step.RELEASED or s.badge is not None}
        recap = recap_fingerprint(run.summary, run.summary_findings)
        if shown != released.get(run_id, {}) or recap != recaps.get(run_id, NO_RECAP):
            tampered.add(run_id)
    return tampered


def _check_run_fields(run: Run, report: RunReport, expected: _Expected) -> None:
    *ended, brief, summary, findings, verification = Run.objects.filter(pk=run.pk).values_list(
        *projection.FINAL_COLUMNS, "brief", *projection.RECAP_COLUMNS, "verification").get()
    if expected.final is None:
        if ended[0] in Run.FINISHED:
            report.problems.append(f"the run is {ended[0]} but no event finished it")
    else:
        seq, type_, reason, at = expected.final
        if tuple(ended) != tuple(projection.final(type_, reason, at).values()):
            report.problems.append(f"the run's status, halt reason or end does not match event {seq}")
    if verification != combined(expected.checkers):
        report.problems.append("the run's record of who checked its steps does not match its release events")
    brief_seq, brief_fp = (expected.brief or (None, _fingerprint(None)))[:2]
    if _fingerprint(brief) != brief_fp:
        report.problems.append(f"the run's brief does not match {f'event {brief_seq}' if brief_seq else 'its events'}")
    _check_recap_specifics(run, report, expected)
    summary_seq, summary_fp = expected.summary or (None, NO_RECAP)
    if recap_fingerprint(summary, findings) != summary_fp:
        report.problems.append(
            f"the run's recap does not match {f'event {summary_seq}' if summary_seq else 'its events'}")


def _specifics_of_released(expected: _Expected) -> dict:
    """The specifics events the recorder wrote beside a released step (it ignores the others)."""
    return {step: (seq, fp) for step, (seq, fp, _) in expected.specifics.items()
            if step is not None and step in expected.released}


def _check_recap_specifics(run: Run, report: RunReport, expected: _Expected) -> None:
    """The recap's unsourced specifics and the run's count of them, against their events."""
    unsourced, sources, count = Run.objects.filter(pk=run.pk).values_list(
        *projection.RECAP_SPECIFICS_COLUMNS, "unsourced_count").get()
    seq, fp, _ = expected.specifics.get(None, (None, _fingerprint(None, None), 0))
    if _fingerprint(unsourced, sources) != fp:
        report.problems.append(f"the recap's unsourced specifics do not match {f'event {seq}' if seq else 'its events'}")
    counted = sum(n for step, (_, _, n) in expected.specifics.items() if step is None or step in expected.released)
    if count != counted:
        report.problems.append(f"the run's count of unsourced specifics ({count}) does not match its events ({counted})")


def _check_contexts(report: RunReport, shas: set[str]) -> None:
    """Each context record still hashes to its address, and each of its parts' bytes to theirs."""
    if not shas:
        return
    blobs: dict[str, str] = {}
    for sha, parts in ContextRecord.objects.filter(sha256__in=shas).values_list("sha256", "parts").iterator():
        try:
            valid = record_sha256(parts) == sha
        except (KeyError, TypeError):
            valid = False
        if not valid:
            report.problems.append(f"the context record {sha[:12]} no longer matches its parts")
        else:
            blobs.update((part["blob"], f"the context part {part['blob'][:12]}") for part in parts)
    report.problems += blob_problems(blobs)


def _check_ledger_entry(run: Run, report: RunReport, final_hash: str | None, finished: bool) -> None:
    entry = WorkspaceLedger.objects.filter(run_id=run.pk).values_list("seq", "run_hash").first()
    report.final_hash = final_hash
    if entry is None:
        if finished:
            report.problems.append("the run finished but its workspace's ledger has no row for it")
        return
    report.ledger_seq = entry[0]
    if not finished:
        report.problems.append(f"ledger row {entry[0]} holds the run, but it has not finished")
    elif entry[1] != final_hash:
        report.problems.append(f"its final event hash is not the one in ledger row {entry[0]} "
                               "(the end of its event log was removed or rewritten)")


def verify_run(run: Run, *, contexts_seen: set[str] | None = None) -> RunReport:
    """Check one run's chain and every row its events imply. `contexts_seen`: context records
    already checked in this pass (shared by many runs, each is checked once)."""
    report, expected = RunReport(run.pk), _Expected()
    # The status first: a run finished now was finished with its last event, in one transaction,
    # and nothing about it changes any more.
    finished = Run.objects.filter(pk=run.pk).values_list("status", flat=True).get() in Run.FINISHED
    final_hash = _check_events(run, report, expected)
    if not finished:
        # Still being written: its event chain is checked (what is there must link). The rows its
        # events imply are checked once it has finished: read now, they could include rows
        # committed after its events were read, and look like rows no event introduced.
        if WorkspaceLedger.objects.filter(run=run).exists() and \
                Run.objects.filter(pk=run.pk).values_list("status", flat=True).get() not in Run.FINISHED:
            # The ledger row and the final status are written in one transaction: a ledger row
            # beside a status that says "still running" is a status changed afterwards.
            report.problems.append("its workspace's ledger holds it as finished, but its status says it has not")
        return report
    _check_rows(run, report, expected, contexts_seen if contexts_seen is not None else set())
    _check_ledger_entry(run, report, final_hash, True)
    return report


def run_problems(run: Run) -> list[str]:
    return verify_run(run).problems


@dataclasses.dataclass
class WorkspaceReport:
    workspace: Workspace
    runs: int = 0
    events: int = 0
    ledger_rows: int = 0
    broken: list[RunReport] = dataclasses.field(default_factory=list)
    ledger: list[str] = dataclasses.field(default_factory=list)
    changes: list[str] = dataclasses.field(default_factory=list)
    #: The workspace's files whose originals are gone or changed (runs/bytes_check.py).
    files: list[str] = dataclasses.field(default_factory=list)
    #: Periodic checks not written by Beyond, or removed from between two others.
    checks: list[str] = dataclasses.field(default_factory=list)
    #: Runs recorded before their request was chained (what verify could not check of them).
    request_unchecked: list[int] = dataclasses.field(default_factory=list)

    @property
    def other_problems(self) -> list[str]:
        return self.ledger + self.changes + self.files + self.checks

    @property
    def ok(self) -> bool:
        return not (self.broken or self.other_problems)

    def lines(self) -> list[str]:
        """One line per broken run, then the ledger's, the change log's, the files' and the checks' problems."""
        name = self.workspace.slug
        return ([report.line() for report in self.broken] + [f"{name} ledger: {p}" for p in self.ledger]
                + [f"{name} change log: {p}" for p in self.changes] + [f"{name} files: {p}" for p in self.files]
                + [f"{name} checks: {p}" for p in self.checks])


def _check_ledger(workspace: Workspace, report: WorkspaceReport) -> None:
    prev, last_seq = GENESIS, 0
    rows = (WorkspaceLedger.objects.filter(workspace=workspace).order_by("seq")
            .values_list("seq", "run_id", "run__workspace_id", "run_hash", "at", "hash").iterator(chunk_size=500))
    for seq, run_id, run_workspace, run_hash, at, stored in rows:
        report.ledger_rows += 1
        if seq != last_seq + 1:
            report.ledger.append(f"row {last_seq + 1} is missing (the ledger jumps from {last_seq} to {seq})")
        if run_workspace != workspace.pk:
            report.ledger.append(f"row {seq} holds run {run_id} of another workspace")
        if ledger_hash(prev, workspace.pk, seq, run_id, run_hash, at) != stored:
            report.ledger.append(f"row {seq} (run {run_id}) does not match its hash")
        prev, last_seq = stored, seq


#: Checks of what the apps above this one keep on a workspace's chain (the calibration reports),
#: each `(workspace) -> [problem]`, handed over as those apps start (calibration/apps.py).
_checks_from_above: list[Callable[[Workspace], list[str]]] = []


def also_verify(check: Callable[[Workspace], list[str]]) -> None:
    if check not in _checks_from_above:
        _checks_from_above.append(check)


def _other_problems(workspace: Workspace) -> list[str]:
    return [problem for check in _checks_from_above for problem in check(workspace)]


def verify_workspace(workspace: Workspace) -> WorkspaceReport:
    """Every run of the workspace, its ledger and its admin change log, one run at a time."""
    report, contexts_seen = WorkspaceReport(workspace), set()
    for run in Run.objects.filter(workspace=workspace).order_by("id").only("id").iterator(chunk_size=200):
        run_report = verify_run(run, contexts_seen=contexts_seen)
        report.runs += 1
        report.events += run_report.events
        if not run_report.ok:
            report.broken.append(run_report)
        if run_report.request_unchecked:
            report.request_unchecked.append(run.pk)
    _check_ledger(workspace, report)
    report.changes = [*verify_changes(workspace), *settings_problems(workspace), *_other_problems(workspace)]
    report.files = file_problems(workspace)
    report.checks = check_log_problems(workspace)
    return report


#: Runs named in the summary's note of what could not be checked; the rest are counted.
UNCHECKED_NAMED = 5


def summary_line(reports: Iterable[WorkspaceReport]) -> str:
    reports = list(reports)
    broken = sum(len(r.broken) for r in reports)
    other = sum(len(r.other_problems) for r in reports)
    counts = (f"{len(reports)} workspace{'s' if len(reports) != 1 else ''}, {sum(r.runs for r in reports)} runs, "
              f"{sum(r.events for r in reports)} events, {sum(r.ledger_rows for r in reports)} ledger rows")
    if not broken and not other:
        line = f"record intact: {counts} verified"
    else:
        line = (f"record BROKEN: {broken} run{'s' if broken != 1 else ''} and {other} other problem"
                f"{'s' if other != 1 else ''} found in {counts}")
    return line + _unchecked_note([pk for r in reports for pk in r.request_unchecked])


def _unchecked_note(run_ids: list[int]) -> str:
    """What verify could not check: runs recorded before their request was chained."""
    if not run_ids:
        return ""
    named = ", ".join(str(pk) for pk in run_ids[:UNCHECKED_NAMED])
    more = f" and {len(run_ids) - UNCHECKED_NAMED} more" if len(run_ids) > UNCHECKED_NAMED else ""
    plural = len(run_ids) != 1
    return (f"; {len(run_ids)} run{'s' if plural else ''} recorded before {'their' if plural else 'its'} request "
            f"was chained (run{'s' if plural else ''} {named}{more}): {NOT_CHECKED} not checked")


# -- anchors ---------------------------------------------------------------------------------------

def make_anchor() -> dict:
    """Record and return the ledger head of every workspace, to be kept outside the database."""
    at = timezone.now()
    heads = {}
    for workspace_id, slug in Workspace.objects.order_by("slug").values_list("id", "slug"):
        head = (WorkspaceLedger.objects.filter(workspace_id=workspace_id).order_by("-seq")
                .values_list("seq", "hash").first())
        heads[slug] = {"seq": head[0], "hash": head[1]} if head else {"seq": 0, "hash": GENESIS}
        # The admin change log's head too: rows cut from its end leave no gap the chain could show.
        changes = (WorkspaceEvent.objects.filter(workspace_id=workspace_id).order_by("-seq")
                   .values_list("seq", "hash").first())
        heads[slug]["changes"] = {"seq": changes[0], "hash": changes[1]} if changes else {"seq": 0, "hash": GENESIS}
    document = {"kind": ANCHOR_KIND, "at": at.isoformat(timespec="microseconds"), "heads": heads}
    LedgerAnchor.objects.create(at=at, document=document)
    return document


def verify_against(document: dict, slug: str | None = None) -> list[str]:
    """Problems of the ledger against a kept anchor: the row at each anchored seq must still hold
    the anchored hash (a chain recomputed after an edit does not)."""
    if not isinstance(document, dict) or document.get("kind") != ANCHOR_KIND:
        return ["the anchor file is not a Beyond ledger anchor"]
    problems = []
    for name, head in sorted(document.get("heads", {}).items()):
        if slug is not None and name != slug:
            continue
        problems += _changes_against(name, head.get("changes") or {}, document.get("at"))
        if not head.get("seq"):
            continue
        stored = (WorkspaceLedger.objects.filter(workspace__slug=name, seq=head["seq"])
                  .values_list("hash", "run_id").first())
        if stored is None:
            problems.append(f"{name} ledger: row {head['seq']}, anchored at {document.get('at')}, is gone")
        elif stored[0] != head["hash"]:
            problems.append(f"{name} ledger: row {head['seq']} (run {stored[1]}) no longer has the hash anchored at "
                            f"{document.get('at')}: the chain was rewritten")
    return problems


def _changes_against(slug: str, head: dict, at) -> list[str]:
    if not head.get("seq"):
        return []
    stored = WorkspaceEvent.objects.filter(workspace__slug=slug, seq=head["seq"]).values_list("hash", flat=True).first()
    if stored is None:
        return [f"{slug} change log: change {head['seq']}, anchored at {at}, is gone"]
    if stored != head["hash"]:
        return [f"{slug} change log: change {head['seq']} no longer has the hash anchored at {at}: "
                "the log was rewritten"]
    return []


# -- the periodic check and what pages show ----------------------------------------------------------

# Each check carries a keyed hash (HMAC with a key derived from SECRET_KEY) of its content and of the
# workspace's check before it: without the server's secret, a row put in by hand (an "ok" to hide a
# failure, a date in the future to hold the checks off) has no valid one, and a row removed from
# between two others breaks the link of the next one.
CHECK_MAC_SALT = "beyond.runs.chain-check"


def check_mac(prev_mac: str, workspace_id: int, at, ok: bool, problems: list, *, secret=None) -> str:
    content = canonical_json(as_read_back({"prev": prev_mac, "workspace": workspace_id, "at": at, "ok": ok,
                                           "problems": problems}))
    return salted_hmac(CHECK_MAC_SALT, content, secret=secret, algorithm="sha256").hexdigest()


def _mac_holds(mac: str, prev_mac: str, workspace_id: int, at, ok: bool, problems) -> bool:
    """Whether `mac` was made with the secret key or one of its fallbacks (a rotated key)."""
    try:
        return any(constant_time_compare(mac, check_mac(prev_mac, workspace_id, at, ok, problems, secret=secret))
                   for secret in (settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS))
    except (TypeError, ValueError):
        return False


def _record_check(workspace: Workspace, ok: bool, problems: list[str]) -> ChainCheck:
    with transaction.atomic():
        # Two checkers at once take turns, and link in order.
        Workspace.objects.select_for_update(no_key=True).filter(pk=workspace.pk).order_by().values_list("pk").first()
        prev = ChainCheck.objects.filter(workspace=workspace).order_by("-id").values_list("mac", flat=True).first()
        at = timezone.now()
        return ChainCheck.objects.create(workspace=workspace, at=at, ok=ok, problems=problems,
                                         mac=check_mac(prev or GENESIS, workspace.pk, at, ok, problems))


def _checks(workspace_id: int):
    """The workspace's checks as (n, row, authentic), n counting from 1 in the order written; a row
    is authentic when its keyed hash holds and links to the check before it."""
    rows = ChainCheck.objects.filter(workspace_id=workspace_id).order_by("id").values_list(
        "id", "at", "ok", "problems", "mac")
    prev = GENESIS
    for n, (pk, at, ok, problems, mac) in enumerate(rows.iterator(chunk_size=500), start=1):
        yield n, (pk, at, ok, problems), _mac_holds(mac, prev, workspace_id, at, ok, problems)
        prev = mac


def check_log_problems(workspace: Workspace) -> list[str]:
    """One sentence per periodic check that Beyond did not write as it stands."""
    return [f"check {n} ({at.isoformat(timespec='seconds')}, {'passed' if ok else 'failed'}) was not written by "
            "Beyond as it stands (its keyed hash does not hold: put in or changed by hand, or a check before it "
            "was removed)"
            for n, (_pk, at, ok, _problems), authentic in _checks(workspace.pk) if not authentic]


def _latest_check(workspace_id: int) -> tuple[tuple, bool] | None:
    """The workspace's latest check (pk, at, ok, problems) and whether it is authentic."""
    rows = list(ChainCheck.objects.filter(workspace_id=workspace_id).order_by("-id").values_list(
        "id", "at", "ok", "problems", "mac")[:2])
    if not rows:
        return None
    (pk, at, ok, problems, mac), prev = rows[0], (rows[1][4] if len(rows) > 1 else GENESIS)
    return (pk, at, ok, problems), _mac_holds(mac, prev, workspace_id, at, ok, problems)


def check_all() -> list[ChainCheck]:
    """Verify every workspace and record the outcome of each (shown to its admins and auditors)."""
    checks = []
    for workspace in Workspace.objects.order_by("id").iterator():
        report = verify_workspace(workspace)
        checks.append(_record_check(workspace, report.ok, report.lines()))
        if not report.ok:
            log.error("the record of workspace %s is broken: %s", workspace.slug, "; ".join(report.lines()))
    return checks


def check_if_due() -> bool:
    """Run `check_all` if the last check is older than BEYOND_CHAIN_CHECK_EVERY_S; True if it ran.
    A check Beyond did not write (its keyed hash does not hold) counts as no check."""
    now = timezone.now()
    last_workspace = ChainCheck.objects.order_by("-id").values_list("workspace_id", flat=True).first()
    latest = _latest_check(last_workspace) if last_workspace is not None else None
    if latest is not None and latest[1] and \
            now - timedelta(seconds=settings.BEYOND_CHAIN_CHECK_EVERY_S) < latest[0][1] <= now:
        return False
    check_all()
    return True


async def check_periodically() -> None:
    """Embedded mode: the periodic check, on the server's own event loop (beside the run sweeper)."""
    while True:
        try:
            await database_sync_to_async(check_if_due, thread_sensitive=False)()
        except Exception:
            log.exception("the periodic check of the record failed")
        await asyncio.sleep(CHECK_POLL_S)


def failed_check(workspace: Workspace) -> ChainCheck | None:
    """The workspace's latest check if it failed (a later passing check clears it). A latest check
    Beyond did not write is a failure of its own: it may be there to hide one."""
    latest = _latest_check(workspace.pk)
    if latest is None:
        return None
    (pk, at, ok, problems), authentic = latest
    if not authentic:
        return ChainCheck(pk=pk, workspace=workspace, at=at, ok=False, problems=[
            f"{workspace.slug} checks: the latest check ({at.isoformat(timespec='seconds')}) was not written by "
            "Beyond (its keyed hash does not hold); run `beyond_audit verify`"])
    return None if ok else ChainCheck.objects.get(pk=pk)


def chain_status(run: Run) -> dict:
    """The run's chain, verified now, for its audit page."""
    report = verify_run(run)
    return {"ok": report.ok, "checked_at": timezone.now(), "events": report.events,
            "problems": report.problems, "first_broken": report.first_broken,
            "ledger_seq": report.ledger_seq, "final_hash": report.final_hash}
