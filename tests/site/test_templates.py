"""Template hygiene that Django does not enforce."""
from pathlib import Path

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def test_no_comment_tag_spans_lines():
    # `{# ... #}` is a one-line comment: spread over two lines it is printed on the page as text.
    broken = [f"{path.relative_to(TEMPLATES)}:{n}" for path in TEMPLATES.rglob("*.html")
              for n, line in enumerate(path.read_text().splitlines(), 1) if "{#" in line and "#}" not in line]
    assert broken == []


def test_the_home_page_shows_no_template_source(client, alice):
    client.force_login(alice)
    page = client.get("/").content.decode()
    assert "{#" not in page and "{%" not in page
