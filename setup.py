"""Packages are found, not listed: every folder holding an ``__init__.py`` under ``envs/``, ``training/`` and
``baselines/`` ships as ``parlour.<folder.path>`` (``package-dir`` in ``pyproject.toml`` maps the three roots), so a new
game's package needs no line here.

The wheel's checkpoints are what a user plays and compares with: the shipped policies (``<env>_<track>.json``), the
weights file each of them names, and the published results. The other per-seed files behind a published table stay in
the repository, where ``parlour baselines`` reads them (from a clone). Everything else is in ``pyproject.toml``."""

import json
import re
from pathlib import Path

from setuptools import find_packages, setup

ROOTS = ("envs", "training", "baselines")
CHECKPOINTS = Path(__file__).resolve().parent / "baselines" / "checkpoints"
#: A shipped policy's spec: ``<env>_<track>.json`` (``parlour.baselines.SHIPPED_TRACKS``).
SHIPPED = re.compile(r".+_v\d+_(rl|distilled)\.json")


def checkpoint_files() -> list[str]:
    """The checkpoint files the wheel carries (paths under ``parlour/baselines``)."""
    specs = [p for p in CHECKPOINTS.glob("*.json") if SHIPPED.fullmatch(p.name)]
    weights = [json.loads(p.read_text())["weights"]["file"] for p in specs]
    results = [p.name for p in CHECKPOINTS.glob("*_results.json")]
    return [f"checkpoints/{name}" for name in sorted({*(p.name for p in specs), *weights, *results})]


setup(
    packages=[f"parlour.{p}" for p in find_packages(include=[*ROOTS, *(f"{r}.*" for r in ROOTS)])],
    package_data={"": ["py.typed"], "parlour.baselines": checkpoint_files()},
)
