"""Create the demo workspace and its login, idempotently: running it twice changes nothing.

The login is user `demo`, password from BEYOND_DEMO_PASSWORD or the documented default below. The
address it prints is the one the server listens on: --host (default 127.0.0.1) and --port (default
PORT from the environment, else 8000); `make run PORT=8080` passes both.
"""
from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from beyond_site.workspaces import configuration
from beyond_site.workspaces import knowledge
from beyond_site.workspaces import members
from beyond_site.workspaces.models import Membership

SLUG = "demo"
NAME = "Demo: Northwind Clinics"
USERNAME = "demo"
DEFAULT_PASSWORD = "demo-beyond-2026"  # a demo login on a local machine; set BEYOND_DEMO_PASSWORD elsewhere
FRAMEWORKS = ["iso27001-2022", "gdpr"]
POLICY = Path(__file__).resolve().parents[2] / "demo" / "northwind-access-control-policy.md"
MEMORIES = [
    "Northwind Clinics is a group of three outpatient clinics (Lyon, Grenoble, Annecy) with 140 staff, "
    "owned by Northwind Santé SAS; it processes health data of about 60,000 patients a year.",
    "ISMS scope: the clinical and administrative information systems of the three clinics and the head office "
    "in Lyon; the hosted MediFlow patient record is in scope as a supplier service. Certification target: "
    "ISO/IEC 27001:2022 by Q4 2026.",
    "Roles: Claire Martin is the Information Security Manager; Dr Hugo Bernard is the Data Protection Officer; "
    "Samir Haddad is Head of IT Operations; the Information Security Committee meets monthly.",
    "Key systems: MediFlow (electronic patient record, hosted by MediFlow SA in France), Cliniq (online booking), "
    "Microsoft 365 (email and files), PayServe (payroll, outsourced).",
    "Decision (2026-02): patient data stays in EU data centres; any new supplier handling health data needs a "
    "DPIA and a data processing agreement before go-live.",
]


class Command(BaseCommand):
    help = "Create (idempotently) the demo workspace, its memories, a policy document and a login."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1", help="the address the server listens on")
        env = settings.BEYOND_ENVIRONMENT
        parser.add_argument("--port", type=int, default=int(env.get("PORT") or 8000),
                            help="the port the server listens on (default: $PORT or 8000)")

    def handle(self, *args, **opts):
        env = settings.BEYOND_ENVIRONMENT
        password = env.get("BEYOND_DEMO_PASSWORD") or DEFAULT_PASSWORD
        with transaction.atomic():
            workspace, created = configuration.create_workspace(SLUG, NAME)
            if created:
                # Only on creation: an admin who later narrows or widens the list keeps their choice.
                configuration.set_enabled_frameworks(workspace, FRAMEWORKS)
            user = self._login(password)
            if not Membership.objects.filter(user=user, workspace=workspace, role=Membership.ADMIN).exists():
                members.add_member(workspace, USERNAME, Membership.ADMIN)
            for text in MEMORIES:
                knowledge.add_memory(workspace, text, user=user)
        # Outside the transaction above: extraction may run a subprocess, and a refusal must not undo the rest.
        knowledge.add_document(workspace, POLICY.name, POLICY.read_bytes(), user=user)
        shown = "the value of BEYOND_DEMO_PASSWORD" if env.get("BEYOND_DEMO_PASSWORD") else password
        if not user.check_password(password):
            shown = f"the one set for it (changed since; reset with `manage.py changepassword {USERNAME}`)"
        self.stdout.write(
            f"{'Created' if created else 'Ready'}: workspace {workspace.slug} ({workspace.name}).\n"
            f"Log in at {login_url(opts['host'], opts['port'])} with username {USERNAME!r} and password {shown}.")

    def _login(self, password: str):
        User = get_user_model()
        user, created = User.objects.get_or_create(username=USERNAME)
        if created or not user.has_usable_password():
            # Only a new login gets the default: a password someone changed is theirs to keep,
            # and re-running the demo must not reopen an account with a published password.
            user.set_password(password)
            user.save(update_fields=["password"])
        return user


def login_url(host: str, port: int) -> str:
    """The address to open: a server listening on every interface is reached on this machine."""
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}/"
