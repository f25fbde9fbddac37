"""A redo's start (docs/working-loop.md, "Redo a step"): the earlier run's brief and steps, read from
its record and handed to the pipeline as plain data (`pipeline.orchestrator.Redo`)."""
from __future__ import annotations

from pipeline import events as ev
from pipeline.orchestrator import CarriedStep, Redo
from beyond_site.runs.models import Run, RunEvent, Step


def redo_plan(run: Run) -> Redo | None:
    """What the pipeline needs to redo `run`'s step; None for a run that is no redo. Each carried
    step keeps who checked it in the earlier run (its release event says), so the new run's record
    of who checked its steps stays true."""
    if run.redo_of_id is None:
        return None
    earlier = Run.objects.only("pk", "brief").get(pk=run.redo_of_id)
    checked_by = {e.payload.step: e.payload.checked_by
                  for e in RunEvent.objects.filter(run_id=earlier.pk, type=ev.STEP_RELEASED).only("type", "data")}
    carried = {}
    for step in Step.objects.filter(run_id=earlier.pk).order_by("index"):
        released = step.status == Step.RELEASED
        carried[step.index] = CarriedStep(
            index=step.index, title=step.title, badge=step.badge if released else None,
            content=step.content if released else None, warnings=list(step.warnings or []) if released else [],
            checked_by=checked_by.get(step.index), unsourced=step.unsourced if released else None,
            sources=step.sources if released else None)
    return Redo(run=earlier.pk, step=run.redo_step, brief=earlier.brief, carried=carried,
                instruction=run.redo_instruction)
