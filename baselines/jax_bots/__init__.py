"""Batched opponents: the scripted bots as jittable functions ``(observation, action_mask, key) -> action`` of one
seat's observation vector (``jax.vmap`` batches them), for the JAX cores (:mod:`parlour.envs.jax_core`), the JAX
vector env and the jitted trainer (``pip install parlour[jax]``).

Each chooses as its scalar bot does on the same observation: the same action where the scalar bot is deterministic,
and, where it breaks ties with its own generator, an action of the same tied set (uniformly, from ``key``).
:func:`bot` looks one up by the scalar bot's name; :data:`BOTS` lists what each game has. A bot that needs more than
fixed-size array code cannot be listed here (each game's module says which, and why).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import jax
import jax.numpy as jnp

#: ``(observation, action_mask, key) -> action``.
JaxBot = Callable[[jax.Array, jax.Array, jax.Array], jax.Array]

#: Tolerance of a tie between two scores (the scalar ``choose_best``'s).
TIE = 1e-9


def _legal(observation: jax.Array, action_mask: jax.Array) -> jax.Array:
    return action_mask.astype(bool)


def best(scores: jax.Array, action_mask: jax.Array) -> jax.Array:
    """The legal actions with the highest score (the set the scalar ``choose_best`` draws from)."""
    s = jnp.where(action_mask, scores, -jnp.inf)
    return (s >= jnp.max(s) - TIE) & action_mask


def pick(choices: jax.Array, key: jax.Array) -> jax.Array:
    """One of the actions marked in ``choices``, uniformly."""
    return jax.random.categorical(key, jnp.where(choices, 0.0, -jnp.inf)).astype(jnp.int32)


def from_choices(choices: Callable[[jax.Array, jax.Array], jax.Array]) -> JaxBot:
    """The bot that plays uniformly among ``choices(observation, action_mask)`` (a boolean vector over actions)."""

    def act(observation: jax.Array, action_mask: jax.Array, key: jax.Array) -> jax.Array:
        return pick(choices(observation, action_mask), key)

    act.choices = choices  # type: ignore[attr-defined]  # the tied set, for the tests against the scalar bot
    return act


def bots(env_id: str) -> dict[str, JaxBot]:
    """Every batched bot that can play ``env_id``, by the scalar bot's name (``random`` for every game, then those of
    the module its game's spec names: :attr:`parlour.baselines.spec.GameSpec.jax_bots`)."""
    from parlour.baselines import game_spec

    found: dict[str, JaxBot] = {"random": random_bot}
    spec = game_spec(env_id)
    if spec is not None and spec.jax_bots is not None:
        found.update(importlib.import_module(spec.jax_bots).BOTS)
    return found


def bot(name: str, env_id: str) -> JaxBot:
    """The batched bot ``name`` for ``env_id`` (``ValueError`` naming those there are)."""
    known = bots(env_id)
    if name not in known:
        raise ValueError(f"no batched bot {name!r} for {env_id}: expected one of {sorted(known)}")
    return known[name]


#: Uniform over the legal actions (the scalar ``random``).
random_bot: JaxBot = from_choices(_legal)
