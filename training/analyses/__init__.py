"""Analyses of recorded games, registered here by game (:data:`ANALYSES`), so that no shared module branches on a
game's name and the bots' side names no training module. Each analysis module offers
``table(env_name, policies, opponents, *, num_players, games, seed_set) -> rows`` (each policy at a table of each
opponent on the evaluation deals, played with records and read back) and ``format_table(rows) -> str`` (Markdown).

- ``accusations`` (Lady Alice): :mod:`parlour.training.analyses.lady_alice_accusations`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: Game name (its declaration's, :mod:`parlour.envs.declaration`) -> analysis name -> module (named, not imported).
ANALYSES: dict[str, dict[str, str]] = {
    "lady_alice": {"accusations": "parlour.training.analyses.lady_alice_accusations"},
}


def _offered(env_name: str) -> dict[str, str]:
    from parlour.envs import ENVIRONMENTS, game_of

    return ANALYSES.get(game_of(env_name).name, {}) if env_name in ENVIRONMENTS else {}


def offering(name: str) -> list[str]:
    """The env ids whose game offers the analysis ``name``."""
    from parlour.envs import ENVIRONMENTS

    return sorted(e for e in ENVIRONMENTS if name in _offered(e))


def analysis(env_name: str, name: str) -> ModuleType:
    """The module of the analysis ``name`` that ``env_name``'s game offers; ``ValueError`` naming the envs that offer it
    otherwise."""
    offered = _offered(env_name)
    if name not in offered:
        raise ValueError(f"{env_name} has no {name} analysis: expected one of {offering(name)}")
    return importlib.import_module(offered[name])
