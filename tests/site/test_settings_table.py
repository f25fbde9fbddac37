"""docs/operations.md's settings table is the one list of the environment variables Beyond reads:
every variable the production code reads is in it, and nothing else is. README's table keeps the
few a first deployment sets, all of them from that list."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "operations.md"
#: Calls whose first argument names an environment variable: `os.getenv`, `os.environ.get`, a
#: mapping of the environment passed in as `env` (the pipeline's), and settings.py's helpers.
READERS = {"getenv", "envint", "envbool"}
ENVIRONMENTS = {"environ", "env"}


def _receiver(func: ast.expr) -> str | None:
    inner = func.value if isinstance(func, ast.Attribute) else None
    return getattr(inner, "attr", getattr(inner, "id", None))


def variables_read(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call) and node.args:
            name = getattr(node.func, "attr", getattr(node.func, "id", None))
            if name in READERS or (name == "get" and _receiver(node.func) in ENVIRONMENTS):
                found.add(node.args[0])
        elif isinstance(node, ast.Subscript) and getattr(node.value, "attr", getattr(node.value, "id", None)) in ENVIRONMENTS:
            found.add(node.slice)
    return {n.value for n in found if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def _production_modules():
    for folder in ("beyond_site", "pipeline"):
        yield from (p for p in (ROOT / folder).rglob("*.py") if "migrations" not in p.parts)


def documented(doc: Path = DOC, heading: str = "Settings") -> set[str]:
    """The variables named in the first column of the table under `## <heading>`."""
    section = doc.read_text().split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return {name for row in rows for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row.split(" | ")[0])}


def test_the_reader_finds_what_settings_py_reads():
    read = variables_read(ROOT / "beyond_site" / "settings.py")
    assert {"DATABASE_URL", "DJANGO_DEBUG", "BEYOND_HTTP_CONCURRENCY", "BEYOND_PAGE_RECHECK_S"} <= read


def test_the_table_lists_every_variable_read_and_nothing_else():
    read = set().union(*(variables_read(path) for path in _production_modules()))
    table = documented()
    assert sorted(read - table) == [], "read but not in docs/operations.md's settings table"
    assert sorted(table - read) == [], "in docs/operations.md's settings table but read nowhere"


def test_readme_names_a_few_of_them():
    readme = documented(ROOT / "README.md", "Configuration")
    assert 5 <= len(readme) <= 15
    assert sorted(readme - documented()) == []
