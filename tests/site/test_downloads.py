"""Every download names its file through one helper (lib/downloads.py), quoted by Django itself."""
from __future__ import annotations

from beyond_site.lib.downloads import attachment


def test_an_ascii_name_is_quoted_plainly():
    response = attachment(b"{}", "application/json", "beyond-run-7-access-policy.json")
    assert response["Content-Disposition"] == 'attachment; filename="beyond-run-7-access-policy.json"'
    assert response.content == b"{}" and response["Content-Type"] == "application/json"


def test_a_name_with_quotes_or_accents_cannot_break_the_header():
    response = attachment("x", "text/csv; charset=utf-8", 'Politique d\'accès "v2".csv')
    header = response["Content-Disposition"]
    assert header.startswith("attachment; filename*=utf-8''") and '"' not in header.split("''", 1)[1]
    assert "%C3%A8" in header                                     # è, percent-encoded
