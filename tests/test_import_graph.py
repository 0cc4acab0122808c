"""The import graph of the ``benchsuite`` namespace has no circles (issue 22, item 2).

Every import counts, at module level and inside functions (a lazy import still ties the two
modules together), except those under ``if TYPE_CHECKING:``. A failing test names the circle.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# folder -> the package it is inside the namespace
FOLDERS = {"benchsuite": "benchsuite", "optimizers": "benchsuite.optimizers", "analysis": "benchsuite.analysis"}


def modules() -> dict[str, Path]:
    """Every module of the namespace: dotted name -> file."""
    out = {}
    for folder, pkg in FOLDERS.items():
        for f in (ROOT / folder).rglob("*.py"):
            parts = list(f.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([pkg, *parts])] = f
    return out


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in node.body:
                lines.update(range(sub.lineno, (sub.end_lineno or sub.lineno) + 1))
    return lines


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The namespace modules that ``name`` imports (the longest known prefix of each imported name)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_lines(tree)
    is_pkg = path.name == "__init__.py"
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    targets: set[str] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.Import):
            targets.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                stem = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            for a in node.names:
                targets.add(f"{stem}.{a.name}" if f"{stem}.{a.name}" in known else stem)
    out = set()
    for t in targets:
        parts = t.split(".")
        while parts and ".".join(parts) not in known:
            parts.pop()
        if parts and ".".join(parts) != name:
            out.add(".".join(parts))
    return out


def graph() -> dict[str, set[str]]:
    """Module -> the namespace modules it imports. A package's ``__init__`` is not an edge to its
    submodules' importers: importing ``a.b`` runs ``a/__init__``, but that is the language, not a tie."""
    mods = modules()
    known = set(mods)
    return {m: imports_of(m, p, known) for m, p in mods.items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    import sys

    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def _path_in(comp: list[str], g: dict[str, set[str]]) -> list[str]:
    """One concrete circle through the component's first module, for the message."""
    start = comp[0]
    members = set(comp)
    prev = {start: None}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(g[v] & members):
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return [*reversed(path), start]
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return comp


def test_the_namespace_has_no_import_circles() -> None:
    g = graph()
    mods = modules()
    # a module importing its own package (whose __init__ runs first anyway) is not a circle
    for m in g:
        g[m] = {t for t in g[m] if not (m.startswith(t + ".") and mods[t].name == "__init__.py")}
    found = cycles(g)
    assert not found, "import circles:\n" + "\n".join(" -> ".join(_path_in(c, g)) for c in found)


def test_the_graph_sees_lazy_imports() -> None:
    """The checker must see imports inside functions, or it would pass by blindness."""
    g = graph()
    assert "benchsuite.optimizers.models.gp" in g["benchsuite.optimizers.gp_ei"]
    assert g["benchsuite.cli"], "cli imports nothing?"


def test_shared_model_code_never_imports_a_plugin() -> None:
    """optimizers/{models,kernels,inference,acquisition,common} hold what plugins share (issue 22 item 7):
    they are imported by plugins, never the other way round."""
    from benchsuite.registry import SHARED_PACKAGES

    shared = tuple(f"benchsuite.optimizers.{p}" for p in SHARED_PACKAGES)
    g = graph()
    bad = sorted(f"{m} -> {t}" for m in g if m.startswith(shared) for t in g[m]
                 if t.startswith("benchsuite.optimizers.") and not t.startswith(shared)
                 and t != "benchsuite.optimizers")
    assert not bad, "shared model code imports plugins: " + "; ".join(bad)


# The layers of the house, lowest first: a module imports only from its own layer or below.
# (DESIGN.md draws the same picture; a new module gets a layer here when it is added.)
LAYERS: list[tuple[str, ...]] = [
    ("benchsuite.errors", "benchsuite.paths", "benchsuite.seeding", "benchsuite.version", "benchsuite.locks",
     "benchsuite.extras", "benchsuite.activity", "benchsuite.cli_types"),
    ("benchsuite.settings", "benchsuite.space", "benchsuite.results", "benchsuite.published"),
    ("benchsuite.benchmark", "benchsuite.optimizer", "benchsuite.convert", "benchsuite.data",
     "benchsuite.provenance"),
    ("benchsuite.datasets", "benchsuite.uci", "benchsuite.training", "benchsuite.tabular", "benchsuite.surrogate",
     "benchsuite.live", "benchsuite.architectures"),
    ("benchsuite.benchmarks", "benchsuite.optimizers"),
    ("benchsuite.registry", "benchsuite.runner", "benchsuite.execute", "benchsuite.protocol", "benchsuite.testing",
     "benchsuite.backends", "benchsuite.replay", "benchsuite.retrain"),
    ("benchsuite.api", "benchsuite.analysis", "benchsuite.cli_check"),
    ("benchsuite.cli", "benchsuite.cli_progress", "benchsuite.cli_workflow", "benchsuite.cli_reproductions",
     "benchsuite.cli_race", "benchsuite.analysis.__main__", "benchsuite"),
]


def layer_of(module: str) -> int:
    """The layer of a module: its longest matching prefix in :data:`LAYERS`."""
    best, where = -1, None
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, where = len(p), i
    assert where is not None, f"{module} has no layer: add it to LAYERS in tests/test_import_graph.py and DESIGN.md"
    return where


def test_no_import_runs_against_the_layering() -> None:
    g = graph()
    wrong = [f"{m} (layer {layer_of(m)}) imports {t} (layer {layer_of(t)})" for m in sorted(g) for t in sorted(g[m])
             if layer_of(t) > layer_of(m)]
    assert not wrong, "imports against the layering:\n" + "\n".join(wrong)
