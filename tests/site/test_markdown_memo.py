"""Markdown rendered once per text (lib/markdown.py): the same safe HTML again, from memory,
within a bounded size."""
from __future__ import annotations

from beyond_site.lib import markdown


def test_a_text_is_rendered_once_and_its_html_given_again(monkeypatch):
    calls = []
    real = markdown._render
    monkeypatch.setattr(markdown, "_rendered", markdown._Rendered(budget=10_000))
    monkeypatch.setattr(markdown, "_render", lambda text: calls.append(text) or real(text))
    first = markdown.markdown_to_html("**Bold** <script>alert(1)</script> [x](javascript:alert(1))")
    again = markdown.markdown_to_html("**Bold** <script>alert(1)</script> [x](javascript:alert(1))")
    assert again == first and len(calls) == 1
    assert "<strong>Bold</strong>" in again and "<script" not in again and "href" not in again


def test_what_it_remembers_is_bounded_oldest_first_and_a_huge_text_is_not_kept():
    memo = markdown._Rendered(budget=100)
    for n in range(5):
        memo.put(f"{n}" * 20, f"<p>{n}</p>")
    assert memo.size <= 100 and memo.get("0" * 20) is not None  # 5 x 20 fits
    memo.get("0" * 20)  # used: it outlives the next oldest
    memo.put("5" * 20, "<p>5</p>")
    assert memo.get("1" * 20) is None and memo.get("0" * 20) is not None and memo.size <= 100
    memo.put("h" * 60, "<p>huge</p>")  # more than a quarter of the budget
    assert memo.get("h" * 60) is None
