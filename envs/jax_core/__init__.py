"""Batched, jittable cores of the games in JAX (``pip install parlour[jax]``): the same rules as the scalar envs,
as pure functions of a fixed-shape state, for ``jax.vmap``/``jax.jit`` over thousands of games at once.

The folder is ``jax_core``, never ``jax``: a folder named ``jax`` on the import path would shadow the library.

Each game's module (``parlour.envs.jax_core.<game>``) offers ``make_core(num_players, **options) -> Core`` for every
player count and rule keyword its scalar env supports (a keyword it cannot express is refused by name);
``from_rules(rules_state, core) -> State``: the JAX state of a scalar env's rules state (it is how the lock-step
checks give both implementations the same deal); ``deal_number(rules_state)`` and ``DEAL_FIELDS``: which deal of its
episode a scalar state is on, and the state fields that hold a deal (copied into the core when the scalar env deals
anew mid-episode); ``VARIANTS``: rule-keyword sets the lock-step checks cover besides the defaults. A :class:`Core`
bundles:

- ``init(key) -> State``: a new game, every random draw from ``key``;
- ``step(state, action) -> State``: one action of the seat to act (``state.current_player``), with per-seat
  ``state.rewards`` of that step and ``state.terminated``; a step of a finished game changes nothing;
- ``observe(state, seat) -> float32[obs_size]``: exactly the scalar env's observation vector for ``seat``;
- ``legal_mask(state) -> bool[num_actions]``: the acting seat's legal actions (all False once the game is over);
- ``state_vector(state) -> float32[state_size]``: the scalar env's ``state()`` vector.

The lock-step check (:mod:`parlour.envs.jax_core.lockstep`) plays the scalar env and the core side by side.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, NamedTuple


def _cores() -> dict[str, str]:
    from parlour.envs import GAMES
    from parlour.envs.declaration import env_id

    return {env_id(g, v): v.core for g in GAMES.values() for v in g.versions if v.core is not None}


#: Env id -> the module of its JAX core: each game's declaration names its versions' (``Version.core``).
CORES: dict[str, str] = _cores()


class Core(NamedTuple):
    """One game's functional core at one table (player count and rule keywords fixed)."""

    env_id: str
    num_players: int
    num_actions: int
    obs_size: int
    state_size: int
    init: Callable[[Any], Any]
    step: Callable[[Any, Any], Any]
    observe: Callable[[Any, Any], Any]
    legal_mask: Callable[[Any], Any]
    state_vector: Callable[[Any], Any]
    #: ``hindsight(state, seat) -> float32[K]``: what the end-of-game reveal shows ``seat`` (every seat receives
    #: it: the scalar env's ``outcome()``), from ``seat``'s frame, read on a finished game's state; ``None``: the core
    #: has none. Training targets only (the jitted trainer's belief heads): never an input of a policy.
    hindsight: Callable[[Any, Any], Any] | None = None
    #: The parts of ``hindsight``'s vector in order: ``(name, size, kind)``, kind ``"class"`` (one-hot: exactly one
    #: entry 1) or ``"binary"`` (each entry a probability in [0, 1] on its own).
    hindsight_blocks: tuple[tuple[str, int, str], ...] = ()
    #: ``winners(state) -> bool[num_players]``: the seats that won a finished game, whatever the ``reward`` keyword
    #: pays (the scalar rules' ``winners``); ``None``: the core has none (its win reward tells them).
    winners: Callable[[Any], Any] | None = None
    #: ``settled(state, seat) -> (bool, float32)``: whether ``seat`` will not act again in a game still going and
    #: every reward left to it is known (Lady Alice: excluded by a false accusation), and that reward, paid at the
    #: game's end, which is then a termination. ``None``: no seat is settled early. The jitted trainer ends such a
    #: learner's episode there (``SingleSeat(settle=True)``): the learner's transitions are the same, the rest of the
    #: game, which it has no move in, is not played.
    settled: Callable[[Any, Any], Any] | None = None


#: The :class:`Core` fields every core's module defines as module-level functions taking its ``Params`` first.
CORE_FUNCTIONS = ("init", "step", "observe", "legal_mask", "state_vector", "hindsight")


def bound(params: Any, module: Any) -> dict[str, Callable[..., Any]]:
    """The :data:`CORE_FUNCTIONS` of a core's ``module``, each with its table's ``params`` bound first
    (``functools.partial``): the :class:`Core` fields of a core written pgx-style, over a static parameters tuple."""
    import functools

    return {name: functools.partial(getattr(module, name), params) for name in CORE_FUNCTIONS}


def unless_finished(state: Any, new: Any) -> Any:
    """``new`` where ``state``'s game is still on, else ``state`` unchanged and paying nothing: every core's step
    ends with it (a finished game's step changes nothing)."""
    import jax
    import jax.numpy as jnp

    finished = state.terminated | state.truncated
    old = state._replace(rewards=jnp.zeros_like(state.rewards))
    return jax.tree.map(lambda a, b: jnp.where(finished, a, b), old, new)


def reset_where(init: Callable[[Any], Any], states: Any, keys: Any, done: Any, capacity: int | None = None) -> Any:
    """A batch of games (leading axis ``B``) with every game where ``done`` replaced by ``init`` of its own key --
    exactly ``tree.map(where(done, vmap(init)(keys), states))`` -- but dealing only the finished games: a batched
    loop that deals a new game for every game at every step (the plain ``where``) spends most of its time on
    deals it throws away, since only about ``B`` / (a game's length) games end per step.

    Up to ``capacity`` finished games (default ``B // 8``, at least 1) are gathered, dealt and scattered back; a
    step where more games ended (all games started together, say) deals the whole batch instead, and a step where
    none ended deals nothing (both branches of a ``lax.cond`` at the batch's level, not under ``vmap``)."""
    import jax
    import jax.numpy as jnp

    batch = done.shape[0]
    cap = max(1, batch // 8) if capacity is None else min(max(1, capacity), batch)

    def every() -> Any:
        fresh = jax.vmap(init)(keys)
        return jax.tree.map(lambda f, s: jnp.where(done.reshape((batch,) + (1,) * (s.ndim - 1)), f, s), fresh, states)

    def some() -> Any:
        rows = jnp.nonzero(done, size=cap, fill_value=batch)[0]  # the finished games, then "none" (B) as filler
        fresh = jax.vmap(init)(jax.tree.map(lambda k: k[jnp.minimum(rows, batch - 1)], keys))
        return jax.tree.map(lambda s, f: s.at[rows].set(f, mode="drop"), states, fresh)

    count = done.sum()
    return jax.lax.cond(count == 0, lambda: states, lambda: jax.lax.cond(count <= cap, some, every))


def pad_rows(x: Any, rows: int) -> Any:
    """``x`` padded with zero rows to ``rows`` rows (per-seat arrays to the env's largest table)."""
    import jax.numpy as jnp

    return jnp.zeros((rows, *x.shape[1:]), x.dtype).at[: x.shape[0]].set(x)


def module(env_id: str) -> Any:
    """The module of ``env_id``'s JAX core (``ValueError`` naming those that have one)."""
    if env_id not in CORES:
        raise ValueError(f"no JAX core for {env_id!r}: expected one of {sorted(CORES)}")
    return importlib.import_module(CORES[env_id])


def make_core(env_id: str, num_players: int | None = None, **options: Any) -> Core:
    """The JAX core of ``env_id`` for ``num_players`` (default: the scalar env's) and rule keywords ``options``."""
    mod = module(env_id)
    if num_players is None:
        from parlour.envs import game_of

        num_players = game_of(env_id).default_players
    core: Core = mod.make_core(num_players, **options)
    return core
