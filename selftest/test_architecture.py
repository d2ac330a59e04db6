"""The harness keeps its shape: the import graph of graders/ is read from the source (every
import, module level or inside a function) and checked against the layers of
docs/ARCHITECTURE.md.

- No cycle between the harness's modules.
- A layer imports only from the layers before it (a module may import its own package).
- What ships to candidates (graders.packaging.bundle.shipped_modules) imports nothing that
  does not ship, but for the one lazy path a bundle never takes (``--impl mutant:NAME``).
"""

from __future__ import annotations

import ast
from pathlib import Path

from graders import catalog
from graders.packaging import bundle

GRADERS = catalog.ROOT / "graders"
CONTENT = {"hidden", "mutants", "alternatives", "hostile", "stubs"}

# The layers, bottom first: each imports only from the layers listed before it. A module
# is placed by its longest listed prefix (graders.grade.report belongs to "grade").
LAYERS: list[tuple[str, ...]] = [
    ("catalog", "launch", "wire", "worker", "measure", "support", "hardware"),
    ("sandbox",),
    ("impl", "plugin", "candidate_tests", "outside"),
    ("grade",),
    ("grade.__main__", "batch", "cli", "typecheck", "interview"),
    ("packaging", "authoring", "bench"),
]
# Upward edges allowed, each lazy (inside a function) and for one reason.
UPWARD = {
    # --impl mutant:NAME builds the mutant first; a bundle holds no mutants, never takes it
    ("impl", "authoring.mutant"),
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(GRADERS).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def harness_modules() -> dict[str, Path]:
    """Every module of the harness (graders/ but the per-kata content folders)."""
    found = {}
    for path in sorted(GRADERS.rglob("*.py")):
        rel = path.relative_to(GRADERS).parts
        if rel[0] in CONTENT or "__pycache__" in rel:
            continue
        found[_module_name(path)] = path
    return found


def imports_of(path: Path, known: set[str]) -> dict[str, bool]:
    """The harness modules ``path`` imports -> whether some import of it is at module
    level (else only inside functions: lazy)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: dict[str, bool] = {}
    top = {id(n) for n in tree.body}
    top |= {id(n) for stmt in tree.body if isinstance(stmt, (ast.If, ast.Try))
            for n in ast.walk(stmt)}

    def add(name: str, node: ast.AST) -> None:
        if name.startswith("graders."):
            name = name[len("graders."):]
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                found[name] = found.get(name, False) or id(node) in top

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                add(full if full.removeprefix("graders.") in known else node.module, node)
    return found


def _layer(module: str) -> int:
    best, where = -1, -1
    for i, layer in enumerate(LAYERS):
        for prefix in layer:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, where = len(prefix), i
    return where


def graph() -> dict[str, dict[str, bool]]:
    modules = harness_modules()
    known = set(modules)
    return {m: {d: lazy for d, lazy in imports_of(p, known).items() if d != m and d}
            for m, p in modules.items() if m}


def _package(module: str) -> str:
    return module.split(".")[0]


def test_every_harness_module_has_a_layer() -> None:
    unplaced = [m for m in harness_modules() if m and _layer(m) < 0]
    assert not unplaced, f"modules in no layer of LAYERS (docs/ARCHITECTURE.md): {unplaced}"


def test_no_import_cycle() -> None:
    edges = {m: set(deps) for m, deps in graph().items()}
    # a package's __init__ re-exporting its own modules is not a cycle between concepts
    edges = {m: {d for d in deps if not (_package(d) == _package(m) and "." not in m)}
             for m, deps in edges.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(edges.get(m, ())):
            if state.get(d) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(d):] + [d]))
            if d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m)


def test_layers_import_only_downward() -> None:
    wrong = []
    for m, deps in graph().items():
        for d, at_top in deps.items():
            if _package(d) == _package(m) or _layer(d) <= _layer(m):
                continue
            if (m, d) in UPWARD and not at_top:
                continue
            wrong.append(f"{m} (layer {_layer(m)}) imports {d} (layer {_layer(d)})"
                         + ("" if (m, d) not in UPWARD else " at module level"))
    assert not wrong, "imports against the layers of docs/ARCHITECTURE.md:\n" + "\n".join(wrong)


def test_shipped_code_imports_only_shipped_code() -> None:
    shipped = set(bundle.shipped_modules())
    wrong = []
    for m, deps in graph().items():
        if m not in shipped:
            continue
        for d, at_top in deps.items():
            if d in shipped or (m, d) in UPWARD and not at_top:
                continue
            wrong.append(f"{m} imports {d}, which a candidate's bundle does not hold")
    assert not wrong, "\n".join(wrong)


def test_the_checks_can_fail(tmp_path: Path) -> None:
    """The graph reader sees module-level, lazy, dotted and from-imports."""
    src = tmp_path / "x.py"
    src.write_text("from graders import catalog\nimport graders.grade.report\n"
                   "def f():\n    from graders.authoring import mutant\n")
    got = imports_of(src, {"catalog", "grade", "grade.report", "authoring", "authoring.mutant"})
    assert got == {"catalog": True, "grade.report": True, "authoring.mutant": False}
