"""A game's declaration on the bots' side: one frozen :class:`GameSpec` per game, in its bots module as ``SPEC``.

:mod:`parlour.baselines.registry` registers every game's spec in one place (``GAME_SPECS``, one per registered game
declaration that has a bots module); everything else -- the bot registry, the search bot's playouts,
the feature sets, the benchmark scenarios, the batched bots -- reads the specs from there. A new game is its env
files (with its declaration), its bots module with its ``SPEC``, its configs and its tests: nothing else to edit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from parlour.envs.declaration import env_ids

if TYPE_CHECKING:
    from parlour.baselines.base import Policy
    from parlour.baselines.features import Features
    from parlour.envs.declaration import Game


#: A playout policy on a rules state: ``(state, u) -> action`` with ``u`` uniform in [0, 1).
RolloutPolicy = Callable[[Any, float], int]


@dataclass(frozen=True)
class Horizon:
    """A game whose playouts stop after ``steps`` and are then scored by ``finish(state)`` (per-seat rewards):
    for games that can run long before anybody is rewarded."""

    steps: int
    finish: Callable[[Any], Sequence[float] | None]


@dataclass(frozen=True)
class BenchmarkTable:
    """A game's scenario in one published scenario set (:mod:`parlour.training.scenarios`): the player count, the
    opponents (one table each: the policy in one seat, the opponent in all the others) and the deals."""

    num_players: int
    opponents: tuple[str, ...]
    deals: int


@dataclass(frozen=True)
class GameSpec:
    """What a game declares beside its bots, keyed by the game's own declaration (:mod:`parlour.envs.declaration`)."""

    #: The game's declaration (``GAME`` in ``parlour.envs.<game>``): its name, versions and players.
    game: Game
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
    #: The module of its batched (jittable) bots (:mod:`parlour.baselines.jax_bots`), or ``None``: it has none.
    jax_bots: str | None = None

    @property
    def name(self) -> str:
        """The game's name: its env package ``parlour.envs.<name>`` and bots module ``parlour.baselines.<name>``."""
        return self.game.name

    @property
    def env_ids(self) -> tuple[str, ...]:
        """The env ids it covers (newest version first): the declaration's."""
        return env_ids(self.game)
