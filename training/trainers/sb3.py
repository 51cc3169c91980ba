"""The default trainer: sb3-contrib's MaskablePPO on one learning seat (:class:`~parlour.training.single_agent.SingleAgentEnv`),
with behaviour cloning, feature sets, self-play snapshots and every opponent draw."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from parlour.training.config import TrainConfig
    from parlour.training.trainers import Session


class SB3Trainer:
    name = "sb3"

    def check(self, cfg: TrainConfig) -> None:
        from parlour.training.config import SELF_PLAY, ConfigError

        if cfg.opponents == [SELF_PLAY]:
            raise ConfigError(
                "opponents: 'self' needs at least one other opponent to play before the first snapshot (with "
                "trainer: rllib, opponents: [self] is parameter-shared self-play)"
            )

    def train(self, cfg: TrainConfig, run: Path, session: Session) -> dict[str, Any]:
        from parlour.training.train import train_sb3

        return train_sb3(cfg, run, session)
