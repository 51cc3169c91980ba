"""Trainers: the libraries that train a policy from a config (``trainer:`` in it), behind one small protocol.

A trainer says which configs it can train (:meth:`Trainer.check`, called by the config's validation with the
trainer-specific refusals kept beside the trainer) and trains one (:meth:`Trainer.train`, called by
:func:`parlour.training.train.train` once the run folder is ready). SB3 (MaskablePPO), RLlib and the jitted JAX
PPO register here; a new trainer is a module with a class like theirs and one line in :func:`_registered`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from parlour.training.config import TrainConfig


@dataclass(frozen=True)
class Session:
    """How one training session runs (the flags of ``parlour train``), as every trainer receives it."""

    #: Continue the run folder from its latest checkpoint.
    resume: bool = False
    #: Show progress bars.
    progress: bool = True
    #: Evaluate the final policy at the config's tables (``parlour baselines`` evaluates every seed itself).
    final_eval: bool = True
    #: Load an SB3 zip checkpoint of an earlier Parlour (unpickling it).
    trust_pickle: bool = False
    #: Stop after behaviour cloning (the distilled track's clone row).
    clone_only: bool = False


class Trainer(Protocol):
    """What :func:`parlour.training.train.train` needs of a trainer."""

    #: The ``trainer:`` value that selects it.
    name: str

    def check(self, cfg: TrainConfig) -> None:
        """Refuse (``ConfigError``, one line) a config this trainer cannot train."""

    def train(self, cfg: TrainConfig, run: Path, session: Session) -> dict[str, Any]:
        """Train into the prepared run folder ``run``; return the run's metrics."""


def _registered() -> dict[str, Trainer]:
    from parlour.training.trainers.jax import JaxTrainer
    from parlour.training.trainers.rllib import RLlibTrainer
    from parlour.training.trainers.sb3 import SB3Trainer

    return {t.name: t for t in (SB3Trainer(), RLlibTrainer(), JaxTrainer())}


#: ``trainer:`` value -> trainer, in the order the messages list them.
TRAINERS: dict[str, Trainer] = _registered()


def trainer_for(name: str) -> Trainer:
    """The trainer registered as ``name`` (``ConfigError`` naming the registered ones otherwise)."""
    from parlour.training.config import ConfigError

    if name not in TRAINERS:
        raise ConfigError(f"trainer={name!r} is not valid: expected one of {list(TRAINERS)}")
    return TRAINERS[name]
