"""Run one task headless, through the same code path as the chat, and print its trace (docs/interfaces.md)."""
from __future__ import annotations

import asyncio
import json

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from pipeline.research import search_setting
from beyond_site.runs import verification
from beyond_site.runs.budgets import BudgetRefused
from beyond_site.runs.trust import CalibrationRequired, sentence as trust_sentence
from beyond_site.runs.models import Run
from beyond_site.runs.selectors import run_trace
from beyond_site.lib.runners import runner_identity
from beyond_site.runs.command_options import chosen_topology, workspace_named
from beyond_site.runs.queue import NotRedoable, claim_run, redo, start_run
from beyond_site.runs.runner import execute_run
from beyond_site.workspaces.access import WRITE, allows, membership_for
from beyond_site.workspaces.models import Workspace


class Command(BaseCommand):
    help = "Run one task through the pipeline and print the run trace."

    def add_arguments(self, parser):
        parser.add_argument("--workspace", help="workspace slug (not with --redo: the run's own)")
        parser.add_argument("--task", help="the task, as a user would type it (not with --redo)")
        source = parser.add_mutually_exclusive_group()
        source.add_argument("--provider", help="offline | scripted:PATH | openrouter:MODEL | openai:MODEL@BASE_URL")
        source.add_argument("--topology", help="topology JSON (model, provider and effort per role), or a provider shorthand")
        parser.add_argument("--follow-up", type=int, metavar="RUN_ID",
                            help="join RUN_ID's conversation, as a follow-up message in the chat does")
        parser.add_argument("--research", action="store_true", help="do web research before the brief (BEYOND_SEARCH)")
        parser.add_argument("--json", action="store_true", help="print the run trace as JSON")
        parser.add_argument("--redo", type=int, metavar="RUN_ID",
                            help="redo one released step of the finished run RUN_ID (with --step)")
        parser.add_argument("--step", type=int, metavar="K", help="the step to redo")
        parser.add_argument("--instruction", default="", help="with --redo: what the step's executor is told "
                                                               "(the verifier never sees it)")
        parser.add_argument("--user", metavar="USERNAME", help="with --redo: start it as this member, who must "
                                                               "be allowed to start runs in the workspace")

    def handle(self, *args, **opts):
        if opts["redo"] is not None or opts["step"] is not None:
            return self._redo(opts)
        if not opts["workspace"] or opts["task"] is None:
            raise CommandError("--workspace and --task are required (or --redo RUN_ID --step K)")
        workspace = workspace_named(opts["workspace"])
        if not opts["task"].strip():
            raise CommandError("the task is empty")
        conversation = None
        if opts["follow_up"] is not None:
            earlier = Run.objects.filter(pk=opts["follow_up"], workspace=workspace).select_related("conversation").first()
            if earlier is None:
                raise CommandError(f"no run {opts['follow_up']} in workspace {workspace.slug!r} to follow up")
            conversation = earlier.conversation
            if conversation is not None and conversation.deleted_at is not None:
                raise CommandError(f"run {earlier.pk}'s conversation was deleted; start a new one")
        if opts["research"] and not search_setting(settings.BEYOND_ENVIRONMENT).configured:
            raise CommandError(search_setting(settings.BEYOND_ENVIRONMENT).message)
        topology, operator_topology = _topology(opts, workspace)
        try:
            run, _ = start_run(workspace, opts["task"], topology=topology, conversation=conversation,
                               research=opts["research"], run_here=True)
        except BudgetRefused as exc:  # over a cap of the workspace's budget: no run was created
            raise CommandError(str(exc)) from None
        except CalibrationRequired as exc:  # the workspace requires a calibration: no run was created
            raise _calibration_error(exc, workspace) from None
        self._execute_and_print(run, operator_topology, opts)

    def _redo(self, opts):
        """`--redo RUN_ID --step K`: redo step K of a finished run (docs/working-loop.md)."""
        if opts["redo"] is None or opts["step"] is None:
            raise CommandError("--redo RUN_ID and --step K go together")
        if opts["task"] is not None or opts["follow_up"] is not None or opts["research"]:
            raise CommandError("--redo takes the earlier run's task, conversation and research: "
                               "no --task, --follow-up or --research")
        earlier = Run.objects.filter(pk=opts["redo"]).select_related("workspace", "conversation").first()
        if earlier is None or (opts["workspace"] and earlier.workspace.slug != opts["workspace"]):
            raise CommandError(f"no run {opts['redo']}" + (f" in workspace {opts['workspace']!r}" if opts["workspace"] else ""))
        user = None
        if opts["user"]:
            user = get_user_model().objects.filter(is_active=True, **{get_user_model().USERNAME_FIELD: opts["user"]}).first()
            membership = membership_for(user, earlier.workspace.slug) if user is not None else None
            if not allows(membership, WRITE):
                raise CommandError(f"{opts['user']!r} may not start runs in workspace {earlier.workspace.slug!r}")
        if earlier.conversation is not None and earlier.conversation.deleted_at is not None:
            raise CommandError(f"run {earlier.pk}'s conversation was deleted")
        topology, operator_topology = _topology(opts, earlier.workspace)
        try:
            run, _ = redo(earlier, opts["step"], user=user, instruction=opts["instruction"], run_here=True,
                          topology=topology)
        except (NotRedoable, BudgetRefused) as exc:
            raise CommandError(str(exc)) from None
        except CalibrationRequired as exc:
            raise _calibration_error(exc, earlier.workspace) from None
        self._execute_and_print(run, operator_topology, opts)

    def _execute_and_print(self, run: Run, operator_topology: bool, opts) -> None:
        owner = f"{runner_identity()}/cli"
        if not claim_run(run.pk, owner):
            raise CommandError(f"run {run.pk} was claimed by another runner")
        asyncio.run(execute_run(run.pk, owner, operator_topology=operator_topology))
        run = Run.objects.get(pk=run.pk)
        trace = run_trace(run)
        if opts["json"]:
            self.stdout.write(json.dumps(trace, indent=2, ensure_ascii=False))
        else:
            self.stdout.write(format_trace(trace))


def _calibration_error(exc: CalibrationRequired, workspace: Workspace) -> CommandError:
    """The workspace requires a calibration its verifier lacks: no run was created."""
    return CommandError(f"{exc} Calibrate it with manage.py beyond_calibrate --workspace {workspace.slug}, "
                        f"or on the Calibration page (/w/{workspace.slug}/calibration/).")


def _topology(opts, workspace: Workspace):
    """The run's topology, and whether the operator chose it here (its endpoints may then be local;
    the workspace's own topology connects through the guarded transport, as in the chat)."""
    return (chosen_topology(workspace, provider=opts["provider"], topology=opts["topology"]),
            opts["provider"] is not None or opts["topology"] is not None)


def format_trace(trace: dict) -> str:
    run = trace["run"]
    lines = [f"Run {run['id']}: {run['status']}" + (f" ({run['halt_reason']})" if run["halt_reason"] else "")]
    if run.get("redo_of"):
        lines.append(f"Redo of step {run['redo_of']['step']} of run {run['redo_of']['run']}")
    if run.get("decline_reason"):  # a declined run: its planner's reason is the whole answer
        lines.append(f"Declined: {run['decline_reason']}")
    if run.get("verification"):
        lines.append(verification.WORDS.get(run["verification"], run["verification"]))
    if run.get("verifier_trust"):
        lines.append(trust_sentence(run["verifier_trust"]))
    for step in trace["steps"]:
        badge = step["badge"] or step["status"]
        carried = f", carried over from run {run['redo_of']['run']}" if step.get("carried_over") else ""
        lines.append(f"\n## Step {step['index']}: {step['title']}  [{badge}{carried}]")
        for warning in step["warnings"]:
            lines.append(f"! {warning}")
        if step["content"]:
            lines.append(step["content"])
    if trace["summary"]:
        lines.append(f"\n## Recap\n{trace['summary']}")
    for warning in run.get("warnings") or []:
        lines.append(f"! {warning}")
    return "\n".join(lines)
