"""A long, plausible run history for measuring the audit pages (bench/audit_history.py), in a
database made for measuring: `seed_history(slug, runs)`, with Django set up.

Rows are bulk-created in batches, bypassing the pipeline: what matters here is the shape and
volume of the record the pages read (runs with steps, attempts, verdicts, model calls and an event
log), not how it was produced. Every seeded run is marked by its `lease_owner` (SEEDER), so it
can be told apart from a real one on the record, which stays append-only like any other.
"""
from __future__ import annotations

import json
import random
from contextlib import contextmanager
from dataclasses import fields as dataclass_fields
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.db import connection, models, transaction
from django.utils import timezone

from pipeline import badges, events as ev
from beyond_site.runs.models import Attempt, ModelCall, Run, RunEvent, Step, Verdict
from beyond_site.workspaces.models import Conversation, Membership, Workspace

SEEDER = "bench/history_seed.py"
BATCH_RUNS = 1000
MEMBERS = ("ines.auditor", "marc.ops", "sofia.ciso", "tom.dpo", "yuki.it")
TASKS = (
    "Draft an access-control policy for our {n}-person team",
    "Write the records of processing for the payroll system (batch {n})",
    "Prepare an incident response plan covering ransomware, scenario {n}",
    "Summarise supplier security requirements for vendor #{n}",
    "Draft an ISO 27001 statement of applicability, revision {n}",
    "Write a data retention schedule for customer support tickets ({n})",
    "Prepare a DPIA for the new analytics pipeline, phase {n}",
    "Draft the business continuity test report for site {n}",
)
MODELS = ("z-ai/glm-5.3", "qwen/qwen3-235b", "openai/gpt-5-mini")
STEP_TITLES = ("Scope and purpose", "Roles and responsibilities", "Controls", "Review and evidence")


@contextmanager
def explicit_timestamps(*fields):
    """Let bulk_create keep the timestamps we set: a history is spread over past months, while
    `auto_now_add` would stamp every row with the moment of seeding."""
    saved = [(f, f.auto_now_add) for f in fields]
    for f, _ in saved:
        f.auto_now_add = False
    try:
        yield
    finally:
        for f, value in saved:
            f.auto_now_add = value


def insert_rows(objects: list[models.Model]) -> None:
    """INSERT unsaved rows that no later row points to, without bulk_create's per-object work.

    bulk_create costs most of the seeding time by the million rows; a plain executemany of the
    values, each prepared by its field for this database (JSON, timestamps), costs a fraction.
    """
    if not objects:
        return
    meta = objects[0]._meta
    fields = [f for f in meta.concrete_fields if not f.primary_key]
    prepared = {f.attname for f in fields if isinstance(f, (models.JSONField, models.DateTimeField))}
    sql = (f"INSERT INTO {connection.ops.quote_name(meta.db_table)} "
           f"({', '.join(connection.ops.quote_name(f.column) for f in fields)}) "
           f"VALUES ({', '.join(['%s'] * len(fields))})")
    rows = [tuple(f.get_db_prep_save(getattr(o, f.attname), connection) if f.attname in prepared
                  else getattr(o, f.attname) for f in fields) for o in objects]
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)


def shallow_dict(payload: ev.Payload) -> dict:
    """The payload's fields as stored JSON (dataclasses.asdict deep-copies them: slow by the million)."""
    return {f.name: getattr(payload, f.name) for f in dataclass_fields(payload)}


def topology_for(model: str) -> dict:
    return {role: {"provider": "openrouter", "model": model, "effort": "high" if role == "planner" else "low"}
            for role in ("planner", "executor", "verifier", "summarizer")}


def step_text(title: str, n: int, variant: int) -> str:
    lines = [f"## {title}", "",
             f"This section applies to all staff and contractors of unit {n % 17 + 1}.", "",
             "- Access is granted on a **need-to-know** basis.",
             f"- Reviews happen every {3 + variant} months and are recorded.",
             "- Exceptions are approved by the security officer.", ""]
    if n % 3 == 0:
        lines += ["| Control | Owner |", "|---|---|", "| A.5.15 | IT |", "| A.5.18 | HR |", ""]
    lines.append(f"Citation: [A.5.15] Access control (revision {variant}).")
    return "\n".join(lines)


def verdict(passed: bool) -> dict:
    issues = [] if passed else [{"type": "missing_requirement", "detail": "Who approves exceptions?",
                                 "quote": "Exceptions are approved"}]
    return {"pass": passed, "issues": issues}


class HistorySeeder:
    """Builds `total` finished runs in `workspace`, newest `newest` and one every `spacing` before."""

    def __init__(self, workspace: Workspace, total: int, *, newest: datetime, spacing: timedelta, seed: int = 7):
        self.workspace, self.total, self.newest, self.spacing = workspace, total, newest, spacing
        self.random = random.Random(seed)
        self.users = self._members()
        self.conversations = [Conversation.objects.create(workspace=workspace, title=f"Seeded history of {u.username}",
                                                          created_by=u) for u in self.users]

    def _members(self):
        User = get_user_model()
        users = []
        for name in MEMBERS:
            user, created = User.objects.get_or_create(username=name)
            if created:
                user.set_unusable_password()
                user.save(update_fields=["password"])
            Membership.objects.get_or_create(user=user, workspace=self.workspace,
                                             defaults={"role": Membership.MEMBER})
            users.append(user)
        return users

    def run(self, progress=None) -> int:
        fields = [Run._meta.get_field("created_at"), Attempt._meta.get_field("created_at"),
                  Verdict._meta.get_field("created_at"), ModelCall._meta.get_field("created_at")]
        made = 0
        with explicit_timestamps(*fields):
            while made < self.total:
                count = min(BATCH_RUNS, self.total - made)
                with transaction.atomic():
                    self._batch(made, count)
                made += count
                if progress:
                    progress(made)
        return made

    def _batch(self, offset: int, count: int) -> None:
        r = self.random
        plans = []
        for k in range(offset, offset + count):
            # Oldest first within the history, so ids grow with time like a real one.
            created = self.newest - self.spacing * (self.total - 1 - k)
            n = k + 1
            roll = r.random()
            status = (Run.COMPLETED if roll < 0.86 else Run.HALTED if roll < 0.95
                      else Run.FAILED if roll < 0.98 else Run.CANCELLED)
            user_i = r.randrange(len(self.users))
            plans.append({"n": n, "created": created, "status": status, "user": user_i,
                          "model": MODELS[n % len(MODELS)], "steps": 2 + (n % 3 == 0),
                          "rerender": r.random() < 0.15})
        runs = Run.objects.bulk_create([
            Run(workspace=self.workspace, conversation=self.conversations[p["user"]], created_by=self.users[p["user"]],
                task=TASKS[p["n"] % len(TASKS)].format(n=p["n"]), status=p["status"], topology=topology_for(p["model"]),
                halt_reason=("The verifier could not be reached twice at step 2" if p["status"] == Run.HALTED else
                             "The planner's reply was not a valid brief" if p["status"] == Run.FAILED else
                             "Stopped by a member" if p["status"] == Run.CANCELLED else None),
                brief=None if p["status"] == Run.FAILED else self._brief(p),
                verification=None if p["status"] == Run.FAILED else badges.BY_MODEL,
                summary="A short recap of the released steps." if p["status"] == Run.COMPLETED else None,
                created_at=p["created"], started_at=p["created"] + timedelta(seconds=1),
                finished_at=p["created"] + timedelta(seconds=40 + p["n"] % 50), lease_owner=SEEDER)
            for p in plans])
        steps, step_plans = [], []
        for run, p in zip(runs, plans):
            if p["status"] == Run.FAILED:
                continue
            for i in range(1, p["steps"] + 1):
                halted = p["status"] == Run.HALTED and i == 2
                after = p["status"] in (Run.HALTED, Run.CANCELLED) and i > 2
                rerender = p["rerender"] and i == 1
                badge = (None if halted or after else badges.PASSED_AFTER_RERENDER if rerender
                         else badges.WARNING if p["n"] % 11 == 0 and i == 1 else badges.PASSED)
                status = Step.HALTED if halted else Step.NOT_RELEASED if after else Step.RELEASED
                title = STEP_TITLES[i - 1]
                content = step_text(title, p["n"], 2 if rerender else 1) if status == Step.RELEASED else None
                steps.append(Step(run=run, index=i, title=title, content_spec=f"Write the {title.lower()} part.",
                                  status=status, badge=badge, content=content,
                                  warnings=["Released with an open issue: who approves exceptions?"]
                                  if badge == badges.WARNING else [],
                                  released_at=p["created"] + timedelta(seconds=10 * i) if content else None))
                step_plans.append((run, p, i, status, rerender, after))
        steps = Step.objects.bulk_create(steps)
        attempts, attempt_meta = [], []
        for step, (run, p, i, status, rerender, after) in zip(steps, step_plans):
            if after:
                continue
            tries = 2 if rerender or status == Step.HALTED else 1
            for a in range(1, tries + 1):
                attempts.append(Attempt(step=step, attempt=a, draft=step_text(step.title, p["n"], a),
                                        created_at=p["created"] + timedelta(seconds=10 * i + 3 * a)))
                attempt_meta.append((run, p, i, a, tries, status))
        attempts = Attempt.objects.bulk_create(attempts)
        verdicts, calls = [], []
        for attempt, (run, p, i, a, tries, status) in zip(attempts, attempt_meta):
            at = attempt.created_at
            passed = a == tries and status == Step.RELEASED
            error = "timeout" if status == Step.HALTED else None
            verdicts.append(Verdict(attempt=attempt, source=Verdict.MODEL, created_at=at,
                                    raw=None if error else json.dumps(verdict(passed)),
                                    parsed=None if error else verdict(passed), error=error))
            verdicts.append(Verdict(attempt=attempt, source=Verdict.MECHANICAL, created_at=at,
                                    raw=None, parsed={"pass": True, "issues": []}, error=None))
            calls.append(self._call(run, p, "executor", at, step=i, attempt=a))
            calls.append(self._call(run, p, "verifier", at, step=i, attempt=a, error=error))
        for run, p in zip(runs, plans):
            calls.append(self._call(run, p, "planner", p["created"] + timedelta(seconds=2)))
            if p["status"] == Run.COMPLETED:
                calls.append(self._call(run, p, "summarizer", p["created"] + timedelta(seconds=38)))
        insert_rows(verdicts)
        insert_rows(calls)
        insert_rows([e for run, p in zip(runs, plans) for e in self._events(run, p)])

    def _brief(self, p) -> dict:
        return {"task": TASKS[p["n"] % len(TASKS)].format(n=p["n"]), "judgments": ["Audience: all staff."],
                "citations": [{"id": "A.5.15", "framework": "ISO 27001", "ref": "A.5.15", "title": "Access control"}],
                "steps": [{"index": i, "title": STEP_TITLES[i - 1], "content_spec": f"Write the {STEP_TITLES[i - 1].lower()} part."}
                          for i in range(1, p["steps"] + 1)]}

    def _call(self, run, p, role, at, *, step=None, attempt=None, error=None) -> ModelCall:
        r = self.random
        tokens_in, tokens_out = r.randrange(800, 6000), r.randrange(150, 1500)
        return ModelCall(run=run, role=role, step_index=step, attempt=attempt, provider="openrouter", model=p["model"],
                         model_served=None if error else p["model"], effort="high" if role == "planner" else "low",
                         latency_s=round(r.uniform(0.8, 25.0), 3), input_tokens=None if error else tokens_in,
                         cache_read_tokens=None if error else tokens_in // 2, cache_write_tokens=None if error else 0,
                         output_tokens=None if error else tokens_out, reasoning_tokens=None if error else tokens_out // 3,
                         cost=None if error else round((tokens_in * 0.4 + tokens_out * 1.6) / 1e6, 6),
                         cost_source=None if error else "reported", transport_retries=1 if error else 0,
                         finish_reason=None if error else "stop", error=error, created_at=at)

    def _events(self, run, p) -> list[RunEvent]:
        payloads = [ev.RunStarted(topology=run.topology, offline=False, runner=SEEDER)]
        if p["status"] == Run.FAILED:
            payloads.append(ev.RunFailed(reason=run.halt_reason))
        else:
            total = p["steps"]
            payloads.append(ev.BriefReady(brief=run.brief))
            for i in range(1, total + 1):
                if p["status"] in (Run.HALTED, Run.CANCELLED) and i > 2:
                    payloads.append(ev.StepNotReleased(step=i))
                    continue
                payloads += [ev.StepRendering(step=i, attempt=1, total=total), ev.StepVerifying(step=i, attempt=1, total=total)]
                if p["status"] == Run.HALTED and i == 2:
                    payloads.append(ev.StepHalted(step=i, reason="The verifier could not be reached (timeout)"))
                    continue
                if p["rerender"] and i == 1:
                    payloads += [ev.StepRerendering(step=i, issues=[verdict(False)["issues"][0]]),
                                 ev.StepRendering(step=i, attempt=2, total=total),
                                 ev.StepVerifying(step=i, attempt=2, total=total)]
                payloads.append(ev.StepReleased(step=i, title=STEP_TITLES[i - 1], badge=badges.PASSED,
                                                checked_by=badges.BY_MODEL, content=step_text(STEP_TITLES[i - 1], p["n"], 2 if p["rerender"] and i == 1 else 1)))
            payloads.append({Run.COMPLETED: ev.RunCompleted(), Run.HALTED: ev.RunHalted(step=2, reason=run.halt_reason),
                             Run.CANCELLED: ev.RunCancelled(reason=run.halt_reason)}[p["status"]])
        return [RunEvent(run=run, seq=seq, type=payload.TYPE, data=shallow_dict(payload),
                         at=p["created"] + timedelta(seconds=seq))
                for seq, payload in enumerate(payloads, start=1)]


def seed_history(slug: str, runs: int, *, into_existing: bool = False, progress=None,
                 span: timedelta = timedelta(days=365)) -> tuple[Workspace, int]:
    """Seed `runs` finished runs into workspace `slug` (created if missing); returns (workspace, made).

    An existing workspace is refused unless `into_existing`: seeded runs are on the append-only
    record for good, so they must not land in a real workspace by a typo.
    """
    workspace, created = Workspace.objects.get_or_create(slug=slug, defaults={"name": f"{slug} (seeded history)"})
    if not created and not into_existing:
        raise ValueError(f"workspace {slug!r} exists: pass into_existing=True to add seeded runs to it for good")
    newest = timezone.now() - timedelta(minutes=1)
    spacing = span / max(runs, 1)
    seeder = HistorySeeder(workspace, runs, newest=newest, spacing=spacing)
    return workspace, seeder.run(progress)
