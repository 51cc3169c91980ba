"""A game's declaration on the bots' side: one frozen :class:`GameSpec` per game, in its bots module as ``SPEC``.

``parlour.baselines`` registers every game's spec in one place (:data:`parlour.baselines.GAME_SPECS`, found by the
game's name from the registered env ids); everything else -- the bot registry, the search bot's playouts, the
feature sets, the benchmark scenarios -- reads the specs from there. A new game is its env files, its bots module
with its ``SPEC``, its configs and its tests: nothing else to edit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from parlour.baselines.base import Policy
    from parlour.baselines.features import Features
    from parlour.baselines.search import Horizon, RolloutPolicy


@dataclass(frozen=True)
class BenchmarkTable:
    """A game's scenario in one published scenario set (:mod:`parlour.training.scenarios`): the player count, the
    opponents (one table each: the policy in one seat, the opponent in all the others) and the deals."""

    num_players: int
    opponents: tuple[str, ...]
    deals: int


@dataclass(frozen=True)
class GameSpec:
    """What a game declares beside its bots."""

    #: The game's name: its env package ``parlour.envs.<name>`` and bots module ``parlour.baselines.<name>``.
    name: str
    #: The env ids it covers (newest version first).
    env_ids: tuple[str, ...]
    #: The scripted bots.
    bots: tuple[type[Policy], ...]
    #: The search bot's playout policy in this game (``None``: random playouts).
    rollout_policy: RolloutPolicy | None = None
    #: Where the search bot's playouts stop and how they are scored (``None``: at the end of the game).
    rollout_horizon: Horizon | None = None
    #: Observation feature sets a trained policy may take beside its observation (:mod:`parlour.baselines.features`).
    features: tuple[Features, ...] = ()
    #: The game's benchmark scenario in each published scenario set, by version.
    benchmark: Mapping[str, BenchmarkTable] = field(default_factory=dict)
    #: Analyses of recorded games this game offers: name -> module (named, not imported: the analyses live on the
    #: training side; :mod:`parlour.training.analyses` says what such a module offers), e.g. Lady Alice's accusations.
    analyses: Mapping[str, str] = field(default_factory=dict)
