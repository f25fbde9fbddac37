"""The site's apps form a stack (docs/architecture.md): each app may use the apps below it, never
one beside or above it, and no module import hides inside a function to get round that."""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest
from django.apps import apps

SITE = Path(__file__).resolve().parents[2] / "beyond_site"

#: Lower numbers are lower layers. `lib` holds helpers with no models; the top layer's apps are
#: peers that never import one another.
LAYERS = {
    "lib": 0,
    "workspaces": 1,
    "runs": 2,
    "chat": 3, "audit": 3, "exports": 3, "workspace_settings": 3, "accounts": 3, "files": 3,
    "calibration": 3,
    # How a process starts and what it runs besides requests (the web server's tuning, the worker).
    "runtime": 4,
}
#: Function-local imports with a reason other than hiding an edge: the extraction worker runs in a
#: subprocess that lowers its own memory and CPU limits before it loads the parsers.
LOCAL_IMPORTS_ALLOWED = {"workspaces/_extract_worker.py"}


def _app_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "beyond_site" or len(parts) < 2:
        return None
    return parts[1] if parts[1] in LAYERS else None


def _imports(path: Path):
    """(imported module, line, at module level?) for every beyond_site import in `path`."""
    tree = ast.parse(path.read_text(), str(path))
    top_level = {id(node) for node in tree.body}
    package = ".".join(("beyond_site", *path.relative_to(SITE).with_suffix("").parts[:-1]))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:  # relative import: resolve against this module's package
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            names = [f"{module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            if name.startswith("beyond_site."):
                yield name, node.lineno, id(node) in top_level


def _site_modules():
    for path in sorted(SITE.rglob("*.py")):
        rel = path.relative_to(SITE)
        if rel.parts[0] in LAYERS and "migrations" not in rel.parts:
            yield rel, path


def test_every_app_is_placed_in_a_layer():
    packages = {p.name for p in SITE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages <= set(LAYERS), f"place {sorted(packages - set(LAYERS))} in LAYERS"


def test_apps_import_only_from_the_layers_below_them():
    wrong = []
    for rel, path in _site_modules():
        app = rel.parts[0]
        for module, line, _ in _imports(path):
            target = _app_of(module)
            if target and target != app and LAYERS[target] >= LAYERS[app]:
                wrong.append(f"{rel}:{line} ({app}, layer {LAYERS[app]}) imports {module} (layer {LAYERS[target]})")
    assert wrong == []


def test_no_function_local_import_hides_an_edge():
    hidden = [f"{rel}:{line} imports {module} inside a function"
              for rel, path in _site_modules() if str(rel) not in LOCAL_IMPORTS_ALLOWED
              for module, line, top in _imports(path) if not top]
    assert hidden == []


def test_the_site_modules_import_no_cycle():
    graph: dict[str, set[str]] = defaultdict(set)
    modules = {".".join(("beyond_site", *rel.with_suffix("").parts)).removesuffix(".__init__"): path
               for rel, path in _site_modules()}
    for name, path in modules.items():
        for module, _, _ in _imports(path):
            target = next((m for m in (module, module.rpartition(".")[0]) if m in modules), None)
            if target and target != name:
                graph[name].add(target)
    cycles, state = [], {}

    def visit(node, trail):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycles.append(trail[trail.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = "done"

    for node in sorted(modules):
        if node not in state:
            visit(node, [node])
    assert cycles == []


@pytest.mark.parametrize("model", [m for m in apps.get_models() if m._meta.app_label in LAYERS],
                         ids=lambda m: m._meta.label)
def test_model_relations_point_down_the_stack(model):
    app = model._meta.app_label
    upward = [f"{model._meta.label}.{field.name} -> {field.related_model._meta.label}"
              for field in model._meta.get_fields()
              if field.is_relation and field.concrete and field.related_model is not None
              and field.related_model._meta.app_label in LAYERS
              and LAYERS[field.related_model._meta.app_label] > LAYERS[app]]
    assert upward == []
