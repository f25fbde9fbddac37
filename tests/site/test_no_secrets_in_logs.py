"""No secret in a log line (beyond_site/lib/logs.py, runtime/daphne_access.py): the tokens of
invitation and password reset links, and API tokens, are replaced by markers in Django's request log
and in daphne's access log, on a real server."""
from __future__ import annotations

import logging

import httpx

from beyond_site.lib.logs import NoSecretsInPaths, without_secrets
from tests.servers import Daphne, migrated_env

INVITATION = "k7Qp2xLm9ZrT4vNw8bYc"
RESET = ("MQ", "cb3k2l-9f8e7d6c5b4a3210fedcba98")
API_TOKEN = "byd_s8iDQLCu_84kwjAeT42SLPbSDzh48JCX"


def test_the_servers_logs_hold_no_token(tmp_path):
    env = {**migrated_env(tmp_path), "PYTHONUNBUFFERED": "1"}
    daphne = Daphne(env, tmp_path / "daphne.log").start()
    try:
        httpx.get(f"{daphne.base}/invitations/{INVITATION}/")
        httpx.get(f"{daphne.base}/accounts/reset/{RESET[0]}/{RESET[1]}/")
        httpx.get(f"{daphne.base}/no-such-page/?token={API_TOKEN}")  # a 404: Django logs it with its path
    finally:
        daphne.stop()
    log = (tmp_path / "daphne.log").read_text()
    assert "/invitations/[token]/" in log and "/no-such-page/" in log  # the requests were logged
    for secret in (INVITATION, RESET[1], API_TOKEN):
        assert secret not in log


def test_the_filter_cleans_a_records_arguments_too():
    record = logging.LogRecord("django.request", logging.WARNING, __file__, 1, "Not Found: %s", (
        f"/invitations/{INVITATION}/",), None)
    NoSecretsInPaths().filter(record)
    assert record.getMessage() == "Not Found: /invitations/[token]/"
    assert without_secrets("GET /api/v1/runs/3?t=" + API_TOKEN) == "GET /api/v1/runs/3?t=byd_[token]"
    assert without_secrets("GET /accounts/reset/done/") == "GET /accounts/reset/done/"
