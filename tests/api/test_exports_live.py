"""Exports off the request on a real server (daphne, its queue threads): a document over the size
bound is refused with the reason before any work, through the page and the API alike, while the
same run's Markdown still downloads (issue 49's review, finding 4)."""
from __future__ import annotations

import pytest

from tests.api.live import live_server
from tests.api.test_api_live import follow, start


@pytest.fixture(scope="module")
def small_bound(tmp_path_factory):
    with live_server(tmp_path_factory.mktemp("exports-live"), BEYOND_EXPORT_MAX_CHARS="2000") as server:
        yield server


def test_a_document_over_the_bound_is_refused_before_any_work_and_markdown_still_downloads(small_bound):
    run_id = start(small_bound)["id"]
    follow(small_bound, run_id)
    with small_bound.client() as api:
        for fmt in ("pdf", "docx", "xlsx"):
            refused = api.get(f"/runs/{run_id}/export", params={"format": fmt, "edition": "client"})
            assert refused.status_code == 422, (fmt, refused.text)
            assert refused.headers["content-type"] == "application/problem+json"
            assert "too large to write" in refused.json()["detail"] and "Markdown" in refused.json()["detail"]
        md = api.get(f"/runs/{run_id}/export", params={"format": "md", "edition": "client"})
    assert md.status_code == 200 and md.text.startswith("# ")
