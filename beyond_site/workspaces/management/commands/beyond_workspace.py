"""Scripted workspace administration (docs/interfaces.md); idempotent where that makes sense.

Every change is written to the workspace's change log like a change made on the settings page,
with no user: the log shows it as made by a command on the server (docs/audit.md)."""
from __future__ import annotations

import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from pipeline.topology import TopologyError, parse_shorthand
from beyond_site.workspaces import configuration, export_settings, knowledge, members, tokens
from beyond_site.workspaces.models import Membership, Workspace, WorkspaceEvent


#: require-calibration's options (dashes for the thresholds' underscores), in percent.
CALIBRATION_OPTIONS = {
    "max-clean-flagged": "at most this percentage of faithful drafts flagged",
    "max-unparseable": "at most this percentage of verdicts unparseable",
    "min-caught": "at least this percentage of planted violations caught by the model",
}
#: set-budget's options (dashes for the limits' underscores) and what each limits.
BUDGET_OPTIONS = {
    "max-tokens-per-run": "tokens a run may use; it halts with a budget: reason when it reaches them",
    "max-cost-per-run": "USD a run may spend (counted from the costs endpoints report)",
    "max-runs-per-user-per-day": "runs a member may start in any 24 hours",
    "max-runs-in-flight-per-user": "runs a member may have queued or running at once",
    "max-runs-in-flight-per-workspace": "runs the workspace may have queued or running at once",
}


_SLUG = ("slug", {})
#: Every subcommand: its help and its arguments (set-budget's and require-calibration's limits
#: are added from the tables above).
SUBCOMMANDS: dict[str, tuple[str, list[tuple[str, dict]]]] = {
    "create": ("create a workspace (no-op if it exists)", [_SLUG, ("--name", {})]),
    "add-memory": ("add a short workspace fact", [_SLUG, ("text", {})]),
    "add-file": ("add a workspace file (text, Markdown, CSV, PDF, DOCX)", [_SLUG, ("path", {})]),
    "add-member": ("add a user to a workspace, or change their role",
                   [_SLUG, ("username", {}), ("role", {"choices": ["admin", "member", "auditor"]})]),
    "remove-member": ("remove a user from a workspace", [_SLUG, ("username", {})]),
    "rename": ("change a workspace's display name", [_SLUG, ("name", {})]),
    "set-topology": ("the model per role: a provider shorthand, a topology JSON object, or 'default' for "
                     "BEYOND_PROVIDER", [_SLUG, ("topology", {})]),
    "set-frameworks": ("the enabled framework packs (comma-separated keys)", [_SLUG, ("keys", {})]),
    "set-research-default": ("whether new conversations start with web research on",
                             [_SLUG, ("value", {"choices": ["on", "off"]})]),
    "set-budget": ("set the workspace's limits on runs and spending (a limit not named stays as it is; 'none' "
                   "removes one)", [_SLUG]),
    "require-calibration": ("refuse runs whose verifier has no calibration report meeting these thresholds "
                            "(percentages, narrow contract); --off requires none",
                            [_SLUG, ("--off", {"action": "store_true", "help": "require no calibration"})]),
    "create-token": ("make a personal API token for a user; prints it alone on its last line (shown once: only "
                     "its hash is kept)", [
                         ("username", {}),
                         ("--name", {"default": "Command line",
                                     "help": "what the token is for (default: Command line)"}),
                         ("--days", {"type": int, "default": 90,
                                     "help": "how long it lasts, 1 to 365 days (default 90)"}),
                         ("--read-only", {"action": "store_true", "help": "it may read, never write"}),
                         ("--workspace", {"action": "append", "metavar": "SLUG",
                                          "help": "limit it to this workspace (repeat for several; default: all "
                                                  "of the user's)"})]),
    "set-export": ("the deliverables' page furniture (a setting not named stays as it is)", [
        _SLUG,
        ("--paper", {"choices": sorted(export_settings.PAPERS), "help": "the paper size (default a4)"}),
        ("--classification", {"metavar": "TEXT", "help": "printed in every page's footer, e.g. Internal; '' for "
                                                         "none"}),
        ("--organisation", {"metavar": "TEXT", "help": "named on the title page; '' for the workspace's name"})]),
}


class Command(BaseCommand):
    help = "Create workspaces and add memories, files and members."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        for action, (help_text, arguments) in SUBCOMMANDS.items():
            command = sub.add_parser(action, help=help_text)
            for name, options in arguments:
                command.add_argument(name, **options)
        budget, calibration = sub.choices["set-budget"], sub.choices["require-calibration"]
        for option, what in BUDGET_OPTIONS.items():
            budget.add_argument(f"--{option}", metavar="N|none", help=what)
        for option, what in CALIBRATION_OPTIONS.items():
            calibration.add_argument(f"--{option}", metavar="PERCENT", help=what)

    def handle(self, *args, **opts):
        action = opts["action"]
        if action == "create-token":
            return self._create_token(opts)
        if action == "create":
            workspace, created = configuration.create_workspace(opts["slug"], opts["name"])
            self.stdout.write(f"{'Created' if created else 'Exists'}: workspace {workspace.slug} ({workspace.name})")
            if created:
                self._say_logged(workspace)
            return
        workspace = Workspace.objects.filter(slug=opts["slug"]).first()
        if workspace is None:
            raise CommandError(f"unknown workspace {opts['slug']!r}")
        last = self._last_change(workspace)
        try:
            said = getattr(self, "_" + action.replace("-", "_"))(workspace, opts)
        except (ValueError, TopologyError, knowledge.DocumentRefused) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(said)
        self._say_logged(workspace, after=last)

    # --- one method per action on a workspace: it makes the change and says what it did ------

    def _add_memory(self, workspace, opts) -> str:
        memory = knowledge.add_memory(workspace, opts["text"])
        return f"Memory {memory.pk} in {workspace.slug}"

    def _add_file(self, workspace, opts) -> str:
        path = Path(opts["path"])
        if not path.is_file():
            raise CommandError(f"no such file: {path}")
        document, created = knowledge.add_document(workspace, path.name, path.read_bytes())
        return (f"{'Added' if created else 'Already there'}: {document.name} ({document.kind}, {document.size} bytes, "
                f"{len(document.text)} characters of text)")

    def _set_budget(self, workspace, opts) -> str:
        budget = configuration.set_budget(workspace, budget_limits(opts))
        return f"Budget of {workspace.slug}: " + ", ".join(
            f"{name.replace('_', '-')}={'none' if value is None else value}" for name, value in budget.limits().items())

    def _require_calibration(self, workspace, opts) -> str:
        stored = configuration.set_calibration_requirement(workspace, None if opts["off"] else calibration_bounds(opts))
        if stored is None:
            return f"Calibration requirement of {workspace.slug}: none"
        values = {option: stored[option.replace("-", "_")] for option in CALIBRATION_OPTIONS}
        return f"Calibration requirement of {workspace.slug}: " + ", ".join(
            f"{option}={'none' if value is None else percent(value)}" for option, value in values.items())

    def _add_member(self, workspace, opts) -> str:
        # Scripted set-up adds people before they ever logged in: a missing user is created with
        # no usable password, to be set by them or an admin.
        membership = members.add_member(workspace, opts["username"], opts["role"], create_user=True)
        said = f"{membership.user.username} is {membership.role} of {workspace.slug}"
        if not membership.user.has_usable_password():
            said += (f"\n{membership.user.username} has no password yet: "
                     f"manage.py changepassword {membership.user.username}")
        return said

    def _remove_member(self, workspace, opts) -> str:
        membership = Membership.objects.filter(workspace=workspace, user__username=opts["username"]).first()
        if membership is None:
            raise CommandError(f"{opts['username']} is not a member of {workspace.slug}")
        members.remove_member(membership)
        return f"{opts['username']} removed from {workspace.slug}"

    def _rename(self, workspace, opts) -> str:
        workspace = configuration.rename_workspace(workspace, opts["name"])
        return f"Workspace {workspace.slug} is named {workspace.name}"

    def _set_topology(self, workspace, opts) -> str:
        stored = configuration.set_topology(workspace, topology_argument(opts["topology"]), operator=True)
        return f"Models of {workspace.slug}: " + (", ".join(
            f"{role}={spec.get('provider')}:{spec.get('model')}" for role, spec in stored.items())
            if stored else "the server default (BEYOND_PROVIDER)")

    def _set_frameworks(self, workspace, opts) -> str:
        keys = [key.strip() for key in opts["keys"].split(",") if key.strip()]
        enabled = configuration.set_enabled_frameworks(workspace, keys)
        return f"Enabled frameworks of {workspace.slug}: {', '.join(enabled) or 'none'}"

    def _set_export(self, workspace, opts) -> str:
        now = export_settings.set_export_settings(workspace, paper=opts["paper"], classification=opts["classification"],
                                                  organisation=opts["organisation"])
        return (f"Deliverables of {workspace.slug}: paper {export_settings.PAPERS[now['paper']]}, "
                f"classification {now['classification'] or '(none)'}, "
                f"organisation {now['organisation'] or workspace.name + ' (the workspace name)'}")

    def _set_research_default(self, workspace, opts) -> str:
        on = configuration.set_research_default(workspace, opts["value"] == "on")
        return f"New conversations in {workspace.slug} start with web research {'on' if on else 'off'}"

    def _create_token(self, opts) -> None:
        user = get_user_model().objects.filter(username=opts["username"]).first()
        if user is None or not user.is_active:
            raise CommandError(f"unknown or inactive user {opts['username']!r}")
        chosen = []
        for slug in opts["workspace"] or []:
            workspace = Workspace.objects.filter(slug=slug).first()
            if workspace is None:
                raise CommandError(f"unknown workspace {slug!r}")
            chosen.append(workspace)
        try:
            row, secret = tokens.create_token(user, opts["name"], days=opts["days"], read_only=opts["read_only"],
                                              workspaces=chosen)
        except tokens.TokenRefused as exc:
            raise CommandError(str(exc)) from None
        reach = ", ".join(w.slug for w in chosen) or "all of the user's workspaces"
        self.stderr.write(f"Token {row.name!r} for {user.username}: {'read-only, ' if row.read_only else ''}{reach}, "
                          f"until {row.expires_at.date().isoformat()}. It is shown once; only its hash is kept.")
        self.stdout.write(secret)

    @staticmethod
    def _last_change(workspace) -> int:
        return WorkspaceEvent.objects.filter(workspace=workspace).order_by("-seq").values_list("seq", flat=True).first() or 0

    def _say_logged(self, workspace, after: int = 0) -> None:
        """Say which change-log rows this command wrote, and as whom."""
        seqs = list(WorkspaceEvent.objects.filter(workspace=workspace, seq__gt=after).order_by("seq")
                    .values_list("seq", flat=True))
        if seqs:
            where = f"change {seqs[0]}" if len(seqs) == 1 else f"changes {seqs[0]} to {seqs[-1]}"
            self.stdout.write(f"Recorded in the change log of {workspace.slug} as {where}, "
                              "made by a command on the server (no user).")


def topology_argument(text: str):
    """set-topology's argument: 'default' (None), a JSON object, or a provider shorthand."""
    text = text.strip()
    if text.lower() == "default":
        return None
    if text.startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise CommandError(f"the topology is not valid JSON ({exc})") from None
    return parse_shorthand(text).as_json()


def calibration_bounds(opts: dict) -> dict:
    """The thresholds require-calibration was given, as fractions (percentages from 0 to 100)."""
    bounds = {}
    for option in CALIBRATION_OPTIONS:
        name = option.replace("-", "_")
        value = opts.get(name)
        if value is None:
            bounds[name] = None
            continue
        try:
            number = float(value.strip().removesuffix("%"))
        except ValueError:
            raise CommandError(f"--{option}: give a percentage from 0 to 100, not {value!r}") from None
        if not 0 <= number <= 100:
            raise CommandError(f"--{option}: give a percentage from 0 to 100, not {value!r}")
        bounds[name] = number / 100
    return bounds


def percent(rate: float) -> str:
    return f"{rate * 100:g}%"


def budget_limits(opts: dict) -> dict:
    """The limits set-budget was given: {limit: value, None for 'none'}."""
    limits = {}
    for option in BUDGET_OPTIONS:
        name = option.replace("-", "_")
        value = opts.get(name)
        if value is not None:
            limits[name] = None if value.strip().lower() == "none" else value
    return limits
