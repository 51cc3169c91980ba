"""Trainers: the libraries that train a policy from a config (``trainer:`` in it), behind one small protocol.

A trainer says which configs it can train (:meth:`Trainer.check`, called by the config's validation with the
trainer-specific refusals kept beside the trainer) and where its session is (:attr:`Trainer.implementation`,
``module:function``, imported by :func:`parlour.training.train.train` once the run folder is ready: the function
takes ``(cfg, run, session)`` and returns the run's metrics). A trainer's module here holds its checks alone, so the
config's validation imports none of the training machinery (no import circle through the config). SB3 (MaskablePPO),
RLlib and the jitted JAX PPO register here; a new trainer is a module with a class like theirs, its session function,
and one line in :func:`_registered`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from parlour.training.config import TrainConfig
    from parlour.training.run import Session


class Trainer(Protocol):
    """What :func:`parlour.training.train.train` needs of a trainer."""

    #: The ``trainer:`` value that selects it.
    name: str

    def check(self, cfg: TrainConfig) -> None:
        """Refuse (``ConfigError``, one line) a config this trainer cannot train."""

    #: ``module:function`` of its session: ``function(cfg, run, session) -> metrics`` trains into the prepared run
    #: folder ``run`` (imported only when a run starts).
    implementation: str


def _registered() -> dict[str, Trainer]:
    from parlour.training.trainers.jax import JaxTrainer
    from parlour.training.trainers.rllib import RLlibTrainer
    from parlour.training.trainers.sb3 import SB3Trainer

    return {t.name: t for t in (SB3Trainer(), RLlibTrainer(), JaxTrainer())}


#: ``trainer:`` value -> trainer, in the order the messages list them.
TRAINERS: dict[str, Trainer] = _registered()


def session_function(trainer: Trainer) -> Callable[[TrainConfig, Path, Session], dict[str, Any]]:
    """The function that trains a run with ``trainer`` (its :attr:`~Trainer.implementation`, imported now)."""
    module, _, name = trainer.implementation.partition(":")
    function: Callable[[TrainConfig, Path, Session], dict[str, Any]] = getattr(importlib.import_module(module), name)
    return function


def trainer_for(name: str) -> Trainer:
    """The trainer registered as ``name`` (``ConfigError`` naming the registered ones otherwise)."""
    from parlour.training.config_base import ConfigError

    if name not in TRAINERS:
        raise ConfigError(f"trainer={name!r} is not valid: expected one of {list(TRAINERS)}")
    return TRAINERS[name]
