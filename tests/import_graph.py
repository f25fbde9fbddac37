"""What the layer tests read of Python modules: their imports, and the cycles among them
(tests/site/test_layers.py for the site's apps, tests/pipeline/test_pipeline_layers.py for the core)."""
from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path


def _loaded_with(tree: ast.Module) -> Iterator[ast.AST]:
    """The nodes that run when the module is imported: not in a function, a class or an
    `if TYPE_CHECKING:` block."""
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for other in node.orelse:
                yield from ast.walk(other)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield from ast.walk(node)


def imports(path: Path, module: str, *, on_load_only: bool = False) -> Iterator[tuple[str, int, bool]]:
    """(imported name, line, at the module's top level?) for every import in `path`, the module
    named `module`, wherever it is (or only those that run as it is imported). A relative import is
    resolved; `from a import b` gives `a.b`, which names a module or something inside `a`."""
    tree = ast.parse(path.read_text(), str(path))
    top_level = {id(node) for node in tree.body}
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in (_loaded_with(tree) if on_load_only else ast.walk(tree)):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join([*parts[: len(parts) - node.level + 1], *filter(None, [base])])
            names = [f"{base}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            yield name, node.lineno, id(node) in top_level


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each cycle found by a depth-first walk of `graph` (node -> the nodes it imports)."""
    found, state = [], {}

    def visit(node, trail):
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                found.append(trail[trail.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found
