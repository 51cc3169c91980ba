"""Observation features: named functions of one seat's observation that a trained policy takes beside it.

A feature set is computed from the observation alone -- the same vector the seat's bots decode -- so a policy that
uses one still plays through ``act(observation, action_mask, rng)`` and can depend on nothing its seat cannot know:
the hidden-information audit of the env covers it by construction. A policy file names its feature sets in its
``network`` entry (``"features": [NAME, …]``); loading looks the names up here, in the package, never in the file,
so a file cannot bring code with it.

Each game's bots module declares its sets in ``FEATURES`` (a tuple of :class:`Features`); ``parlour.baselines``
collects them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Features:
    """A named feature set: ``compute(observation)`` returns ``size`` float32 values for any env in ``games``."""

    name: str
    games: tuple[str, ...]
    size: int
    compute: Callable[[np.ndarray], np.ndarray]
    doc: str = ""


def registry() -> dict[str, Features]:
    """Every feature set the games declare, by name."""
    from parlour.baselines import GAME_MODULES  # the game modules import this module: look them up late

    return {f.name: f for m in GAME_MODULES.values() for f in getattr(m, "FEATURES", ())}


def lookup(names: Sequence[str], env_name: str) -> tuple[Features, ...]:
    """The feature sets ``names`` for ``env_name``; an unknown name, or one for another game, raises ``ValueError``
    naming what is allowed."""
    known = registry()
    allowed = sorted(n for n, f in known.items() if env_name in f.games)
    out = []
    for name in names:
        if name not in known or env_name not in known[name].games:
            raise ValueError(f"unknown feature set {name!r} for {env_name}: expected one of {allowed}")
        out.append(known[name])
    return tuple(out)


def size(features: Sequence[Features]) -> int:
    return sum(f.size for f in features)


def with_features(features: Sequence[Features], observation: np.ndarray) -> np.ndarray:
    """The observation followed by every feature set's values (the policy network's input)."""
    if not features:
        return observation
    parts = [np.asarray(observation, np.float32)]
    for f in features:
        values = np.asarray(f.compute(observation), np.float32)
        if values.shape != (f.size,):
            raise ValueError(f"feature set {f.name!r} returned shape {values.shape}, expected ({f.size},)")
        parts.append(values)
    return np.concatenate(parts)
