"""Print what the browser tests' database holds of one run, as JSON (run as a script with
DATABASE_URL set): its status, steps, model calls (with the exact messages each was given), and
when a stop was asked for."""
from __future__ import annotations

import json
import os
import sys

import django

sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "beyond_site.settings")
django.setup()

from beyond_site.runs.contexts import context_messages  # noqa: E402
from beyond_site.runs.models import Run  # noqa: E402


def main(run_id: int) -> None:
    run = Run.objects.get(pk=run_id)
    print(json.dumps({
        "status": run.status,
        "conversation": run.conversation_id,
        "retry_of": run.retry_of_id,
        "redo_of": run.redo_of_id, "redo_step": run.redo_step, "regenerates": run.regenerates_id,
        "edited_from": run.edited_from_id, "task": run.task,
        "stop_requested_at": run.stop_requested_at.isoformat() if run.stop_requested_at else None,
        "steps": [{"index": s.index, "status": s.status, "title": s.title, "content": s.content,
                   "badge": s.badge, "carried_over": s.carried_over}
                  for s in run.steps.order_by("index")],
        "calls": [{"role": c.role, "step": c.step_index, "error": c.error, "created_at": c.created_at.isoformat(),
                   "given": "\n".join(m["content"] for m in context_messages(c.context)) if c.context_id else ""}
                  for c in run.model_calls.order_by("id")],
    }))


if __name__ == "__main__":
    main(int(sys.argv[1]))
