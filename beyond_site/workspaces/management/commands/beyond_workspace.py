"""Scripted workspace administration (docs/interfaces.md); idempotent where that makes sense."""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from beyond_site.workspaces import services
from beyond_site.workspaces.models import Workspace


#: set-budget's options (dashes for the limits' underscores) and what each limits.
BUDGET_OPTIONS = {
    "max-tokens-per-run": "tokens a run may use; it halts with a budget: reason when it reaches them",
    "max-cost-per-run": "USD a run may spend (counted from the costs endpoints report)",
    "max-runs-per-user-per-day": "runs a member may start in any 24 hours",
    "max-runs-in-flight-per-user": "runs a member may have queued or running at once",
    "max-runs-in-flight-per-workspace": "runs the workspace may have queued or running at once",
}


class Command(BaseCommand):
    help = "Create workspaces and add memories, files and members."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="create a workspace (no-op if it exists)")
        create.add_argument("slug")
        create.add_argument("--name")
        memory = sub.add_parser("add-memory", help="add a short workspace fact")
        memory.add_argument("slug")
        memory.add_argument("text")
        file = sub.add_parser("add-file", help="add a workspace file (text, Markdown, CSV, PDF, DOCX)")
        file.add_argument("slug")
        file.add_argument("path")
        member = sub.add_parser("add-member", help="add a user to a workspace, or change their role")
        member.add_argument("slug")
        member.add_argument("username")
        member.add_argument("role", choices=["admin", "member", "auditor"])
        budget = sub.add_parser("set-budget", help="set the workspace's limits on runs and spending "
                                                   "(a limit not named stays as it is; 'none' removes one)")
        budget.add_argument("slug")
        for option, what in BUDGET_OPTIONS.items():
            budget.add_argument(f"--{option}", metavar="N|none", help=what)

    def handle(self, *args, **opts):
        action = opts["action"]
        if action == "create":
            workspace, created = services.create_workspace(opts["slug"], opts["name"])
            self.stdout.write(f"{'Created' if created else 'Exists'}: workspace {workspace.slug} ({workspace.name})")
            return
        workspace = Workspace.objects.filter(slug=opts["slug"]).first()
        if workspace is None:
            raise CommandError(f"unknown workspace {opts['slug']!r}")
        try:
            if action == "add-memory":
                memory = services.add_memory(workspace, opts["text"])
                self.stdout.write(f"Memory {memory.pk} in {workspace.slug}")
            elif action == "add-file":
                path = Path(opts["path"])
                if not path.is_file():
                    raise CommandError(f"no such file: {path}")
                document, created = services.add_document(workspace, path.name, path.read_bytes())
                verb = "Added" if created else "Already there"
                self.stdout.write(f"{verb}: {document.name} ({document.kind}, {document.size} bytes, "
                                  f"{len(document.text)} characters of text)")
            elif action == "set-budget":
                budget = services.set_budget(workspace, budget_limits(opts))
                shown = ", ".join(f"{name.replace('_', '-')}={'none' if value is None else value}"
                                  for name, value in budget.limits().items())
                self.stdout.write(f"Budget of {workspace.slug}: {shown}")
            elif action == "add-member":
                # Scripted set-up adds people before they ever logged in: a missing user is created
                # with no usable password, to be set by them or an admin.
                membership = services.add_member(workspace, opts["username"], opts["role"], create_user=True)
                self.stdout.write(f"{membership.user.username} is {membership.role} of {workspace.slug}")
                if not membership.user.has_usable_password():
                    self.stdout.write(f"{membership.user.username} has no password yet: "
                                      f"manage.py changepassword {membership.user.username}")
        except (ValueError, services.DocumentRefused) as exc:
            raise CommandError(str(exc)) from None


def budget_limits(opts: dict) -> dict:
    """The limits set-budget was given: {limit: value, None for 'none'}."""
    limits = {}
    for option in BUDGET_OPTIONS:
        name = option.replace("-", "_")
        value = opts.get(name)
        if value is not None:
            limits[name] = None if value.strip().lower() == "none" else value
    return limits
