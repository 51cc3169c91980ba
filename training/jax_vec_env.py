"""``train.vec_env: jax``: a batch of games on a JAX core as one vector env, for the existing learners.

:class:`JaxVecEnv` is a Gymnasium ``VectorEnv`` and :class:`JaxSB3VecEnv` an SB3 ``VecEnv`` (with the
``action_masks`` MaskablePPO reads) over :class:`parlour.envs.jax_core.single_seat.SingleSeat`: one learning seat per
game, the batched bots of :mod:`parlour.baselines.jax_bots` in the other seats, autoreset, and the reward
attribution of :class:`parlour.training.single_agent.SingleAgentEnv` (everything the learner earned since its last
move). One jitted, vmapped call steps every game; the learner's network stays where it is.

What it cannot do, and refuses in the config's checks: opponents without a batched bot (trained policies,
snapshots of the learner, the expert), feature sets (computed by scalar bots) and a fixed subset of observation
fields.

What it refuses at run time, each with one ``ValueError`` line and before anything changes: actions that are not an
integer array of shape ``(num_envs,)`` (floats, even integral ones, bools, strings, objects, another shape), an action
outside ``0..num_actions-1`` (``-1`` included: NumPy would wrap it to the last action) or one its game's mask forbids;
seeds that are not ``None`` or an integer in ``[0, 2**63)`` (NumPy integers are the equal Python int: the same games).
:meth:`JaxSB3VecEnv.get_state` and ``set_state`` save and restore the whole batch, for an exact resume.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np

from parlour.envs.core import check_seed

#: ``train.vec_env`` value that selects this env.
JAX_VEC_ENV = "jax"

#: The ``format`` of :meth:`_Batch.get_state`'s dict.
STATE_FORMAT = "parlour-jax-vec-env-state/1"


def _prng_key(seed: int) -> Any:
    """The batch's key for a checked seed in ``[0, 2**63)``. ``jax.random.PRNGKey`` keeps only a seed's low 32 bits
    while 64-bit mode is off (``2**32`` would deal the games of ``0``): the high half is folded in where it is not zero,
    so a seed below ``2**32`` keeps the key it always had."""
    import jax

    key = jax.random.PRNGKey(seed & 0xFFFFFFFF)
    return jax.random.fold_in(key, seed >> 32) if seed >> 32 else key


@functools.lru_cache(maxsize=8)
def _compiled(
    env_id: str,
    num_players: int,
    options: tuple[tuple[str, type, Any], ...],
    opponents: tuple[str, ...],
    learner_seat: int | None,
    opponent_draw: str,
) -> tuple[Any, Any, Any]:
    """The core and the jitted reset and step of one table: shared by every batch of the same arguments, so a second
    env (an evaluation env, one rebuilt to resume) does not compile them again."""
    import jax

    from parlour.baselines.jax_bots import bot
    from parlour.envs.jax_core import make_core
    from parlour.envs.jax_core.single_seat import SingleSeat

    core = make_core(env_id, num_players, **{k: v for k, _, v in options})
    pool = [bot(name, env_id) for name in opponents]
    seat = SingleSeat(core, pool, learner_seat=learner_seat, opponent_draw=opponent_draw)
    return core, jax.jit(jax.vmap(seat.reset)), jax.jit(seat.step_batch)


def _described(actions: Any) -> str:
    """How a malformed action batch is named in an error: its dtype and shape, or its type."""
    if isinstance(actions, np.ndarray):
        return f"a {actions.dtype} array of shape {actions.shape}"
    return f"{type(actions).__name__} {actions!r}"[:80]


class _Batch:
    """The jitted, vmapped single-seat env of ``num_envs`` games, and its state."""

    def __init__(
        self,
        env_id: str,
        num_envs: int,
        *,
        num_players: int,
        options: dict[str, Any],
        opponents: Sequence[str],
        learner_seat: int | None,
        opponent_draw: str,
        seed: int,
    ) -> None:
        checked = check_seed("JaxVecEnv", seed)
        if checked is None:
            raise ValueError("JaxVecEnv: seed=None is not valid: expected an integer in [0, 2**63)")
        # each keyword's type is part of the key: True and 1 hash alike but are different rule values
        args = (env_id, num_players, tuple((k, type(v), v) for k, v in sorted(options.items())), tuple(opponents))
        build: Callable[..., tuple[Any, Any, Any]] = _compiled
        try:
            hash(args)
        except TypeError:  # a keyword that is not hashable (a list) only misses the cache
            build = _compiled.__wrapped__
        self.core, self._reset, self._step = build(*args, learner_seat, opponent_draw)
        self.num_envs = num_envs
        self._key = _prng_key(checked)
        self.state: Any = None
        self.mask = np.zeros((num_envs, self.core.num_actions), bool)
        self._shapes: tuple[Any, list[Any]] | None = None

    def reset(self, seed: int | None = None) -> np.ndarray:
        import jax

        if seed is not None:
            self._key = _prng_key(seed)
        self._key, sub = jax.random.split(self._key)
        self.state, obs, mask = self._reset(jax.random.split(sub, self.num_envs))
        self.mask = np.asarray(mask, bool)
        return np.asarray(obs, np.float32)

    def check_actions(self, actions: Any) -> np.ndarray:
        """``actions`` as an ``int32`` array if it is one legal action per game; else a one-line ``ValueError``: what
        was expected and given for a malformed batch, or the game's index in the batch, its action and its legal
        actions (``ValueError``, as the scalar env raises for an illegal action)."""
        n = self.core.num_actions
        expected = f"an integer array of shape ({self.num_envs},), one action in 0..{n - 1} per game"
        try:
            array = np.asarray(actions)
        except (ValueError, TypeError):  # ragged nested lists
            raise ValueError(f"actions must be {expected}; got {_described(actions)}") from None
        # bool is no integer dtype to NumPy; floats are refused even when integral, as the scalar env refuses 3.0
        if array.shape != (self.num_envs,) or not np.issubdtype(array.dtype, np.integer):
            raise ValueError(f"actions must be {expected}; got {_described(array)}")
        inside = (array >= 0) & (array < n)
        legal = inside.copy()
        legal[inside] = self.mask[np.flatnonzero(inside), array[inside]]
        if not legal.all():
            k = int(np.flatnonzero(~legal)[0])
            what = "is illegal" if inside[k] else f"is not an action (expected 0..{n - 1})"
            raise ValueError(
                f"game {k} of the batch: action {int(array[k])} {what}; the legal actions are "
                f"{np.flatnonzero(self.mask[k]).tolist()}"
            )
        return array.astype(np.int32)

    def step(self, actions: Any) -> tuple[np.ndarray, ...]:
        import jax.numpy as jnp

        if self.state is None:
            raise ValueError("JaxVecEnv: step() before reset(); call reset() first")
        t = self._step(self.state, jnp.asarray(self.check_actions(actions)))
        self.state = t.state
        self.mask = np.asarray(t.mask, bool)
        return (
            np.asarray(t.observation, np.float32),
            np.asarray(t.reward, np.float32),
            np.asarray(t.terminated, bool),
            np.asarray(t.truncated, bool),
            np.asarray(t.final_observation, np.float32),
        )

    # ------------------------------------------------------------------------------------------- save, restore
    def get_state(self) -> dict[str, Any]:
        """Everything the next resets and steps depend on, as JSON values and NumPy arrays (see ``set_state``)."""
        import jax

        if self.state is None:
            raise ValueError("JaxVecEnv.get_state(): the batch has no state before reset(); call reset() first")
        return {
            "format": STATE_FORMAT,
            "num_envs": self.num_envs,
            "leaves": [np.array(x) for x in jax.tree.leaves(self.state)],  # tree order, dtypes kept
            "key": np.array(self._key),
            "mask": self.mask.copy(),
        }

    def _template(self) -> tuple[Any, list[Any]]:
        """The tree structure and the leaves' shapes and dtypes of this batch's state (traced once, never run)."""
        import jax

        if self._shapes is None:
            keys = jax.ShapeDtypeStruct((self.num_envs, *self._key.shape), self._key.dtype)
            shapes = jax.eval_shape(self._reset, keys)[0]
            self._shapes = (jax.tree.structure(shapes), jax.tree.leaves(shapes))
        return self._shapes

    def set_state(self, state: Any) -> None:
        """Restore a :meth:`get_state` dict of a batch built with the same arguments; a ``ValueError`` naming what
        does not fit, before anything changes."""
        import jax
        import jax.numpy as jnp

        where = "JaxVecEnv.set_state()"
        if not isinstance(state, dict):
            raise ValueError(f"{where}: expected the dict of get_state(), got {type(state).__name__}")
        missing = sorted({"format", "num_envs", "leaves", "key", "mask"} - set(state))
        if missing:
            raise ValueError(f"{where}: the state has no {missing}; expected the dict of get_state()")
        if state["format"] != STATE_FORMAT:
            raise ValueError(f"{where}: format {state['format']!r} is not {STATE_FORMAT!r}")
        if state["num_envs"] != self.num_envs:
            raise ValueError(f"{where}: the state is of {state['num_envs']!r} games; this env has {self.num_envs}")
        treedef, shapes = self._template()
        leaves = state["leaves"]
        if not isinstance(leaves, list | tuple) or len(leaves) != len(shapes):
            got = f"{len(leaves)} leaves" if isinstance(leaves, list | tuple) else type(leaves).__name__
            raise ValueError(f"{where}: leaves: expected a list of {len(shapes)} arrays, got {got}")
        expected = [
            (f"leaf {i}", leaf, s.shape, s.dtype) for i, (leaf, s) in enumerate(zip(leaves, shapes, strict=True))
        ]
        expected.append(("key", state["key"], self._key.shape, self._key.dtype))
        expected.append(("mask", state["mask"], self.mask.shape, np.dtype(bool)))
        for name, value, shape, dtype in expected:
            if not isinstance(value, np.ndarray) or value.shape != tuple(shape) or value.dtype != dtype:
                got = f"{value.dtype}{list(value.shape)}" if isinstance(value, np.ndarray) else type(value).__name__
                raise ValueError(f"{where}: {name}: expected a {np.dtype(dtype)}{list(shape)} array, got {got}")
        self.state = jax.tree.unflatten(treedef, [jnp.asarray(x) for x in leaves])
        self._key = jnp.asarray(state["key"])
        self.mask = state["mask"].copy()


def _spaces(core: Any) -> tuple[gymnasium.spaces.Box, gymnasium.spaces.Discrete]:
    return (
        gymnasium.spaces.Box(0.0, 1.0, (core.obs_size,), np.float32),
        gymnasium.spaces.Discrete(core.num_actions),
    )


class JaxVecEnv(gymnasium.vector.VectorEnv):
    """A Gymnasium ``VectorEnv`` of ``num_envs`` games on ``env_id``'s JAX core (see the module docstring). The
    legal masks of the games are ``infos["action_mask"]`` after every reset and step, and :meth:`action_masks`."""

    def __init__(self, env_id: str, num_envs: int, **kwargs: Any) -> None:
        self._batch = _Batch(env_id, num_envs, **kwargs)
        self.num_envs = num_envs
        self.single_observation_space, self.single_action_space = _spaces(self._batch.core)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, num_envs)

    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        if options:
            raise ValueError(f"JaxVecEnv.reset() takes no options (got {sorted(options)})")
        # one seed for the whole batch: a list of per-game seeds (Gymnasium allows one) is refused, not ignored
        obs = self._batch.reset(check_seed("JaxVecEnv.reset()", seed))
        return obs, {"action_mask": self._batch.mask.copy()}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        obs, reward, terminated, truncated, final = self._batch.step(actions)
        return obs, reward, terminated, truncated, {"action_mask": self._batch.mask.copy(), "final_obs": final}

    def action_masks(self) -> np.ndarray:
        return self._batch.mask.copy()

    def get_state(self) -> dict[str, Any]:
        """The whole batch's state (see :meth:`JaxSB3VecEnv.get_state`)."""
        return self._batch.get_state()

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore :meth:`get_state`'s dict (see :meth:`JaxSB3VecEnv.set_state`)."""
        self._batch.set_state(state)


class _SB3Methods:
    """SB3's ``VecEnv`` methods over :class:`_Batch` (episodes restart inside ``step``, as SB3 expects); mixed into
    SB3's base class by :func:`sb3_vec_env`, so that importing this module needs no SB3."""

    num_envs: int

    def __init__(self, env_id: str, num_envs: int, **kwargs: Any) -> None:
        self._batch = _Batch(env_id, num_envs, **kwargs)
        observation_space, action_space = _spaces(self._batch.core)
        self.render_mode = None  # SB3's VecEnv reads it (and warns where it is missing)
        super().__init__(num_envs, observation_space, action_space)  # type: ignore[call-arg]  # SB3's VecEnv
        self._actions: Any = np.zeros(num_envs, np.int64)
        self._seed: int | None = None

    def reset(self) -> np.ndarray:
        obs = self._batch.reset(self._seed)
        self._seed = None
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions  # checked by step_wait, before anything changes

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        obs, reward, terminated, truncated, final = self._batch.step(self._actions)
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for k in np.flatnonzero(dones):
            infos[k] = {"terminal_observation": final[k], "TimeLimit.truncated": bool(truncated[k])}
        return obs, reward, dones, infos

    def seed(self, seed: int | None = None) -> Sequence[None | int]:
        self._seed = check_seed("JaxSB3VecEnv.seed()", seed)
        return [self._seed] * self.num_envs

    def action_masks(self) -> np.ndarray:
        return self._batch.mask.copy()

    def get_state(self) -> dict[str, Any]:
        """The whole batch, for an exact resume: ``{"format", "num_envs", "leaves", "key", "mask", "seed"}`` --
        the leaves of the games' JAX state in tree order and the batch's PRNG key (NumPy arrays of their own dtypes),
        the legal masks, and a seed given to ``seed()`` that the next ``reset()`` has not used yet. JSON values and
        NumPy arrays only (no JAX arrays, no pickled objects)."""
        return {**self._batch.get_state(), "seed": self._seed}

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore :meth:`get_state`'s dict into an env built with the same arguments: the steps after it are those
        that followed ``get_state`` bit for bit. A ``ValueError`` naming what does not fit (shape, dtype, number of
        games, missing entries), before anything changes."""
        seed = check_seed("JaxSB3VecEnv.set_state()", state.get("seed") if isinstance(state, dict) else None)
        self._batch.set_state(state)
        self._seed = seed

    def close(self) -> None:
        pass

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
        if method_name == "action_masks":  # sb3-contrib asks each env for its own mask
            masks = self.action_masks()
            return [masks[i] for i in self._indices(indices)]
        return [getattr(self, method_name)(*args, **kwargs) for _ in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def _indices(self, indices: Any) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        return [indices] if isinstance(indices, int) else list(indices)


def sb3_vec_env(env_id: str, num_envs: int, **kwargs: Any) -> Any:
    """An SB3 ``VecEnv`` over the JAX core (sb3-contrib's MaskablePPO reads its ``action_masks``)."""
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv

    cls = type("JaxSB3VecEnv", (_SB3Methods, VecEnv), {})
    return cls(env_id, num_envs, **kwargs)
