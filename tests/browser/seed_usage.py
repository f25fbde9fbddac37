"""Seed the usage browser test's file database (run as a script with DATABASE_URL set): an auditor
and a member of workspace `usage`, and runs with model calls over two months, some of which did
not report their usage or cost. Prints nothing."""
from __future__ import annotations

import os
import sys
from datetime import timedelta
from unittest import mock

import django

sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "beyond_site.settings")
django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.utils import timezone  # noqa: E402

from beyond_site.runs.models import ModelCall, Run, Step  # noqa: E402
from beyond_site.workspaces.models import Membership, Workspace  # noqa: E402

PASSWORD = "correct horse battery staple"
LONG_MODEL = "a-provider/an-unusually-long-model-name-that-would-push-a-page-sideways-v2.5"


def main() -> None:
    User = get_user_model()
    workspace = Workspace.objects.create(slug="usage", name="Northwind")
    for name, role in (("audrey", Membership.AUDITOR), ("mo", Membership.MEMBER)):
        user = User.objects.create_user(name, password=PASSWORD)
        Membership.objects.create(user=user, workspace=workspace, role=role)
    now = timezone.now()
    for days_ago, status, badge in ((45, Run.COMPLETED, "passed"), (5, Run.HALTED, "warning")):
        when = now - timedelta(days=days_ago)
        with mock.patch("django.utils.timezone.now", return_value=when):
            run = Run.objects.create(workspace=workspace, task="Draft a note", topology={}, status=status)
            Step.objects.create(run=run, index=0, title="One", content_spec="", status=Step.RELEASED, badge=badge)
            for i, role in enumerate(("planner", "executor", "verifier", "summarizer")):
                reported = i != 3
                ModelCall.objects.create(
                    run=run, role=role, provider="scripted", model=LONG_MODEL if i % 2 else "small-model",
                    input_tokens=1000 * (i + 1) if reported else None, output_tokens=200 if reported else None,
                    reasoning_tokens=50 if reported else None, cache_read_tokens=300 if reported else None,
                    cache_write_tokens=0 if reported else None, cost=0.01 * (i + 1) if reported else None,
                    cost_source="reported" if reported else None)


if __name__ == "__main__":
    main()
