"""Packages are found, not listed: every folder holding an ``__init__.py`` under ``envs/``, ``training/`` and
``baselines/`` ships as ``parlour.<folder.path>`` (``package-dir`` in ``pyproject.toml`` maps the three roots), so a new
game's package needs no line here. Everything else is in ``pyproject.toml``."""

from setuptools import find_packages, setup

ROOTS = ("envs", "training", "baselines")

setup(packages=[f"parlour.{p}" for p in find_packages(include=[*ROOTS, *(f"{r}.*" for r in ROOTS)])])
