"""Ray RLlib's PPO with action masking (:mod:`parlour.training.rllib_train`): parameter-shared self-play or bot
tables, local or on a Ray cluster. What only the SB3 trainer offers is refused here, before a run starts."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from parlour.training.config import TrainConfig
    from parlour.training.trainers import Session


class RLlibTrainer:
    name = "rllib"

    def check(self, cfg: TrainConfig) -> None:
        from parlour.training.config import ConfigError

        sb3_only = [
            ("ppo.observation_fields", bool(cfg.ppo.observation_fields)),
            ("ppo.features", bool(cfg.ppo.features)),
            ("pretrain.teacher", bool(cfg.pretrain.teacher)),
            (f"opponent_draw: {cfg.opponent_draw}", cfg.opponent_draw != "seat"),
        ]
        for what, used in sb3_only:
            if used:
                raise ConfigError(f"{what} is supported with trainer: sb3 only (this config has trainer: {self.name})")

    def train(self, cfg: TrainConfig, run: Path, session: Session) -> dict[str, Any]:
        from parlour.training.rllib_train import train_rllib

        return train_rllib(cfg, run, session)
