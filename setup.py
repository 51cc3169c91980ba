"""Packages are found, not listed: every folder holding an ``__init__.py`` under ``envs/``, ``training/`` and
``baselines/`` ships as ``parlour.<folder.path>`` (``package-dir`` in ``pyproject.toml`` maps the three roots), so a new
game's package needs no line here.

The wheel's data is declared in ``pyproject.toml``: ``baselines/checkpoints/`` holds exactly what ships -- the shipped
policies (``<env>_<track>.json`` and the weights each names) and the published results -- and every file in it is
carried. The archive behind the published tables (every seed's policy file, the run records, the figures) lives in
``docs/archive/``, outside the import package, and is not carried."""

from setuptools import find_packages, setup

ROOTS = ("envs", "training", "baselines")

setup(packages=[f"parlour.{p}" for p in find_packages(include=[*ROOTS, *(f"{r}.*" for r in ROOTS)])])
