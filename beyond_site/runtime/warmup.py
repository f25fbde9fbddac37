"""What a server process works out once and keeps, worked out as it starts rather than in its first
members' requests.

A process keeps a good deal that it builds on first use: the compiled templates, each framework pack with its index of title words
(workspaces/frameworks.py) and what the citation checks read of it (pipeline/citations), the
planner's JSON schema, the role prompts, the model providers' modules. Built lazily, all of it
fell on the first submissions after a start, and under a burst several request threads built the
same thing at once while the others waited for the interpreter (bench/README.md, "Throughput").
A web process served by daphne warms up as its application is loaded, before it listens
(beyond_site/asgi.py); a worker of the scaled mode before it takes its first job.

Warming is an optimisation only: a part that fails is logged and left to be built on first use,
where its error, if it has one, reaches the request that needs it.

Once warm, the process settles its memory for the garbage collector (`settle`): what exists by
then lives as long as the process, so it is frozen out of the collector's passes, and the young
generation is collected less often. A full pass over the 200,000 objects of a warm web process
held the interpreter 220 to 440 ms here, and at 100 submissions at once the collector took about
360 ms of the burst's first six seconds; settled, about 100 (bench/README.md, "Throughput").
"""
from __future__ import annotations

import gc
import importlib
import logging
import sys
import time
from pathlib import Path

from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connections
from django.template import engines
from django.urls import get_resolver

from pipeline import citations, prompts
from pipeline.schemas import brief_json_schema
from beyond_site.lib.markdown import MARKDOWN
from beyond_site.workspaces.frameworks import available_packs, pack_index

log = logging.getLogger("beyond.warmup")


def _urls() -> None:
    get_resolver().reverse_dict  # noqa: B018 (imports every view module)


def _framework_packs() -> None:
    packs = available_packs()
    for pack in packs.values():
        pack_index(pack)
    citations.prepare(packs)


def _templates() -> None:
    for engine in engines.all():
        for directory in engine.dirs:  # this project's templates (not every installed app's)
            root = Path(directory)
            for path in sorted(root.rglob("*.html")):
                engine.get_template(path.relative_to(root).as_posix())


def _pipeline() -> None:
    brief_json_schema()
    for path in prompts.PROMPT_DIR.glob("*.md"):
        prompts.load(path.stem)
    MARKDOWN.render("A *warm* start:\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")


PROVIDER_MODULES = ("pipeline.providers.registry", "pipeline.providers.offline", "pipeline.providers.scripted")


def _providers() -> None:
    # Imported when a run first needs them (the offline engine alone is some twenty modules), and
    # the channel layer the runs' doorbells ring through.
    for module in PROVIDER_MODULES:
        importlib.import_module(module)
    get_channel_layer()


PARTS = {"views": _urls, "framework packs": _framework_packs,
         "templates": _templates, "pipeline": _pipeline, "providers": _providers}
#: What a worker of the scaled mode uses: it runs runs, and draws no page.
WORKER_PARTS = ("framework packs", "pipeline", "providers")
#: The collector's thresholds once settled (Python's are 700, 10, 10): a collection of the young
#: generation every 20,000 new objects instead of 700 (it then took up to about 25 ms here), and so
#: fewer objects carried into the older generations' passes.
GC_THRESHOLDS = (20_000, 10, 10)


def warm_up(parts=tuple(PARTS)) -> dict[str, float]:
    """Build what the process keeps (`parts`, by name); returns each part's time in seconds (a part
    that failed is left out)."""
    took: dict[str, float] = {}
    for name in parts:
        began = time.perf_counter()
        try:
            PARTS[name]()
        except Exception:
            log.warning("warming up %s failed: left to its first use", name, exc_info=True)
            continue
        took[name] = time.perf_counter() - began
    log.info("warmed up in %.0f ms (%s)", 1000 * sum(took.values()),
             ", ".join(f"{name} {1000 * s:.0f}" for name, s in took.items()))
    return took


def settle() -> int:
    """Collect, then freeze what is left out of the garbage collector's passes (it lives as long
    as the process), and collect the young generation less often (GC_THRESHOLDS). Returns how
    many objects were frozen."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    return gc.get_freeze_count()


def daphne_serves() -> bool:
    """Whether this process is daphne's command line, serving the application; not merely a
    process that imported daphne (channels' live-server tests do, and warming up there would open
    a connection to the database before the tests have made theirs)."""
    program = Path(sys.argv[0])
    return program.name == "daphne" or program.parts[-2:] == ("daphne", "__main__.py")


def prepare_process(parts=tuple(PARTS)) -> dict[str, float] | None:
    """Warm up (`parts`), settle, and close the connection the warm-up opened; None when
    BEYOND_WARM_UP is off. Called before the process serves anything: built while requests
    arrive, a thing first touched by two threads at once could be built twice, and the copy
    warmed be the one thrown away (Django makes its template engines so, on first use)."""
    if not settings.BEYOND_WARM_UP:
        return None
    try:
        took = warm_up(parts)
        settle()
    finally:
        connections.close_all()  # this thread's: the process's work uses its own threads' connections
    return took
