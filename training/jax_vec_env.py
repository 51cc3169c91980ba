"""``train.vec_env: jax``: a batch of games on a JAX core as one vector env, for the existing learners.

:class:`JaxVecEnv` is a Gymnasium ``VectorEnv`` and :class:`JaxSB3VecEnv` an SB3 ``VecEnv`` (with the
``action_masks`` MaskablePPO reads) over :class:`parlour.envs.jax_core.single_seat.SingleSeat`: one learning seat per
game, the batched bots of :mod:`parlour.baselines.jax_bots` in the other seats, autoreset, and the reward
attribution of :class:`parlour.training.single_agent.SingleAgentEnv` (everything the learner earned since its last
move). One jitted, vmapped call steps every game; the learner's network stays where it is.

What it cannot do, and refuses in the config's checks: opponents without a batched bot (trained policies,
snapshots of the learner, the expert), feature sets (computed by scalar bots) and a fixed subset of observation
fields.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np

#: ``train.vec_env`` value that selects this env.
JAX_VEC_ENV = "jax"


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
        import jax

        from parlour.baselines.jax_bots import bot
        from parlour.envs.jax_core import make_core
        from parlour.envs.jax_core.single_seat import SingleSeat

        self.core = make_core(env_id, num_players, **options)
        pool = [bot(name, env_id) for name in opponents]
        seat = SingleSeat(self.core, pool, learner_seat=learner_seat, opponent_draw=opponent_draw)
        self.num_envs = num_envs
        self._reset = jax.jit(jax.vmap(seat.reset))
        self._step = jax.jit(seat.step_batch)
        self._key = jax.random.PRNGKey(seed)
        self.state: Any = None
        self.mask = np.zeros((num_envs, self.core.num_actions), bool)

    def reset(self, seed: int | None = None) -> np.ndarray:
        import jax

        if seed is not None:
            self._key = jax.random.PRNGKey(seed)
        self._key, sub = jax.random.split(self._key)
        self.state, obs, mask = self._reset(jax.random.split(sub, self.num_envs))
        self.mask = np.asarray(mask, bool)
        return np.asarray(obs, np.float32)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, ...]:
        import jax.numpy as jnp

        legal = self.mask[np.arange(self.num_envs), actions]
        if not legal.all():
            k = int(np.flatnonzero(~legal)[0])
            raise ValueError(
                f"game {k} of the batch: action {int(actions[k])} is illegal; the legal actions are "
                f"{np.flatnonzero(self.mask[k]).tolist()}"
            )
        t = self._step(self.state, jnp.asarray(actions, jnp.int32))
        self.state = t.state
        self.mask = np.asarray(t.mask, bool)
        return (
            np.asarray(t.observation, np.float32),
            np.asarray(t.reward, np.float32),
            np.asarray(t.terminated, bool),
            np.asarray(t.truncated, bool),
            np.asarray(t.final_observation, np.float32),
        )


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
        obs = self._batch.reset(seed if isinstance(seed, int) else None)
        return obs, {"action_mask": self._batch.mask.copy()}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        obs, reward, terminated, truncated, final = self._batch.step(np.asarray(actions))
        return obs, reward, terminated, truncated, {"action_mask": self._batch.mask.copy(), "final_obs": final}

    def action_masks(self) -> np.ndarray:
        return self._batch.mask.copy()


class _SB3Methods:
    """SB3's ``VecEnv`` methods over :class:`_Batch` (episodes restart inside ``step``, as SB3 expects); mixed into
    SB3's base class by :func:`sb3_vec_env`, so that importing this module needs no SB3."""

    num_envs: int

    def __init__(self, env_id: str, num_envs: int, **kwargs: Any) -> None:
        self._batch = _Batch(env_id, num_envs, **kwargs)
        observation_space, action_space = _spaces(self._batch.core)
        super().__init__(num_envs, observation_space, action_space)  # type: ignore[call-arg]  # SB3's VecEnv
        self._actions = np.zeros(num_envs, np.int64)
        self._seed: int | None = None

    def reset(self) -> np.ndarray:
        obs = self._batch.reset(self._seed)
        self._seed = None
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        obs, reward, terminated, truncated, final = self._batch.step(self._actions)
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for k in np.flatnonzero(dones):
            infos[k] = {"terminal_observation": final[k], "TimeLimit.truncated": bool(truncated[k])}
        return obs, reward, dones, infos

    def seed(self, seed: int | None = None) -> Sequence[None | int]:
        self._seed = seed
        return [seed] * self.num_envs

    def action_masks(self) -> np.ndarray:
        return self._batch.mask.copy()

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
