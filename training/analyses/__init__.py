"""Analyses of recorded games that a game declares in its :class:`~parlour.baselines.spec.GameSpec` (``analyses``:
name -> module), so that no shared module branches on a game's name. Each analysis module offers
``table(env_name, policies, opponents, *, num_players, games, seed_set) -> rows`` (each policy at a table of each
opponent on the evaluation deals, played with records and read back) and ``format_table(rows) -> str`` (Markdown).

- ``accusations`` (Lady Alice): :mod:`parlour.training.analyses.lady_alice_accusations`.
"""

from __future__ import annotations

import importlib
from types import ModuleType


def offering(name: str) -> list[str]:
    """The env ids whose game offers the analysis ``name``."""
    from parlour.baselines import game_spec
    from parlour.envs import ENVIRONMENTS

    return sorted(e for e in ENVIRONMENTS if (spec := game_spec(e)) is not None and name in spec.analyses)


def analysis(env_name: str, name: str) -> ModuleType:
    """The module of the analysis ``name`` that ``env_name``'s game declares; ``ValueError`` naming the envs that
    offer it otherwise."""
    from parlour.baselines import game_spec

    spec = game_spec(env_name)
    if spec is None or name not in spec.analyses:
        raise ValueError(f"{env_name} has no {name} analysis: expected one of {offering(name)}")
    return importlib.import_module(spec.analyses[name])
