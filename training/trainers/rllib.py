"""Ray RLlib's PPO with action masking (:mod:`parlour.training.rllib_train`): parameter-shared self-play or bot
tables, local or on a Ray cluster. What only the SB3 trainer offers is refused here, before a run starts."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from parlour.training.config import TrainConfig


class RLlibTrainer:
    name = "rllib"
    implementation = "parlour.training.rllib_train:train_rllib"

    def check(self, cfg: TrainConfig) -> None:
        from parlour.training.config_base import ConfigError

        sb3_only = [
            ("ppo.observation_fields", bool(cfg.ppo.observation_fields)),
            ("ppo.features", bool(cfg.ppo.features)),
            ("pretrain.teacher", bool(cfg.pretrain.teacher)),
            (f"opponent_draw: {cfg.opponent_draw}", cfg.opponent_draw != "seat"),
        ]
        for what, used in sb3_only:
            if used:
                raise ConfigError(f"{what} is supported with trainer: sb3 only (this config has trainer: {self.name})")
