"""The bots' registry: every game's :class:`~parlour.baselines.spec.GameSpec` (``SPEC`` in its bots module
``parlour.baselines.<game>``), keyed by the game's declaration (:mod:`parlour.envs.declaration`), and what is read
from the specs by name (the feature sets). Below the bots' other modules that look a game up (the search bot, policy
files, the batched bots): it imports the game modules, and they import nothing that imports it."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Sequence

from parlour.baselines.features import Features
from parlour.baselines.spec import GameSpec
from parlour.envs import ENVIRONMENTS, GAMES, game_of


def game_name(env_name: str) -> str:
    """``lady_alice_v0`` -> ``lady_alice``: the name of the game the env id belongs to (its declaration's,
    :func:`parlour.envs.game_of`): its packages ``parlour.envs.<game>`` and ``parlour.baselines.<game>``."""
    return game_of(env_name).name


def _declarations() -> dict[str, GameSpec]:
    """Every registered game's :class:`~parlour.baselines.spec.GameSpec` (``SPEC`` in its bots module
    ``parlour.baselines.<game>``, if it has one), by game name."""
    out: dict[str, GameSpec] = {}
    for game in GAMES.values():
        if importlib.util.find_spec(f"parlour.baselines.{game.name}") is not None:
            spec = importlib.import_module(f"parlour.baselines.{game.name}").SPEC
            if not isinstance(spec, GameSpec) or spec.game is not game:
                raise TypeError(f"parlour.baselines.{game.name}.SPEC must be the GameSpec of {game.name!r}")
            out[game.name] = spec
    return out


#: Every game's declaration, by game name: the one registry the rest of Parlour reads.
GAME_SPECS: dict[str, GameSpec] = _declarations()


def game_spec(env_name: str) -> GameSpec | None:
    """The declaration of the game ``env_name`` belongs to (``None`` for an env without bots)."""
    if env_name not in ENVIRONMENTS:
        return None
    spec = GAME_SPECS.get(game_name(env_name))
    return spec if spec is not None and env_name in spec.env_ids else None


def feature_sets() -> dict[str, Features]:
    """Every feature set the games declare, by name."""
    return {f.name: f for g in GAME_SPECS.values() for f in g.features}


def lookup(names: Sequence[str], env_name: str) -> tuple[Features, ...]:
    """The feature sets ``names`` for ``env_name``; an unknown name, or one for another game, raises ``ValueError``
    naming what is allowed."""
    known = feature_sets()
    allowed = sorted(n for n, f in known.items() if env_name in f.games)
    out = []
    for name in names:
        if name not in known or env_name not in known[name].games:
            raise ValueError(f"unknown feature set {name!r} for {env_name}: expected one of {allowed}")
        out.append(known[name])
    return tuple(out)
