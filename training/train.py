"""``parlour train``: train a policy from a config into one run folder, with the trainer the config names.

:func:`train` opens (or reopens) the run folder and takes its lock (:mod:`parlour.training.run`, which also says what
a run folder holds), writes or checks the config, hands the run to the trainer (:mod:`parlour.training.trainers`)
and cleans up after a new run that failed with nothing to keep.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from parlour.training.config import TrainConfig
from parlour.training.run import (
    RunError,
    RunFinished,
    Session,
    TrainingStopped,
    clear_run,
    has_checkpoint_folder,
    has_work_or_damage,
    is_finished,
    old_zip,
    open_run,
    prepare_run,
)
from parlour.training.trainers import session_function, trainer_for


def train(
    cfg: TrainConfig,
    run: Path,
    *,
    resume: bool = False,
    command: str = "",
    progress: bool = True,
    final_eval: bool = True,
    overwrite: bool = False,
    trust_pickle: bool = False,
    clone_only: bool = False,
) -> dict:
    """Train, evaluate and write the run folder; returns the metrics.

    A config with a teacher writes the clone (the network after behaviour cloning, before any PPO step) as the
    policy file ``clone.json``; ``clone_only`` stops there (no PPO, no checkpoint, ``finished`` false).

    ``resume`` continues the run in ``run`` from its latest checkpoint (or from the start, or from behaviour
    cloning, wherever it stopped), with the config it was started with (``cfg`` may differ from it only in
    :data:`RESUMABLE_KEYS`). ``final_eval=False`` skips the final evaluation (``parlour baselines`` evaluates every
    seed itself). SIGINT or SIGTERM in any phase stops the run after writing what it has (a checkpoint, the cloning
    data) and raises :class:`TrainingStopped`; the folder always stays resumable. A resume of a finished run raises
    :class:`RunFinished` and changes nothing. A run folder from an earlier Parlour whose checkpoint is an SB3 zip
    is resumed only with ``trust_pickle`` (loading it unpickles it).

    A new run that fails with an error (not a stop) before it has anything to keep leaves no folder behind.
    """
    created = not run.exists()
    lock = open_run(run, resume, overwrite)
    prepared = False
    try:
        if resume:
            if is_finished(run, cfg):
                raise RunFinished(run, cfg.train.total_timesteps)
            old = old_zip(run)
            if old is not None and not has_checkpoint_folder(run) and not trust_pickle:
                raise RunError(
                    f"--resume: {run}'s checkpoint is {old}, an SB3 zip written by an earlier Parlour: loading it "
                    "unpickles it, which can run code stored in the file. Pass --trust-pickle if you trust it"
                )
        cfg = prepare_run(cfg, run, resume, command, overwrite)
        prepared = not resume
        session = Session(resume, progress, final_eval, trust_pickle, clone_only)
        return session_function(trainer_for(cfg.trainer))(cfg, run, session)
    except (TrainingStopped, KeyboardInterrupt):
        raise  # the folder stays: --resume continues it
    except BaseException:
        if prepared and not has_work_or_damage(run):
            clear_run(run)  # a new run that failed with nothing to keep: what it wrote goes
            if created:
                lock.release()
                shutil.rmtree(run, ignore_errors=True)
        raise
    finally:
        lock.release()


def train_job(cfg: TrainConfig, run: Path, command: str, overwrite: bool) -> dict:
    """One run of a seed sweep (a Ray task): :func:`train` without progress bars; returns its metrics."""
    return train(cfg, run, command=command, progress=False, overwrite=overwrite)
