"""What the config's checks share with the trainers' own (:meth:`parlour.training.trainers.Trainer.check`), below
both: :mod:`parlour.training.config` runs the trainers' checks when it validates a config, so they must not import it.
:mod:`parlour.training.config` re-exports every name here."""

from __future__ import annotations


class ConfigError(ValueError):
    """A config that cannot be used; the message says what is wrong and what is allowed."""


#: Opponent-pool entry that stands for snapshots of the learner (the self-play league; ``trainer: jax``: the learner's
#: current policy).
SELF_PLAY = "self"
#: ``trainer: jax``'s opponent-pool entry for the learner's past snapshots: ``self_play.max_snapshots`` entries, one
#: per slot of a ring of parameter sets, a new snapshot every ``self_play.snapshot_every`` steps (see
#: :mod:`parlour.training.jax_ppo`).
SNAPSHOTS = "snapshots"
