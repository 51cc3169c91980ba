"""The default trainer: sb3-contrib's MaskablePPO on one learning seat (:class:`~parlour.training.single_agent.SingleAgentEnv`),
with behaviour cloning, feature sets, self-play snapshots and every opponent draw."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from parlour.training.config import TrainConfig


class SB3Trainer:
    name = "sb3"
    implementation = "parlour.training.sb3_train:train_sb3"

    def check(self, cfg: TrainConfig) -> None:
        from parlour.training.config_base import SELF_PLAY, ConfigError

        if cfg.opponents == [SELF_PLAY]:
            raise ConfigError(
                "opponents: 'self' needs at least one other opponent to play before the first snapshot (with "
                "trainer: rllib, opponents: [self] is parameter-shared self-play)"
            )
        if cfg.train.vec_env == "jax":
            _check_jax_vec_env(cfg)


def _check_jax_vec_env(cfg: TrainConfig) -> None:
    """``train.vec_env: jax`` plays every game on the game's JAX core with batched bots: refuse what it cannot."""
    from parlour.training.config_base import ConfigError

    try:
        from parlour.baselines.jax_bots import bots
        from parlour.envs.jax_core import make_core
    except ImportError as exc:
        raise ConfigError(f"train.vec_env=jax needs JAX (pip install parlour[jax]): {exc}") from None
    try:
        make_core(cfg.game.name, cfg.game.num_players, **cfg.game.options)
    except ValueError as exc:
        raise ConfigError(f"train.vec_env=jax: {exc}") from None
    batched = sorted(bots(cfg.game.name))
    missing = [o for o in cfg.opponents if o not in batched]
    if missing:
        raise ConfigError(
            f"train.vec_env=jax plays opponents as batched bots, and {missing} have none: expected opponents from "
            f"{batched} (snapshots of the learner, trained policies and the expert play in the scalar env only)"
        )
    for what, used in (("ppo.features", cfg.ppo.features), ("ppo.observation_fields", cfg.ppo.observation_fields)):
        if used:
            raise ConfigError(f"train.vec_env=jax reads the core's observation as it is: {what} must be empty")
