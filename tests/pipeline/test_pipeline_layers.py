"""The pipeline's modules form a stack too (docs/architecture.md, "The layers of the pipeline"):
each part uses the parts below it, never one beside or above it, and its modules import no cycle.

An import inside a function counts like any other: it may put off loading something heavy (the
HTTP providers, the offline engine), never hide an edge that points up or closes a cycle. So does
an import for annotations only (`if TYPE_CHECKING:`): it names what the module depends on.
"""
from __future__ import annotations

from pathlib import Path

from tests.import_graph import cycles, imports

ROOT = Path(__file__).resolve().parents[2]
PIPELINE = ROOT / "pipeline"

#: Each part of the pipeline (a module or a package, by its dotted name; the longest name that
#: contains a module is its part) and its layer, lower numbers lower.
LAYERS = {
    # What a text must look like to be stated as a fact in a brief, or to reach the verifier at all
    # (an instruction is neither): below the vocabulary, whose briefs and contexts apply it.
    "pipeline.screening": -1,
    # The vocabulary and the plain tools: briefs and verdicts, badges, words, the context a run is
    # given, redaction, the prompts, the framework packs, the guarded network transport.
    "pipeline.schemas": 0, "pipeline.badges": 0, "pipeline.words": 0, "pipeline.months": 0, "pipeline.context": 0,
    "pipeline.redaction": 0, "pipeline.prompts": 0, "pipeline.frameworks": 0, "pipeline.net": 0,
    # What a provider is and what an endpoint accepts, below the topology that names them (the
    # rest of providers/ builds providers from a topology, two floors up).
    "pipeline.providers.base": 1, "pipeline.providers.profiles": 1,
    # A run's terms: which model serves each role, the typed events, the budget, strict parsing.
    "pipeline.topology": 2, "pipeline.events": 2, "pipeline.budget": 2, "pipeline.parsing": 2,
    # A run's model calls, recorded and budgeted.
    "pipeline.calls": 3,
    # What each role is asked, and the mechanical checks.
    "pipeline.requests": 3, "pipeline.task_check": 3, "pipeline.window": 3, "pipeline.citations": 3, "pipeline.integrity": 3,
    # The checks a released step passes, and web research.
    "pipeline.checks": 4, "pipeline.research": 4,
    # The specifics of a released step, looked for in what its executor was given (advisory).
    "pipeline.specifics": 4,
    # The task's asks and the requirement trace, which reads values as the specifics do; a run's terms.
    "pipeline.requirements": 5, "pipeline.run_terms": 5,
    # The providers, the offline engine among them (its planner traces its own requirements); the
    # parts of a run: its brief and recap, and a step's inspection.
    "pipeline.providers": 6, "pipeline.planning": 6, "pipeline.inspection": 6,
    # What runs them: a run's release rules, and the verifier's calibration.
    "pipeline.orchestrator": 7, "pipeline.calibration": 7,
}


def _name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


MODULES = {_name(path): path for path in sorted(PIPELINE.rglob("*.py"))}


def _part(module: str) -> str | None:
    parts = module.split(".")
    return next((".".join(parts[:n]) for n in range(len(parts), 1, -1) if ".".join(parts[:n]) in LAYERS), None)


def _imports(name: str, *, on_load_only: bool = False):
    """(imported pipeline module, line) for every import of the module `name`."""
    for imported, line, _ in imports(MODULES[name], name, on_load_only=on_load_only):
        # `from pipeline.x import y` names a module when y is one, else something inside x.
        module = next((m for m in (imported, imported.rpartition(".")[0]) if m in MODULES), None)
        if module is not None:
            yield module, line


def test_every_module_is_placed_in_a_layer():
    unplaced = [name for name in MODULES if name != "pipeline" and _part(name) is None]
    assert unplaced == [], f"place {unplaced} in LAYERS"
    assert set(LAYERS) <= set(MODULES), f"{sorted(set(LAYERS) - set(MODULES))} no longer exist"


def test_the_pipeline_package_itself_imports_nothing():
    assert list(_imports("pipeline")) == []


def test_each_part_imports_only_from_the_layers_below_it():
    wrong = []
    for name, path in MODULES.items():
        part = _part(name)
        for module, line in _imports(name):
            target = _part(module)
            if part and target and target != part and LAYERS[target] >= LAYERS[part]:
                wrong.append(f"{path.relative_to(ROOT)}:{line} ({part}, layer {LAYERS[part]}) imports "
                             f"{module} ({target}, layer {LAYERS[target]})")
    assert wrong == []


def test_a_package_loads_nothing_above_its_lowest_module():
    """Importing any module of a package first runs the package's `__init__`: what that imports as
    it loads must be as low as the package's lowest module (providers/ holds base and profiles,
    layer 1, so its `__init__` may not load the topology, which the profiles are below)."""
    wrong = []
    for name, path in MODULES.items():
        if path.name != "__init__.py" or name == "pipeline":
            continue
        lowest = min(LAYERS[_part(m)] for m in MODULES if m == name or m.startswith(f"{name}."))
        wrong += [f"{path.relative_to(ROOT)}:{line} loads {module} (layer {LAYERS[_part(module)]}), above "
                  f"the package's lowest module (layer {lowest})"
                  for module, line in _imports(name, on_load_only=True) if LAYERS[_part(module)] > lowest]
    assert wrong == []


def test_the_pipeline_modules_import_no_cycle():
    graph = {name: {module for module, _ in _imports(name)} - {name} for name in MODULES}
    assert cycles(graph) == []
