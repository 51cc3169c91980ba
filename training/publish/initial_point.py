"""The step-0 point of a run's learning curve, for runs trained before their trainer evaluated step 0 (issue 38).

A run of the SB3 or the jitted JAX trainer with periodic evaluations (``train.eval_every > 0``) evaluates its policy
before its first rollout and writes that row to ``evaluations.jsonl`` at ``timesteps`` 0. A run trained before has no
such row, and its area under the curve has to take the curve as flat before its first point
(:mod:`parlour.training.learning_curves`). :func:`initial_point` rebuilds that row from the run folder alone: the
untrained policy as the run's trainer built it from the run's ``config.yaml`` and seed (SB3: the seeded
``MaskablePPO`` of the config, or the clone behaviour cloning left in ``clone.json`` when the run imitated a teacher;
JAX: the parameters the trainer initialises from the seed), played by the same periodic evaluation on the same deals,
under the same random streams as the evaluation during training
(:func:`parlour.training.train.initial_rng`). :func:`add_initial_point` puts the row at the head of the run's
``evaluations.jsonl``. From the command line (no ``parlour`` subcommand has a natural place for it)::

    python -m parlour.training.publish.initial_point RUN [RUN ...] [--trust]

The rebuilt network equals the one the run started from where the libraries that initialise it (torch, SB3 or JAX,
``versions.json`` in the run folder) draw the same numbers from the same seed as they did when the run trained. The
RLlib trainer's evaluations keep their own cadence (every ``train.eval_every`` steps from the session's start, with no
point at step 0), so its runs are refused.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from parlour.envs.fileio import FolderLock, LockedError, atomic_write
from parlour.training.config import ConfigError, TrainConfig, check_untrusted, read_config, validate
from parlour.training.run import CLONE_STEM, RunError, evaluations
from parlour.training.sb3_train import initial_rng, model_policy
from parlour.training.session import evaluation_row, format_evaluation


def run_config(run: Path, trust: bool = False) -> TrainConfig:
    """The config a run folder was trained with (its ``config.yaml``), checked as a resume checks it: a value that
    reaches beyond the folder (an importable policy, an address, processes) is refused unless ``trust``."""
    saved = run / "config.yaml"
    if not saved.is_file() or saved.is_symlink():
        raise RunError(f"{run} holds no run (no config.yaml)")
    cfg = read_config(saved)
    check_untrusted(cfg, str(saved), trust_keys=trust)
    validate(cfg)
    return cfg


def initial_point(run: Path, *, trust: bool = False) -> dict[str, Any]:
    """The periodic evaluation at step 0 of the run in ``run`` (a row of ``evaluations.jsonl``, its ``time`` now),
    from its untrained policy rebuilt as its trainer built it; written nowhere. ``trust``: as ``--trust`` of a
    resume (the config may name code to import)."""
    cfg = run_config(run, trust)
    if cfg.trainer == "sb3":
        return _sb3_point(cfg, run)
    if cfg.trainer == "jax":
        return _jax_point(cfg)
    raise RunError(
        f"{run}: trainer {cfg.trainer!r} evaluates on its own cadence, with no point at step 0; only the sb3 and jax "
        "trainers' runs have one to rebuild"
    )


def _sb3_point(cfg: TrainConfig, run: Path) -> dict[str, Any]:
    """SB3: the model :func:`parlour.training.train.train_sb3` builds at step 0 (the same envs, network and seed;
    the clone's weights where it imitated a teacher), evaluated as its callback evaluates step 0."""
    import torch
    from stable_baselines3.common.vec_env import VecMonitor

    from parlour.training.sb3_train import new_model, vec_env

    threads = torch.get_num_threads()
    torch.set_num_threads(cfg.train.torch_threads)  # the trainer's, so its forward passes add up the same way
    venv = VecMonitor(vec_env(cfg, []))  # a fresh run's pool holds no self-play snapshot yet
    try:
        model = new_model(cfg, venv)
        if cfg.pretrain.teacher:
            _load_clone(model, run, cfg.pretrain.teacher)
        with initial_rng(cfg):
            return evaluation_row(cfg, model_policy(cfg, model), 0)
    finally:
        venv.close()
        torch.set_num_threads(threads)


def _load_clone(model: Any, run: Path, teacher: str) -> None:
    """PPO of a run that imitates a teacher starts from the clone (``clone.json``: the whole network after behaviour
    cloning), so that is its step-0 policy."""
    import torch

    from parlour.baselines.policy_file import read_spec, read_weights

    clone = run / f"{CLONE_STEM}.json"
    if not clone.is_file():
        raise RunError(
            f"{run} imitated {teacher}: its step-0 policy is the clone, and {clone} is missing (a published run "
            "record does not keep it)"
        )
    weights = read_weights(clone, read_spec(clone))
    try:
        model.policy.load_state_dict({k: torch.as_tensor(v) for k, v in weights.items()})
    except RuntimeError as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise RunError(f"{clone} does not fit the run's network ({first})") from None


def _jax_point(cfg: TrainConfig) -> dict[str, Any]:
    """JAX: the parameters :func:`parlour.training.jax_ppo.train_jax` initialises from the seed, exported and played
    as its periodic evaluations play them."""
    import jax

    from parlour.envs import make as make_env
    from parlour.training.jax_ppo import PPO, export
    from parlour.training.policies import checkpoint_meta, training_record

    probe = make_env(cfg.game.name, num_players=cfg.game.num_players, **cfg.game.options)
    meta = checkpoint_meta(probe, {"config": json.loads(json.dumps(asdict(cfg))), "trainer": "jax"})
    params = PPO(cfg).init(jax.random.PRNGKey(cfg.seed)).params
    with tempfile.TemporaryDirectory(prefix="parlour-initial-") as folder:
        path = export(params, Path(folder) / "periodic", cfg, meta, training_record(meta, 0))
        return evaluation_row(cfg, path, 0)


def add_initial_point(run: Path, *, trust: bool = False) -> dict[str, Any]:
    """Rebuild the step-0 row (:func:`initial_point`) and write it at the head of ``run``'s ``evaluations.jsonl``,
    atomically and under the run folder's lock (a session training it is refused, naming it). Refused if the run
    has a step-0 row already, has no periodic evaluations, or its rows evaluate other opponents or another number of
    games than its config. Returns the row."""
    run_config(run, trust)  # a folder that holds no run is refused before the lock would make it
    try:
        lock = FolderLock(run, "run folder").acquire()
    except LockedError as exc:
        raise RunError(str(exc)) from None
    try:
        path = run / "evaluations.jsonl"
        rows = evaluations(run)
        if any(r.get("timesteps") == 0 for r in rows):
            raise RunError(f"{path} has a step-0 row already; nothing to add")
        if not rows:
            raise RunError(f"{run} has no periodic evaluations ({path}): no learning curve to add step 0 to")
        row = initial_point(run, trust=trust)
        # the new row must be a point of the same curve: the same opponents, each over the same games
        games = {k: v["games"] for k, v in row.items() if isinstance(v, dict)}
        first = {k: v.get("games") for k, v in rows[0].items() if isinstance(v, dict)}
        if games != first:
            raise RunError(
                f"{path}: its rows evaluate {first} (opponent: games), the run's config {games}; refusing to mix them"
            )
        text = path.read_text()
        atomic_write(path, json.dumps(row) + "\n" + text + ("" if text.endswith("\n") or not text else "\n"))
        return row
    finally:
        lock.release()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m parlour.training.publish.initial_point",
        description="add the step-0 point (the untrained policy, rebuilt from config.yaml and the seed) to run "
        "folders trained before their trainer evaluated step 0",
    )
    parser.add_argument("runs", nargs="+", type=Path, help="run folders (each holding config.yaml)")
    parser.add_argument("--trust", action="store_true", help="trust what the runs' configs name (as a resume's)")
    args = parser.parse_args(argv)
    failed = 0
    for run in args.runs:
        try:
            row = add_initial_point(run, trust=args.trust)
        except (RunError, ConfigError) as exc:
            print(f"{run}: {exc}" if str(run) not in str(exc) else str(exc), file=sys.stderr)
            failed += 1
            continue
        num_players = read_config(run / "config.yaml").game.num_players
        print(f"{run}: {format_evaluation(row, num_players)}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
