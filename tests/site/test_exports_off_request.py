"""Word, PDF and Excel exports are written off the request (exports/jobs.py; issue 49's review,
finding 4): each file once for the exact document, refused with the reason when the document is
too large, given up with the reason when it takes too long, and a request that asks while it is
being written is told so (202) instead of holding its slot."""
from __future__ import annotations

import asyncio
import contextlib
import threading
import time

import pytest
from django.urls import reverse

from beyond_site.exports.formats import FORMATS
from beyond_site.exports.models import ExportFile
from beyond_site.runs import jobs
from beyond_site.runtime.embedded import QueueThreads
from beyond_site.workspaces.conversations import rename_document
from tests.site.test_export_tables import run_with

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def counted(monkeypatch):
    """FORMATS' writers, counting what they write (and slowed down by `counted.delay`)."""
    calls = []

    class Counter:
        delay = 0.0
        release = None

    def wrap(ext):
        original = FORMATS[ext]

        def render(run, edition="audit", options=None):
            calls.append(ext)
            if Counter.release is not None:
                Counter.release.wait(10)
            time.sleep(Counter.delay)
            return original.render(run, edition, *(() if options is None else (options,)))
        monkeypatch.setitem(FORMATS, ext, original.__class__(original.content_type, render, original.label))

    for ext in ("pdf", "docx", "xlsx"):
        wrap(ext)
    Counter.calls = calls
    return Counter


@contextlib.contextmanager
def serving():
    """This process executes what it defers, on a loop and queue threads of its own, as the embedded
    server does (started once the test's run is recorded, so that no runner takes it up)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    jobs.serve_here(loop, QueueThreads().run_sync)
    try:
        yield
    finally:
        jobs.serve_here(None)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)


def get(client, run, ext, **params):
    return client.get(reverse(f"exports:{ext}", args=[run.workspace.slug, run.pk]), {"edition": "audit", **params})


def test_a_file_is_written_once_for_its_document_and_anew_when_the_document_changes(alice, client, counted):
    run = run_with(alice, 3, 4)
    client.force_login(alice)
    first, again = get(client, run, "pdf"), get(client, run, "pdf")
    assert first.status_code == again.status_code == 200 and first.content == again.content
    assert counted.calls == ["pdf"]  # the second was the kept file
    assert get(client, run, "pdf", classification="Restricted").status_code == 200  # other options: another file
    rename_document(run.conversation, "The renamed register", alice)
    renamed = get(client, run, "pdf")
    assert renamed.status_code == 200 and counted.calls == ["pdf", "pdf", "pdf"]
    assert ExportFile.objects.filter(run=run, ext="pdf").count() == 2  # the renamed one and the Restricted one


def test_a_document_too_large_is_refused_with_the_reason_before_any_work(alice, client, counted, settings):
    settings.BEYOND_EXPORT_MAX_CHARS = 500
    run = run_with(alice, 3, 40)
    client.force_login(alice)
    refused = get(client, run, "pdf")
    page = refused.content.decode()
    assert refused.status_code == 422 and "too large to write as PDF" in page and "export it as Markdown" in page
    assert counted.calls == [] and not ExportFile.objects.exists()
    assert get(client, run, "md").status_code == 200  # Markdown is written in the request, whatever its size


def test_a_request_is_told_the_file_is_being_prepared_and_gets_it_once_written(alice, client, counted, settings):
    settings.BEYOND_EXPORT_WAIT_S = 0.2
    counted.release = threading.Event()  # the writer waits until the test lets it go
    run = run_with(alice, 3, 4)
    client.force_login(alice)
    with serving():
        answer = _prepared_then_written(client, run, counted)
    assert answer.status_code == 200 and answer["Content-Disposition"].endswith('.docx"')
    assert counted.calls == ["docx"]  # written once, on the queue's thread
    assert ExportFile.objects.get().status == ExportFile.Status.READY


def _prepared_then_written(client, run, counted):
    preparing = get(client, run, "docx")
    assert preparing.status_code == 202 and preparing["Retry-After"] == "1"
    assert "data-export-preparing" in preparing.content.decode() and 'http-equiv="refresh"' in preparing.content.decode()
    assert get(client, run, "docx").status_code == 202  # asked again meanwhile: the same file, still coming
    counted.release.set()
    deadline = time.monotonic() + 20
    while (answer := get(client, run, "docx")).status_code == 202 and time.monotonic() < deadline:
        time.sleep(0.1)
    return answer


def test_a_file_that_takes_too_long_is_given_up_with_the_reason(alice, client, counted, settings):
    settings.BEYOND_EXPORT_WAIT_S = 3
    settings.BEYOND_EXPORT_TIMEOUT_S = 1
    counted.release = threading.Event()
    run = run_with(alice, 3, 4)
    client.force_login(alice)
    with serving():
        try:
            failed = get(client, run, "xlsx")
            assert failed.status_code == 422 and "took longer than 1 s" in failed.content.decode()
        finally:
            counted.release.set()
        time.sleep(0.5)  # the writer finishing late keeps nothing: the file stays given up
    assert ExportFile.objects.get().status == ExportFile.Status.FAILED


def test_the_api_answers_202_while_the_file_is_written_then_the_file(alice, counted, settings):
    from tests.api.conftest import api_client, token_for

    settings.BEYOND_EXPORT_WAIT_S = 0.2
    counted.release = threading.Event()
    run = run_with(alice, 3, 4)
    api = api_client(token_for(alice))
    url = f"/api/v1/runs/{run.pk}/export"
    with serving():
        preparing = api.get(url, {"format": "pdf"})
        assert preparing.status_code == 202 and preparing["Retry-After"] == "1"
        assert preparing.json()["status"] == "preparing"
        counted.release.set()
        deadline = time.monotonic() + 20
        while (answer := api.get(url, {"format": "pdf"})).status_code == 202 and time.monotonic() < deadline:
            time.sleep(0.1)
    assert answer.status_code == 200 and answer["Content-Type"] == "application/pdf" and answer.content[:5] == b"%PDF-"
