"""Observation features: named functions of one seat's observation that a trained policy takes beside it.

A feature set is computed from the observation alone -- the same vector the seat's bots decode -- or, where it says
so (``uses_mask``), from the observation and the action mask, so a policy that uses one still plays through
``act(observation, action_mask, rng)`` and can depend on nothing its seat cannot know: the hidden-information audit
of the env covers both by construction. A policy file names its feature sets in its
``network`` entry (``"features": [NAME, …]``); loading looks the names up here, in the package, never in the file,
so a file cannot bring code with it.

A network may also read only some fields of the observation (``ppo.observation_fields``, ``network.observation_fields``
in a policy file): a feature set that summarises a long history -- Lady Alice's posterior over solutions sums up
its record of every suspicion -- makes the raw record something a network overfits to rather than learns from.

Each game declares its sets in its :class:`~parlour.baselines.spec.GameSpec` (``features``);
:mod:`parlour.baselines.registry` collects them (``feature_sets``, ``lookup``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Features:
    """A named feature set: ``compute(observation)`` (``compute(observation, action_mask)`` with ``uses_mask``)
    returns ``size`` float32 values for any env in ``games``."""

    name: str
    games: tuple[str, ...]
    size: int
    compute: Callable[..., np.ndarray]
    doc: str = ""
    uses_mask: bool = False


def size(features: Sequence[Features]) -> int:
    return sum(f.size for f in features)


def field_index(env_name: str, num_players: int, options: dict[str, Any], fields: Sequence[str]) -> np.ndarray | None:
    """The positions in the observation of the named layout fields (in the layout's order), for the env
    ``env_name`` at that table; ``None`` (the whole observation) when ``fields`` is empty. An unknown name raises
    ``ValueError`` naming the fields the observation has."""
    if not fields:
        return None
    from parlour.envs import make

    layout = make(env_name, num_players=num_players, **options).unwrapped.observation_layout
    unknown = [f for f in fields if f not in layout.slices]
    if unknown:
        raise ValueError(
            f"unknown observation field(s) {unknown} for {env_name}: expected names from {list(layout.slices)}"
        )
    if len(set(fields)) != len(fields):
        raise ValueError(f"observation fields {list(fields)} name a field twice")
    every = np.arange(layout.size)
    return np.concatenate([every[layout[f.name]] for f in layout.fields if f.name in fields])


def with_features(
    features: Sequence[Features],
    observation: np.ndarray,
    keep: np.ndarray | None = None,
    action_mask: np.ndarray | None = None,
) -> np.ndarray:
    """The policy network's input: the observation (only its positions ``keep``, from :func:`field_index`, when
    given) followed by every feature set's values, which are computed from the whole observation (and the action
    mask, for a set that uses it: one that does raises ``ValueError`` without it)."""
    if not features and keep is None:
        return observation
    parts = [np.asarray(observation if keep is None else observation[keep], np.float32)]
    for f in features:
        if f.uses_mask and action_mask is None:
            raise ValueError(f"feature set {f.name!r} reads the action mask: pass action_mask")
        raw = f.compute(observation, np.asarray(action_mask, bool)) if f.uses_mask else f.compute(observation)
        values = np.asarray(raw, np.float32)
        if values.shape != (f.size,):
            raise ValueError(f"feature set {f.name!r} returned shape {values.shape}, expected ({f.size},)")
        parts.append(values)
    return np.concatenate(parts)
