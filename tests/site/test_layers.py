"""The site's apps form a stack (docs/architecture.md, "The layers of the site"): each app may use
the apps below it, never one beside or above it, and no module import hides inside a function to
get round that.

"Use" is everything that runs inside an app's answer: its Python imports, the templates it renders
(by name from Python, or through `{% include %}` and `{% extends %}`), and the
template tag libraries those load. A template belongs to the app whose folder it is in
(`templates/<app>/`); the site's frame (`base.html`, the error pages,
Django's login pages) belongs to none and may be used by all. Pointing the browser at a page (a
link, a form's action, a redirect) is navigation, not use: any page may name any other by its URL
name, and the test checks only that every name it gives exists and says its app (`chat:conversation`
is a page of `chat`).
"""
from __future__ import annotations

import ast
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from django.apps import apps
from django.urls import get_resolver

from tests.import_graph import cycles, imports

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "beyond_site"
TEMPLATES = ROOT / "templates"

#: Lower numbers are lower layers. `lib` holds helpers with no models; the apps of one layer are
#: peers that never use one another.
LAYERS = {
    "lib": 0,
    "workspaces": 1,
    "runs": 2,
    # The verifier's calibration: labels on the issues verifiers raised, reports, its job and its
    # page. Below the pages because the auditors' run page shows a run's labels section.
    "calibration": 3,
    "chat": 4, "audit": 4, "exports": 4, "workspace_settings": 4, "accounts": 4, "files": 4,
    # The HTTP API: the pages' services and permission rules, for other programs.
    "api": 5,
    # How a process starts and what it runs besides requests (the web server's tuning, the worker).
    "runtime": 6,
}
#: Template folders of the site's frame rather than of an app: Django's login pages.
FRAME_FOLDERS = {"registration"}
#: Function-local imports with a reason other than hiding an edge: the extraction worker runs in a
#: subprocess that lowers its own memory and CPU limits before it loads the parsers.
LOCAL_IMPORTS_ALLOWED = {"workspaces/_extract_worker.py"}


def _app_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "beyond_site" or len(parts) < 2:
        return None
    return parts[1] if parts[1] in LAYERS else None


def _name(rel: Path) -> str:
    return ".".join(("beyond_site", *rel.with_suffix("").parts)).removesuffix(".__init__")


def _site_modules():
    for path in sorted(SITE.rglob("*.py")):
        rel = path.relative_to(SITE)
        if rel.parts[0] in LAYERS and "migrations" not in rel.parts:
            yield rel, path


def _site_imports(rel: Path, path: Path):
    """(imported beyond_site name, line, at module level?) for every import in the module."""
    return [found for found in imports(path, _name(rel)) if found[0].startswith("beyond_site.")]


def _uses_allowed(user: str | None, used: str | None) -> bool:
    """Whether what belongs to `user` (an app, or None for the site's frame) may use what belongs
    to `used`: its own, the frame's, or a lower layer's."""
    if used is None or used == user:
        return True
    return user is not None and LAYERS[used] < LAYERS[user]


def _layer(owner: str | None) -> str:
    return f"{owner}, layer {LAYERS[owner]}" if owner else "the site's frame"


# ---- Python ---------------------------------------------------------------------------------

def test_every_app_is_placed_in_a_layer():
    packages = {p.name for p in SITE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages <= set(LAYERS), f"place {sorted(packages - set(LAYERS))} in LAYERS"


def test_apps_import_only_from_the_layers_below_them():
    wrong = []
    for rel, path in _site_modules():
        app = rel.parts[0]
        for module, line, _ in _site_imports(rel, path):
            target = _app_of(module)
            if target and not _uses_allowed(app, target):
                wrong.append(f"{rel}:{line} ({_layer(app)}) imports {module} ({_layer(target)})")
    assert wrong == []


def test_no_function_local_import_hides_an_edge():
    hidden = [f"{rel}:{line} imports {module} inside a function"
              for rel, path in _site_modules() if str(rel) not in LOCAL_IMPORTS_ALLOWED
              for module, line, top in _site_imports(rel, path) if not top]
    assert hidden == []


def test_the_site_modules_import_no_cycle():
    modules = {_name(rel): (rel, path) for rel, path in _site_modules()}
    graph: dict[str, set[str]] = defaultdict(set)
    for name, (rel, path) in modules.items():
        for module, _, _ in _site_imports(rel, path):
            target = next((m for m in (module, module.rpartition(".")[0]) if m in modules), None)
            if target and target != name:
                graph[name].add(target)
    assert cycles(graph) == []


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


# ---- Templates ------------------------------------------------------------------------------

#: Every template, by the name it is loaded with, and its file.
TEMPLATE_FILES = {str(p.relative_to(TEMPLATES)): p for p in sorted(TEMPLATES.rglob("*.html"))}
TAG = re.compile(r"{%-?\s*(include|extends|import|from|load)\s+(.*?)\s*-?%}", re.S)
#: Each app's template tag libraries, by the name `{% load %}` gives them.
TAG_LIBRARIES = {p.stem: p.relative_to(SITE).parts[0] for p in SITE.glob("*/templatetags/*.py") if p.stem != "__init__"}


def _owner(name: str) -> str | None:
    """The app a template (by its name) belongs to, None for the frame."""
    folder = name.split("/")[0]
    return folder if folder in LAYERS else None


def _template_uses(name: str, path: Path):
    """(what the template uses: a template's name or `tags:` a library, line) for each tag."""
    text = path.read_text()
    for match in TAG.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        kind, rest = match.groups()
        if kind == "load":
            libraries = rest.split(" from ")[-1].split() if " from " in rest else rest.split()
            yield from ((f"tags:{library}", line) for library in libraries)
        elif kind in ("import", "from"):
            continue
        else:
            literal = re.match(r"""\s*(["'])(.+?)\1""", rest)
            yield (literal.group(2) if literal else f"unnamed:{rest}"), line


def test_template_folders_are_apps_or_the_frame():
    folders = {p.name for p in TEMPLATES.iterdir() if p.is_dir()}
    assert folders <= set(LAYERS) | FRAME_FOLDERS


def test_templates_use_only_their_app_the_frame_and_the_layers_below():
    wrong = []
    for name, path in TEMPLATE_FILES.items():
        owner = _owner(name)
        for used, line in _template_uses(name, path):
            if used.startswith("unnamed:"):
                wrong.append(f"{path.relative_to(ROOT)}:{line} uses a template by a variable ({used[8:]}): name it")
            elif used.startswith("tags:"):
                target = TAG_LIBRARIES.get(used[5:])  # None: Django's own or a third party's
                if not _uses_allowed(owner, target):
                    wrong.append(f"{path.relative_to(ROOT)}:{line} ({_layer(owner)}) loads {used[5:]} "
                                 f"({_layer(target)})")
            elif used not in TEMPLATE_FILES:
                wrong.append(f"{path.relative_to(ROOT)}:{line} uses {used}, which does not exist")
            elif not _uses_allowed(owner, _owner(used)):
                wrong.append(f"{path.relative_to(ROOT)}:{line} ({_layer(owner)}) uses {used} ({_layer(_owner(used))})")
    assert wrong == []


def _strings(path: Path):
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value, node.lineno


def test_apps_render_only_their_own_templates_the_frame_s_and_lower_ones():
    """A template named in Python (`render`, `render_to_string`, an inclusion tag) is used by the
    app that names it."""
    wrong = []
    for rel, path in _site_modules():
        app = rel.parts[0]
        for text, line in _strings(path):
            if text in TEMPLATE_FILES and not _uses_allowed(app, _owner(text)):
                wrong.append(f"{rel}:{line} ({_layer(app)}) renders {text} ({_layer(_owner(text))})")
    assert wrong == []


# ---- URL names ------------------------------------------------------------------------------

#: Python calls whose first argument, a string, is a URL name.
URL_CALLS = {"reverse", "reverse_lazy", "redirect", "resolve_url"}
#: A name written out whole; one computed in the template (`'exports:'|add:ext`) is not read.
URL_TAG = re.compile(r"""{%\s*url\s+(["'])([^"']+?)\1[\s%]""")


def _url_names():
    """(URL name, where) for every URL name written in the site: `{% url %}` in templates, and the
    calls above in Python (`redirect("/")` and the like are paths, not names)."""
    for path in TEMPLATE_FILES.values():
        text = path.read_text()
        for match in URL_TAG.finditer(text):
            yield match.group(2), f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, match.start()) + 1}"
    for rel, path in _site_modules():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str) and "/" not in node.args[0].value
                    and getattr(node.func, "id", getattr(node.func, "attr", None)) in URL_CALLS):
                yield node.args[0].value, f"beyond_site/{rel}:{node.lineno}"


def _resolves(name: str) -> bool:
    resolver = get_resolver()
    namespace, _, short = name.rpartition(":")
    if namespace:
        if namespace not in resolver.namespace_dict:
            return False
        resolver = resolver.namespace_dict[namespace][1]
    return short in resolver.reverse_dict


def test_every_url_name_given_exists():
    names = list(_url_names())
    assert len(names) > 50, "the scan found too few URL names to be reading the site"
    assert [f"{where} names {name}" for name, where in names if not _resolves(name)] == []


def test_a_namespace_is_its_app_s_name():
    """So that a URL name says which app's page it is: `chat:conversation` is `chat`'s."""
    served = {namespace: getattr(resolver.urlconf_name, "__name__", resolver.urlconf_name)
              for namespace, (_, resolver) in get_resolver().namespace_dict.items() if namespace != "admin"}
    wrong = [f"{namespace} is served by {urls}" for namespace, urls in served.items()
             if urls != f"beyond_site.{namespace}.urls"]
    assert wrong == []


# ---- The runtime's tuning ---------------------------------------------------------------------
# Where the site reaches inside its frameworks, and where it starts work of its own: each in one
# place, the tuning that bench/README.md measured ("Throughput"; docs/architecture.md "The hot
# paths' queries"). Everywhere else the apps use Django, Channels and daphne as documented.

#: Every module of the site (the apps, and the settings and ASGI entry beside them).
PRODUCTION = [(path.relative_to(SITE).as_posix(), path) for path in sorted(SITE.rglob("*.py"))
              if "migrations" not in path.parts]
#: The ORM's compiler and query internals: modules, and the names that only they give.
ORM_MODULES = ("django.db.models.sql", "django.db.models.query")
ORM_NAMES = {"klass_info", "get_related_populators", "annotation_col_map", "get_compiler", "get_converters",
             "values_select", "col_count", "add_update_values", "related_updates", "bulk_insert_sql",
             "insert_statement", "on_conflict_suffix_sql", "last_insert_id"}
#: daphne's internals (its modules; `"daphne"` alone, the app settings.py installs, is public).
DAPHNE_MODULES = ("daphne.", "autobahn", "twisted.web")
#: Tasks started on an event loop other than background work deferred through runs/jobs.py, each
#: bound to what started it, which awaits or cancels it before it ends: none outlives its owner.
SCOPED_TASKS = {
    # a page's websocket reading again when its doorbells fall quiet; cancelled at disconnect
    "chat/consumers.py": 1,
    # a lease's heartbeat while its holder works (`async with`); cancelled as the holder leaves
    "lib/leases.py": 1,
    # a run's watcher of the stop button while the run executes; cancelled as it ends
    "runs/runner.py": 1,
    # a worker process's beats while it drains its jobs at shutdown; cancelled after
    "runtime/management/commands/beyond_worker.py": 1,
    # daphne's application instance for a connection, made as daphne.server makes it
    "runtime/daphne_bodies.py": 1,
    # one read of a run's events shared by the API streams waiting on it; it ends on its own
    "api/events.py": 1,
}


def _uses(path: Path):
    """(imported name or a string naming a module, line) and (attribute or name, line) in a module."""
    tree = ast.parse(path.read_text(), str(path))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            names.append((node.attr, node.lineno))
        elif isinstance(node, ast.Name):
            names.append((node.id, node.lineno))
        elif isinstance(node, ast.alias):
            names.append((node.name.rpartition(".")[2], node.lineno))
    return names


def _modules_named(rel: str, path: Path):
    module = _name(Path(rel))
    yield from ((name, line) for name, line, _ in imports(path, module))
    yield from _strings(path)


def test_orm_internals_are_reached_only_in_runtime():
    wrong = [f"{rel}:{line} {name}" for rel, path in PRODUCTION if not rel.startswith("runtime/")
             for name, line in [*_modules_named(rel, path), *_uses(path)]
             if name in ORM_NAMES or name.startswith(ORM_MODULES)]
    assert wrong == []


def test_daphne_internals_are_reached_only_in_runtime_by_the_body_limit_and_the_access_log():
    reaching = {rel for rel, path in PRODUCTION for name, _ in _modules_named(rel, path)
                if name.startswith(DAPHNE_MODULES)}
    assert reaching == {"runtime/daphne_bodies.py", "runtime/daphne_access.py"}
    assert any(name.startswith("daphne.http_protocol")
               for name, _ in _modules_named("runtime/daphne_bodies.py", SITE / "runtime/daphne_bodies.py"))


def test_the_frameworks_internals_and_thread_pools_are_reached_only_in_runtime():
    """Stock Django, Channels and daphne in the apps: what reaches inside them, and the process's
    own thread pools, live in runtime/ (docs/architecture.md, "How a process runs")."""
    tuning = re.compile(r"Prepared\(|get_related_populators|django\.db\.models\.sql|daphne\.http_protocol"
                        r"|ThreadPoolExecutor|jinja2")
    assert [rel for rel, path in PRODUCTION if not rel.startswith("runtime/") and tuning.search(path.read_text())] == []


def test_no_thread_of_its_own_and_one_door_for_background_work():
    threads = [f"{rel}:{line}" for rel, path in PRODUCTION for name, line in _uses(path) if name in {"Thread", "Timer"}]
    assert threads == []  # work off a request is deferred through runs/jobs.py, on its pools
    tasks = Counter()
    for rel, path in PRODUCTION:
        tasks[rel] += sum(1 for name, _ in _uses(path) if name in {"create_task", "ensure_future"})
    assert {rel: n for rel, n in tasks.items() if n} == {"runs/jobs.py": 1, **SCOPED_TASKS}


def test_no_function_of_the_core_or_the_site_is_over_fifty_lines():
    """Short functions that say what they do (issue 46): a longer one is split into named parts."""
    long = []
    for folder in (ROOT / "pipeline", ROOT / "beyond_site"):
        for path in folder.rglob("*.py"):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= 50:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} "
                                f"({node.end_lineno - node.lineno + 1} lines)")
    assert long == []


def test_the_orchestrator_is_under_three_hundred_lines():
    tree = ast.parse((ROOT / "pipeline" / "orchestrator.py").read_text(encoding="utf-8"))
    [orchestrator] = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "Orchestrator"]
    assert orchestrator.end_lineno - orchestrator.lineno + 1 < 300


def test_the_site_reads_the_environment_only_through_its_settings():
    """One door for configuration (issue 46): settings.py reads the environment; everything else
    asks `settings` (the variables read when used go through settings.BEYOND_ENVIRONMENT). asgi.py
    only names the settings module, as Django's template of it does."""
    direct = re.compile(r"\bos\.(?:environ|getenv)\b")
    readers = [rel for rel, path in PRODUCTION if direct.search(path.read_text()) and rel not in {"settings.py", "asgi.py"}]
    assert readers == []
