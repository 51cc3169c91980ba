"""The package layers: the envs depend on no bot and no trainer (``envs/`` imports nothing from ``parlour.baselines``
or ``parlour.training``, not even lazily inside a function), and the bots on no trainer (``baselines/`` imports nothing
from ``parlour.training``); and no module of ``envs/``, ``baselines/`` or ``training/`` reaches into
another module's private names (the JAX cores and batched bots read the scalar side's public tables only)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Package folder -> the parlour packages its modules must not import.
FORBIDDEN = {"envs": ("parlour.baselines", "parlour.training"), "baselines": ("parlour.training",)}


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every module a source file imports (at any depth: lazy imports inside functions count too)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.lineno, node.module))
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_a_lower_layer_imports_nothing_from_a_higher_one(package: str) -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for line, name in _imports(path)
        if name.startswith(FORBIDDEN[package])
    ]
    assert not bad, "\n".join(bad)


def test_the_check_sees_a_lazy_import(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from parlour.baselines import resolve\n    return resolve\n")
    assert _imports(source) == [(2, "parlour.baselines")]


#: Packages whose modules use no other module's private names (``_name``), imported or read as an attribute.
NO_PRIVATE_CROSSING = ("envs", "baselines", "training")


def _private_uses(path: Path) -> list[str]:
    """``from parlour.x import _y`` and ``module._y`` where ``module`` is a parlour module imported by this file."""
    tree = ast.parse(path.read_text(), str(path))
    modules: set[str] = set()  # local names bound to parlour modules
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("parlour."):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{node.lineno}: from {node.module} import {alias.name}")
                modules.add(alias.asname or alias.name)  # a submodule imported by name (``import rules``)
        elif isinstance(node, ast.Import):
            modules.update(a.asname or a.name.split(".")[0] for a in node.names if a.name.startswith("parlour."))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append(f"{node.lineno}: {node.value.id}.{node.attr}")
    return found


@pytest.mark.parametrize("package", NO_PRIVATE_CROSSING)
def test_no_module_uses_another_modules_private_names(package: str) -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{use}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for use in _private_uses(path)
    ]
    assert not bad, "\n".join(bad)


def test_the_check_sees_a_private_import_and_a_private_attribute(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "from parlour.envs.goes_to_eleven.env import _gather_index\n"
        "from parlour.envs.elevenses import rules\n"
        "X = rules._HANDLERS\n"
        "Y = rules.HANDLERS\n"
        "def f(self):\n    return self._own\n"
    )
    assert _private_uses(source) == [
        "1: from parlour.envs.goes_to_eleven.env import _gather_index",
        "3: rules._HANDLERS",
    ]


#: The publishing wing (``training/publish/``): what trains and renders our own baselines. The library modules of
#: ``training/`` -- every one but the wing itself and the command line -- import nothing from it.
WING = "parlour.training.publish"


def test_the_library_imports_nothing_from_the_publishing_wing() -> None:
    training = ROOT / "training"
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in sorted(training.rglob("*.py"))
        if path.relative_to(training).parts[0] not in ("publish", "cli")
        for line, name in _imports(path)
        if name == WING or name.startswith(WING + ".")
    ]
    assert not bad, "\n".join(bad)


#: Import root -> its folder (setuptools' package-dir).
PACKAGES = {"parlour.envs": "envs", "parlour.training": "training", "parlour.baselines": "baselines"}


def _modules() -> dict[str, Path]:
    out = {}
    for package, folder in PACKAGES.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            out[".".join((package, *parts))] = path
    return out


def _runtime_imports(tree: ast.AST) -> list[tuple[str, list[str]]]:
    """``(module, names)`` of every import that can run (lazy ones inside functions included; an ``if TYPE_CHECKING:``
    block never runs, so its imports are left out)."""
    found: list[tuple[str, list[str]]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, [alias.name for alias in node.names]))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the parlour modules it imports at run time (``from package import module`` names the module)."""

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        edges = set()
        for name, names in _runtime_imports(ast.parse(path.read_text(), str(path))):
            for target in [resolve(f"{name}.{n}") for n in names] or [resolve(name)]:
                if target is not None and target != module and not module.startswith(target + "."):
                    edges.add(target)  # a package's own __init__ is not a circle with its modules
        graph[module] = edges
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of ``graph``: its strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


def test_no_import_circle_anywhere() -> None:
    found = circles(import_graph(_modules()))
    assert not found, "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_the_circle_check_finds_a_lazy_circle_and_skips_type_checking(tmp_path: Path) -> None:
    a = tmp_path / "a.py"
    a.write_text("def f():\n    from parlour.x import b\n")
    b = tmp_path / "b.py"
    b.write_text("from parlour.x.a import f\n")
    c = tmp_path / "c.py"
    c.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from parlour.x.a import f\n")
    modules = {"parlour.x.a": a, "parlour.x.b": b, "parlour.x.c": c}
    graph = import_graph(modules)
    assert circles(graph) == [["parlour.x.a", "parlour.x.b"]]
    assert graph["parlour.x.c"] == set()


def test_every_declared_track_has_its_work_and_nothing_else_does() -> None:
    pytest.importorskip("yaml")
    from parlour.baselines.tracks import TRACKS
    from parlour.training.publish.tracks import WORK

    assert list(WORK) == list(TRACKS)
