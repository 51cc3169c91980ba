"""The jitted JAX trainer (:mod:`parlour.training.jax_ppo`): PPO with action masking, rollouts on the game's JAX core
with batched bots, all in one compiled update. What it cannot do is refused here, before a run starts."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from parlour.training.config import TrainConfig


class JaxTrainer:
    name = "jax"
    implementation = "parlour.training.jax_ppo:train_jax"

    def check(self, cfg: TrainConfig) -> None:
        from parlour.training.config_base import SELF_PLAY, SNAPSHOTS, ConfigError

        for what, used in (
            ("ppo.observation_fields", bool(cfg.ppo.observation_fields)),
            ("ppo.features", bool(cfg.ppo.features)),
            ("pretrain.teacher", bool(cfg.pretrain.teacher)),
        ):
            if used:
                raise ConfigError(f"{what} is not supported with trainer: jax (the core's observation is the input)")
        if (cfg.ppo.n_steps * cfg.train.n_envs) % cfg.ppo.batch_size:
            raise ConfigError(
                f"trainer: jax takes whole minibatches: ppo.batch_size={cfg.ppo.batch_size} must divide "
                f"ppo.n_steps × train.n_envs = {cfg.ppo.n_steps * cfg.train.n_envs}"
            )
        try:
            from parlour.baselines.jax_bots import bots
            from parlour.envs.jax_core import make_core
        except ImportError as exc:
            raise ConfigError(f"trainer: jax needs JAX and Optax (pip install parlour[jax]): {exc}") from None
        try:
            make_core(cfg.game.name, cfg.game.num_players, **cfg.game.options)
        except ValueError as exc:
            raise ConfigError(f"trainer: jax: {exc}") from None
        batched = sorted(bots(cfg.game.name))
        missing = [o for o in cfg.opponents if o not in (SELF_PLAY, SNAPSHOTS) and o not in batched]
        if missing:
            raise ConfigError(
                f"trainer: jax plays opponents as batched bots, and {missing} have none: expected opponents from "
                f"{[*batched, SELF_PLAY, SNAPSHOTS]} (trained policies and the expert play in the scalar env only)"
            )
        if cfg.opponents.count(SNAPSHOTS) > 1:
            raise ConfigError(
                f"opponents lists {SNAPSHOTS!r} {cfg.opponents.count(SNAPSHOTS)} times: list it once (it stands for "
                f"self_play.max_snapshots={cfg.self_play.max_snapshots} entries, one per snapshot)"
            )
