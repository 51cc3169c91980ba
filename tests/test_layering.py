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
