"""The package layers: the envs depend on no bot and no trainer (``envs/`` imports nothing from ``parlour.baselines``
or ``parlour.training``, not even lazily inside a function)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Package folder -> the parlour packages its modules must not import.
FORBIDDEN = {"envs": ("parlour.baselines", "parlour.training")}


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
