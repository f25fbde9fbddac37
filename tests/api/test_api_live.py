"""The API end to end on a real server (daphne, a file database, the offline engine): a token
starts a run, follows its events over SSE to the end, resumes after a disconnect, reads the trace,
downloads the deliverables; the refusals as a real client meets them."""
from __future__ import annotations

import http.client
import io
import json
import subprocess
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from docx import Document as Docx
from openpyxl import load_workbook
from pypdf import PdfReader

from pipeline.events import FINAL_TYPES
from tests.api.live import live_server
from tests.servers import PYTHON, ROOT

TASK = "Draft our ISO/IEC 27001:2022 asset-register overview for the finance team"


MB = 1024 * 1024


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    limits = {"BEYOND_MAX_FILE_BYTES": str(1 * MB), "BEYOND_MAX_REQUEST_BYTES": str(3 * MB)}
    with live_server(tmp_path_factory.mktemp("api-live"), **limits) as server:
        yield server


def read_sse(response, stop_after: int | None = None) -> tuple[list[dict], list[str]]:
    """The stream's events as {id, event, data} (data parsed), and its comments; stops after
    `stop_after` events, else at the stream's end."""
    events, comments, fields = [], [], {}
    for line in response.iter_lines():
        if line.startswith(":"):
            comments.append(line[1:].strip())
        elif line == "":
            if fields:
                events.append({"id": int(fields["id"]), "event": fields["event"], "data": json.loads(fields["data"])})
                fields = {}
                if stop_after is not None and len(events) == stop_after:
                    break
        else:
            name, _, value = line.partition(":")
            fields[name] = value[1:] if value.startswith(" ") else value
    return events, comments


def start(live, task: str = TASK, who: str = "member", **body) -> dict:
    with live.client(who) as api:
        response = api.post("/workspaces/acme/runs", json={"task": task, **body})
    assert response.status_code == 202, response.text
    return response.json()


def follow(live, run_id: int, who: str = "member", after: int | None = None, stop_after: int | None = None):
    headers = {"Last-Event-ID": str(after)} if after is not None else {}
    with live.client(who) as api, api.stream("GET", f"/runs/{run_id}/events", headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        return read_sse(response, stop_after)


def test_a_token_starts_a_run_and_its_stream_delivers_every_event_in_order_then_ends(live):
    started = start(live)
    assert started["created"] is True and started["status"] in ("queued", "running", "completed")
    events, comments = follow(live, started["id"])
    assert [e["id"] for e in events] == list(range(1, len(events) + 1))  # every one, in order, none twice
    assert events[0]["event"] == "run_requested" and events[-1]["event"] in FINAL_TYPES
    assert sum(e["event"] in FINAL_TYPES for e in events) == 1
    assert any(e["event"] == "step_released" for e in events)
    with live.client() as api:
        trace = api.get(f"/runs/{started['id']}").json()
    assert [(e["seq"], e["type"]) for e in trace["events"]] == [(e["id"], e["event"]) for e in events]
    assert [e["data"] for e in events] == trace["events"]  # each event's data is the trace's entry
    assert comments[0].startswith("stream of run")


def test_streams_following_one_run_at_once_each_get_every_event(live):
    """Streams at the same point of a run share their reads (api/events.py): none gets less."""
    run_id = start(live)["id"]
    with ThreadPoolExecutor(6) as pool:
        seen = list(pool.map(lambda who: follow(live, run_id, who)[0], ["member", "admin", "auditor"] * 2))
    assert all(events == seen[0] for events in seen) and seen[0][-1]["event"] in FINAL_TYPES
    assert [e["id"] for e in seen[0]] == list(range(1, len(seen[0]) + 1))


def test_a_disconnect_and_a_resume_lose_and_repeat_nothing(live):
    run_id = start(live)["id"]
    first, _ = follow(live, run_id, stop_after=4)  # the client goes away after four events
    rest, _ = follow(live, run_id, after=first[-1]["id"])
    whole, _ = follow(live, run_id)
    assert [e["id"] for e in first + rest] == [e["id"] for e in whole]
    assert first + rest == whole
    after_the_end, _ = follow(live, run_id, after=whole[-1]["id"])
    assert after_the_end == []  # a resume after the final event is an empty stream that ends


def test_the_trace_from_the_api_equals_beyond_runs(live):
    done = subprocess.run([PYTHON, "manage.py", "beyond_run", "--workspace", "acme", "--task", TASK, "--json"],
                          cwd=ROOT, env=live.env, capture_output=True, text=True, check=True)
    printed = json.loads(done.stdout)
    with live.client("auditor") as api:
        assert api.get(f"/runs/{printed['run']['id']}").json() == printed
        exported = api.get(f"/runs/{printed['run']['id']}/export", params={"format": "json"})
    assert exported.json() == printed


def test_the_same_idempotency_key_answers_the_run_it_started(live):
    with live.client() as api:
        first = api.post("/workspaces/acme/runs", json={"task": TASK}, headers={"Idempotency-Key": "grc-7781"}).json()
        again = api.post("/workspaces/acme/runs", json={"task": TASK}, headers={"Idempotency-Key": "grc-7781"}).json()
    with live.client("admin") as api:
        other = api.post("/workspaces/acme/runs", json={"task": TASK}, headers={"Idempotency-Key": "grc-7781"}).json()
    assert again["id"] == first["id"] and again["created"] is False
    assert other["id"] != first["id"] and other["created"] is True  # another person's key is their own


def test_the_deliverables_download_in_every_format_and_edition(live):
    run_id = start(live)["id"]
    follow(live, run_id)
    with live.client() as api:
        trace = api.get(f"/runs/{run_id}").json()
        title = trace["brief"]["title"]
        pdf = api.get(f"/runs/{run_id}/export", params={"format": "pdf", "edition": "client"})
        docx = api.get(f"/runs/{run_id}/export", params={"format": "docx", "edition": "client"})
        xlsx = api.get(f"/runs/{run_id}/export", params={"format": "xlsx", "edition": "audit"})
        md = api.get(f"/runs/{run_id}/export", params={"format": "md", "edition": "client",
                                                       "classification": "Confidential"})
    assert pdf.headers["content-type"] == "application/pdf" and pdf.headers["content-disposition"].endswith('.pdf"')
    assert title in " ".join(PdfReader(io.BytesIO(pdf.content)).pages[0].extract_text().split())
    assert title in "\n".join(p.text for p in Docx(io.BytesIO(docx.content)).paragraphs)
    assert load_workbook(io.BytesIO(xlsx.content)).sheetnames
    assert md.text.startswith("# ") and "Confidential" in md.text
    assert "offline" not in md.text.lower()  # the client edition names no engine


def test_a_follow_up_joins_the_conversation_and_a_step_is_redone(live):
    first = start(live)
    follow(live, first["id"])
    follow_up = start(live, "Add a column for each asset's classification", conversation=first["conversation"])
    assert follow_up["conversation"] == first["conversation"]
    with live.client() as api:
        redo = api.post(f"/runs/{first['id']}/redo", json={"step": 1, "instruction": "Shorter, please"})
    assert redo.status_code == 202, redo.text
    events, _ = follow(live, redo.json()["id"])
    assert events[-1]["event"] in FINAL_TYPES


def test_files_are_uploaded_read_listed_and_removed(live):
    text = "Asset register policy\n\nEvery laptop is owned by the IT team. " * 2000  # over the anonymous limit
    with live.client() as api:
        uploaded = api.post("/workspaces/acme/files", files={"file": ("assets.txt", text.encode(), "text/plain")})
        assert uploaded.status_code == 201, uploaded.text
        file_id = uploaded.json()["id"]
        for _ in range(100):
            read = api.get(f"/workspaces/acme/files/{file_id}").json()
            if read["status"] != "reading":
                break
        assert read["status"] == "ready" and "owned by the IT team" in read["text"]
        assert file_id in [f["id"] for f in api.get("/workspaces/acme/files").json()]
        assert api.delete(f"/workspaces/acme/files/{file_id}").status_code == 204
        assert file_id not in [f["id"] for f in api.get("/workspaces/acme/files").json()]


def declared(live, path: str, length: int, who: str | None, send: bool = False) -> tuple[int, str, dict]:
    """Send the headers of a POST declaring `length` bytes (and, if `send`, the bytes): a request
    refused on its declared length is answered before any byte of its body."""
    connection = http.client.HTTPConnection(live.base.removeprefix("http://"), timeout=30)
    connection.putrequest("POST", path)
    connection.putheader("Content-Length", str(length))
    connection.putheader("Content-Type", "application/json")
    if who:
        connection.putheader("Authorization", f"Bearer {live.tokens[who]}")
    connection.endheaders(b'"' + b"x" * (length - 2) + b'"' if send else None)
    response = connection.getresponse()
    try:
        return response.status, response.getheader("Content-Type"), json.loads(response.read())
    finally:
        connection.close()


def test_a_body_over_the_limit_is_refused_as_a_problem_before_it_is_read(live):
    status, kind, body = declared(live, "/api/v1/workspaces/acme/memories", 4 * MB, "member")
    assert (status, kind) == (413, "application/problem+json") and "at most 3 MB" in body["detail"]
    status, kind, body = declared(live, "/api/v1/workspaces/acme/memories", 100_000, None)
    assert (status, kind) == (413, "application/problem+json") and "without a login or a token" in body["detail"]
    # A token is checked by the application, which the server starts once the body is in.
    status, kind, body = declared(live, "/api/v1/workspaces/acme/memories", 100_000, "revoked", send=True)
    assert (status, kind) == (413, "application/problem+json")  # a dead token is no login: the anonymous limit


@pytest.mark.parametrize("who", ["expired", "revoked", "deactivated", None])
def test_a_dead_token_is_401(live, who):
    with live.client(who) as api:
        response = api.get("/workspaces")
    assert response.status_code == 401 and response.headers["content-type"] == "application/problem+json"


def test_roles_and_reach_hold_on_the_real_server(live):
    run_id = start(live)["id"]
    with live.client("auditor") as api:
        assert api.get(f"/runs/{run_id}").status_code == 200
        assert api.post("/workspaces/acme/runs", json={"task": TASK}).status_code == 403
    with live.client("stranger") as api:
        assert api.get(f"/runs/{run_id}").status_code == 404
        assert api.get(f"/runs/{run_id}/events").status_code == 404
    with live.client("read_only") as api:
        assert api.get(f"/runs/{run_id}").status_code == 200
        assert api.post("/workspaces/acme/memories", json={"text": "A fact"}).status_code == 403
    with live.client("globex_only") as api:
        assert api.get(f"/runs/{run_id}").status_code == 404


def test_the_openapi_document_describes_every_operation(live):
    document = httpx.get(f"{live.base}/api/v1/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    operations = {op["operationId"]: (method, path) for path, item in document["paths"].items()
                  for method, op in item.items()}
    for name in ("list_workspaces", "start_run", "run_trace", "run_events", "stop_run", "redo_step", "regenerate_run",
                 "export_run", "list_files", "add_file", "file_text", "remove_file", "list_memories", "add_memory",
                 "remove_memory", "run_history", "change_log", "usage", "verify_record", "list_conversations"):
        assert name in operations
    for path, item in document["paths"].items():
        for method, op in item.items():
            assert "401" in op["responses"] and "application/problem+json" in op["responses"]["401"]["content"]
    assert document["components"]["securitySchemes"]["Token"]["scheme"] == "bearer"


def test_the_worked_example_in_the_docs_runs_as_written(live, tmp_path):
    text = (ROOT / "docs" / "api.md").read_text()
    example = text.split("## A worked example", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    env = {**live.env, "BEYOND_URL": live.base, "BEYOND_TOKEN": live.tokens["member"], "BEYOND_WORKSPACE": "acme"}
    done = subprocess.run([PYTHON, "-c", example], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "ended: run_completed" in done.stdout and "step 1: " in done.stdout
    saved = [p for p in tmp_path.iterdir() if p.suffix == ".docx"]
    assert len(saved) == 1 and saved[0].name in done.stdout
    assert Docx(saved[0]).paragraphs  # a Word document
