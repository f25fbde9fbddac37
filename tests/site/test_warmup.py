"""A server process builds what it keeps as it starts (beyond_site/runtime/warmup.py)."""
from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.template import engines

from beyond_site.runtime import warmup
from pipeline.citations.catalogue_ids import catalogue_ids
from beyond_site.workspaces import frameworks

pytestmark = pytest.mark.django_db


def _django_loader():
    [loader] = engines["django"].engine.template_loaders  # the cached loader, around the others
    return loader


def test_it_indexes_every_pack():
    catalogue_ids.cache_clear()
    took = warmup.warm_up()
    assert set(took) == set(warmup.PARTS)
    packs = frameworks.available_packs()
    assert packs and all(pack in frameworks._indexes for pack in packs.values())
    assert catalogue_ids.cache_info().currsize >= len(packs)  # and the citation checks' readers


def test_it_compiles_the_projects_templates():
    _django_loader().reset()
    warmup.warm_up(["templates"])
    ours = Path(settings.BASE_DIR / "templates")
    drawn = set(_django_loader().get_template_cache)  # keyed by name
    expected = {p.relative_to(ours).as_posix() for p in ours.rglob("*.html")}
    assert expected and expected <= drawn
    assert not any(name.startswith("admin/") for name in drawn)  # only this project's, not every app's


def test_a_part_that_fails_is_logged_and_the_others_still_run(monkeypatch, caplog):
    def broken():
        raise RuntimeError("no such thing")

    monkeypatch.setitem(warmup.PARTS, "framework packs", broken)
    with caplog.at_level(logging.WARNING, logger="beyond.warmup"):
        took = warmup.warm_up()
    assert "framework packs" not in took and {"views", "templates", "pipeline"} <= set(took)
    assert "warming up framework packs failed" in caplog.text


def test_a_process_warms_up_settles_and_closes_its_connection_unless_switched_off(settings, monkeypatch):
    ran = []
    monkeypatch.setattr(warmup, "warm_up", lambda parts: ran.append(parts) or {"views": 0.1})
    monkeypatch.setattr(warmup, "settle", lambda: ran.append("settled"))
    monkeypatch.setattr(warmup.connections, "close_all", lambda: ran.append("closed"))
    settings.BEYOND_WARM_UP = False
    assert warmup.prepare_process() is None and ran == []
    settings.BEYOND_WARM_UP = True
    assert warmup.prepare_process(warmup.WORKER_PARTS) == {"views": 0.1}
    assert ran == [warmup.WORKER_PARTS, "settled", "closed"]


def test_daphne_warms_the_application_up_before_it_listens_and_starts_the_background_once_it_runs(tmp_path):
    # Warmed beside the first requests, a template engine a request made while the warm-up made
    # its own was the one kept, and what the warm-up compiled went unused. The background work
    # (runtime/process.py) starts on daphne's loop, with no request needed.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "beyond_site.settings", "BEYOND_LOG_LEVEL": "INFO",
           "BEYOND_WARM_UP": "True", "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    log = tmp_path / "daphne.log"
    with open(log, "wb") as out:
        server = subprocess.Popen([str(Path(sys.executable).parent / "daphne"), "-b", "127.0.0.1", "-p", str(port),
                                   "beyond_site.asgi:application"], cwd=settings.BASE_DIR, env=env,
                                  stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while "background work on this process's loop" not in log.read_text() and time.monotonic() < deadline:
            assert server.poll() is None, log.read_text()
            time.sleep(0.2)
    finally:
        server.terminate()
        server.wait(timeout=20)
    text = log.read_text()
    assert "Listening on TCP address" in text, text
    assert -1 < text.find("beyond.warmup: warmed up in") < text.find("Listening on TCP address"), text
    assert "templates" in text[text.find("warmed up in"):].splitlines()[0]
    assert "background work on this process's loop (embedded)" in text, text


def _passes_in_a_process_of_its_own(code: str) -> None:
    done = subprocess.run([sys.executable, "-c", code + "\nprint('ok')"], cwd=settings.BASE_DIR,
                          capture_output=True, text=True,
                          env={**os.environ, "DJANGO_SETTINGS_MODULE": "beyond_site.settings"}, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_a_process_that_only_imports_daphne_does_not_warm_up():
    # channels' live-server tests import daphne's server; their test database is not made yet.
    code = ("import gc, daphne.server\n"
            "from beyond_site.asgi import application\n"
            "from beyond_site.runtime.warmup import daphne_serves\n"
            "assert not daphne_serves() and gc.get_freeze_count() == 0")
    _passes_in_a_process_of_its_own(code)


def test_settling_freezes_what_exists_and_spaces_out_the_young_collections():
    # In a process of its own: freezing this one would keep every test's garbage for good.
    code = ("import gc, django; django.setup()\n"
            "from beyond_site.runtime.warmup import GC_THRESHOLDS, settle\n"
            "assert gc.get_freeze_count() == 0 and gc.get_threshold() != GC_THRESHOLDS\n"
            "frozen = settle()\n"
            "assert frozen == gc.get_freeze_count() > 10000, frozen\n"
            "assert gc.get_threshold() == GC_THRESHOLDS\n"
            "young = [[]]; young[0].append(young)  # a cycle made after: still collected\n"
            "del young\n"
            "assert gc.collect() >= 2 and gc.get_freeze_count() == frozen")
    _passes_in_a_process_of_its_own(code)
