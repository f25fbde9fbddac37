"""Recorded instants in words: a research page's fetch time reads "3 Dec 2026, 07:01 UTC" in the chat's
Sources panel, the audit edition and the audit pages (it once read "2026-12-0307:01")."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from django.template import Template, Context
from beyond_site.lib.instants import instant_words, parse_instant


@pytest.mark.parametrize("value,words", [
    ("2026-12-03T07:01:22.123456+00:00", "3 Dec 2026, 07:01 UTC"),
    ("2026-12-03T08:01:22+01:00", "3 Dec 2026, 07:01 UTC"),  # another zone: said in UTC
    ("2026-01-30T23:59:59.999999+00:00", "30 Jan 2026, 23:59 UTC"),
    ("2026-12-03T07:01:22", "2026-12-03T07:01:22"),  # no zone: not guessed at, shown as recorded
    ("yesterday", "yesterday"),
    ("", ""),
    (None, ""),
])
def test_instant_words(value, words):
    assert instant_words(value) == words


def test_parse_instant_is_utc_and_refuses_what_is_not_an_instant():
    assert parse_instant("2026-12-03T08:01:00+01:00") == datetime(2026, 12, 3, 7, 1, tzinfo=timezone.utc)
    assert parse_instant("2026-12-03") is None and parse_instant("<b>") is None


def test_the_sources_panel_says_when_a_page_was_fetched():
    template = Template("{% load chat_extras %}{{ at|instant_words }}")
    assert template.render(Context({"at": "2026-12-03T07:01:22.5+00:00"})) == "3 Dec 2026, 07:01 UTC"
    assert template.render(Context({"at": "<script>"})) == "&lt;script&gt;"  # escaped, as every printed value
