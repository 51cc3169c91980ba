"""``parlour train``: MaskablePPO on one seat of a Parlour game, from a config, into one run folder.

The run folder holds: ``.parlour-run.json`` (the marker that makes it a run folder: ``--overwrite`` deletes nothing
else), ``.parlour-lock`` (held while a process uses the folder), ``config.yaml`` (resolved), ``command.txt``,
``versions.json``, ``logs/session_K/`` (CSV and TensorBoard, one session per start or resume), ``evaluations.jsonl``
(periodic evaluations), ``checkpoints/latest/`` (the resume checkpoint, written atomically every
``train.checkpoint_every`` steps and at every stop: tensors in safetensors and counters and random states in JSON,
no pickle; see :mod:`parlour.training.checkpoints`), ``checkpoints/pretrain_data/`` and ``pretrain_clone/`` (behaviour
cloning's own, until PPO starts), ``snapshots/`` (self-play), ``model.zip`` (the final model as SB3's archive, for
fine-tuning with SB3; loading it unpickles it, so Parlour loads it only behind ``--trust-pickle``), ``policy.json`` +
``policy.safetensors`` (the final policy as a safe policy file: what evaluation loads), ``final_eval.json`` /
``final_eval.md``, ``learning_curve.png`` and ``metrics.json`` (throughput, the environment's share of the time, wall
time). Every file is written atomically (a unique temporary file renamed over it) and never through a link.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import shutil
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from parlour.baselines import resolve
from parlour.baselines.base import Policy
from parlour.baselines.features import Features, field_index, lookup, with_features
from parlour.baselines.policy_file import PolicyFile, check_compatible, table_for
from parlour.envs import make as make_env
from parlour.envs.fileio import FolderLock, LockedError, append_text, atomic_write, read_json
from parlour.training.checkpoints import (
    is_checkpoint,
    read_checkpoint,
    rng_state,
    set_rng_state,
    write_checkpoint,
)
from parlour.training.checkpoints import read_meta as read_checkpoint_meta
from parlour.training.config import ACTIVATIONS, SELF_PLAY, TrainConfig, to_yaml
from parlour.training.evaluation.matchups import play_matchup, run_evaluation, write_report
from parlour.training.policies import checkpoint_meta, export_policy, read_meta, save_checkpoint, training_record
from parlour.training.single_agent import SingleAgentEnv
from parlour.training.trainers import Session, trainer_for

#: The resume checkpoint's folder under ``RUN/checkpoints/`` (both trainers).
CHECKPOINT_NAME = "latest"
#: The trained policy as a safe policy file in the run folder: ``policy.json`` + ``policy.safetensors``.
POLICY_STEM = "policy"
#: The key of a trainer's returned metrics that holds the final evaluation's whole report (not written to
#: ``metrics.json``, which keeps its win rates; the report itself is ``final_eval.json``).
FINAL_REPORT = "final_report"
#: The clone's policy file (behaviour cloning alone, before PPO) in a run that imitates a teacher.
CLONE_STEM = "clone"


class RunError(RuntimeError):
    """A run folder that cannot be used as asked."""


class TrainingStopped(RuntimeError):
    """A run stopped by SIGINT (Ctrl-C) or SIGTERM, after saving its work: ``--resume`` continues it."""

    def __init__(self, signum: int, what: str) -> None:
        self.signum = signum
        #: The shell's convention for a process ended by a signal.
        self.exit_code = 128 + signum
        super().__init__(f"stopped by {signal.Signals(signum).name} {what}")


class RunFinished(RunError):
    """``--resume`` of a run that has reached its budget and written its results: nothing to do."""

    def __init__(self, run: Path, total: int) -> None:
        super().__init__(
            f"--resume: {run} is finished (it reached its {total:,} steps and wrote metrics.json); nothing to do. "
            f"To train it further, raise its budget: parlour train --resume --out {shlex.quote(str(run))} "
            "train.total_timesteps=N"
        )


class _Stop:
    """SIGINT/SIGTERM while training: noted here; the trainer finishes the rollout and update (or evaluation) under way,
    writes the checkpoint and stops at the next boundary. A second Ctrl-C stops at once (without saving: the run
    resumes from its last checkpoint). Only the main thread can take signals; elsewhere this does nothing."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _Stop:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _handle(self, signum: int, frame: Any) -> None:
        if self.signum is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.signum = signum


def evaluations(run: Path) -> list[dict[str, Any]]:
    """The periodic evaluations of a run (``evaluations.jsonl``), oldest first."""
    path = run / "evaluations.jsonl"
    if not path.is_file():
        return []
    rows = []
    for k, line in enumerate(path.read_text().splitlines()):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise RunError(f"{path}: line {k + 1} is not JSON ({exc})") from None
    return rows


def versions() -> dict[str, str]:
    from importlib import metadata

    out = {"python": platform.python_version(), "platform": platform.platform()}
    for pkg in ("parlour", "numpy", "gymnasium", "pettingzoo", "torch", "stable-baselines3", "sb3-contrib"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def _learner_seat(cfg: TrainConfig) -> int | str:
    return "random" if cfg.learner.seat == "random" else int(cfg.learner.seat)


def resolve_for(cfg: TrainConfig, spec: str, label: str | None = None) -> Policy:
    """A policy spec of the config (opponent, evaluation entry) at the config's table."""
    game = cfg.game
    return resolve(spec, game.name, game.num_players, game.options, trust_pickle=cfg.trust_pickle, label=label)


def _snapshot_policy(cfg: TrainConfig, path: Path) -> Policy:
    table = table_for(cfg.game.name, cfg.game.num_players, cfg.game.options)
    return PolicyFile(path, table, label=f"self@{path.stem}")


def _pool(cfg: TrainConfig, snapshots: list[Path]) -> list[Policy]:
    pool = [resolve_for(cfg, s) for s in cfg.opponents if s != SELF_PLAY]
    if SELF_PLAY in cfg.opponents:
        pool += [_snapshot_policy(cfg, p) for p in snapshots]
    return pool


def _make_env_fn(cfg: TrainConfig, index: int, snapshots: list[Path], seed: int) -> Any:
    worker = cfg.train.vec_env == "subproc"

    def thunk() -> SingleAgentEnv:
        if worker:
            # Ctrl-C reaches the whole process group: the main process stops the run and closes the workers.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        return SingleAgentEnv(
            cfg.game.name,
            _pool(cfg, snapshots),
            env_kwargs={"num_players": cfg.game.num_players, **cfg.game.options},
            learner_seat=_learner_seat(cfg),
            seed=seed * 1000 + index,
            features=cfg.ppo.features,
            observation_fields=cfg.ppo.observation_fields,
            opponent_draw=cfg.opponent_draw,
        )

    return thunk


def _vec_env(cfg: TrainConfig, snapshots: list[Path]) -> Any:
    """The learner's ``train.n_envs`` games: scalar envs in this process or one each, or a batch on the JAX core."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    if cfg.train.vec_env == "jax":
        from parlour.training.jax_vec_env import sb3_vec_env

        seat = _learner_seat(cfg)
        return sb3_vec_env(
            cfg.game.name,
            cfg.train.n_envs,
            num_players=cfg.game.num_players,
            options=dict(cfg.game.options),
            opponents=list(cfg.opponents),
            learner_seat=None if seat == "random" else int(seat),
            opponent_draw=cfg.opponent_draw,
            seed=cfg.seed,
        )
    fns = [_make_env_fn(cfg, i, snapshots, cfg.seed) for i in range(cfg.train.n_envs)]
    return SubprocVecEnv(fns) if cfg.train.vec_env == "subproc" else DummyVecEnv(fns)


def _timed_vec_env(venv: Any) -> Any:
    """Wrap a VecEnv so that the seconds spent stepping and resetting environments are counted."""
    from stable_baselines3.common.vec_env import VecEnvWrapper

    class Timed(VecEnvWrapper):
        env_seconds = 0.0

        def reset(self) -> Any:
            t = time.perf_counter()
            out = self.venv.reset()
            Timed.env_seconds += time.perf_counter() - t
            return out

        def step_async(self, actions: np.ndarray) -> None:
            self._t = time.perf_counter()
            self.venv.step_async(actions)

        def step_wait(self) -> Any:
            out = self.venv.step_wait()
            Timed.env_seconds += time.perf_counter() - self._t
            return out

    return Timed(venv)


def format_evaluation(row: dict[str, Any], num_players: int) -> str:
    """One line for a periodic evaluation: the step, its games (``eval.periodic_games`` counts deals, each played once
    per seat) and the win rate against each opponent."""
    parts = [
        f"vs {k} {v['win_rate']:.3f} ({v['win_ci'][0]:.3f}-{v['win_ci'][1]:.3f})"
        for k, v in row.items()
        if isinstance(v, dict)
    ]
    games = next((v["games"] for v in row.values() if isinstance(v, dict)), 0)
    d = games // num_players if num_players else 0
    deals = f"{d} deal{'s' if d != 1 else ''} × {num_players} seats = " if d and games % num_players == 0 else ""
    return f"evaluation at step {row['timesteps']:,} ({deals}{games} games each): win rate " + ", ".join(parts)


def periodic_evaluation(cfg: TrainConfig, run: Path, policy: Policy | Path, timesteps: int) -> dict[str, Any]:
    """Play the policy (or the policy file at a path) against each evaluation opponent on ``eval.periodic_games``
    deals and append the row to ``evaluations.jsonl``; returns the row."""
    row = evaluation_row(cfg, policy, timesteps)
    append_text(run / "evaluations.jsonl", json.dumps(row) + "\n")
    return row


def evaluation_row(cfg: TrainConfig, policy: Policy | Path, timesteps: int) -> dict[str, Any]:
    """:func:`periodic_evaluation`'s row, written nowhere: the policy (or the policy file at a path) against each
    evaluation opponent on the first ``eval.periodic_games`` deals of ``eval.seed_set``."""
    if isinstance(policy, Path):
        table = table_for(cfg.game.name, cfg.game.num_players, cfg.game.options)
        policy = PolicyFile(policy, table, deterministic=cfg.learner.deterministic, label="ppo")
    row: dict[str, Any] = {"timesteps": timesteps, "time": time.time()}
    for name in cfg.eval.opponents:
        m = play_matchup(
            cfg.game.name,
            policy,
            resolve_for(cfg, name),
            num_players=cfg.game.num_players,
            games=cfg.eval.periodic_games,
            seed_set=cfg.eval.seed_set,
            env_kwargs=cfg.game.options,
        ).summary()
        row[name] = {k: m[k] for k in ("games", "win_rate", "win_ci", "mean_reward")}
    return row


#: The spawn key of :func:`initial_rng`'s seed (a stream of the run's seed that nothing else draws from).
INITIAL_EVAL_STREAM = 0x5E0


@contextmanager
def initial_rng(cfg: TrainConfig) -> Iterator[None]:
    """The process-wide random streams (Python's, NumPy's legacy global, torch's CPU and CUDA ones) for the evaluation
    at step 0: seeded from the run's seed alone inside, and put back as they were after. The training that follows
    draws exactly what it would have drawn without this evaluation, and a policy that samples its actions
    (``learner.deterministic: false``) samples the same ones when the point is rebuilt after the run
    (:func:`parlour.training.initial_point.initial_point`)."""
    import random

    import torch

    seed = int(np.random.SeedSequence(cfg.seed, spawn_key=(INITIAL_EVAL_STREAM,)).generate_state(1)[0])
    python, legacy = random.getstate(), np.random.get_state()
    # CUDA's states only where the process already uses CUDA (a CPU run must not start it here)
    cuda = list(range(torch.cuda.device_count())) if torch.cuda.is_initialized() else []
    with torch.random.fork_rng(devices=cuda):  # torch's states, put back on leaving
        random.seed(seed)
        np.random.seed(seed)
        torch.default_generator.manual_seed(seed)
        if cuda:
            torch.cuda.manual_seed_all(seed)
        try:
            yield
        finally:
            random.setstate(python)
            np.random.set_state(legacy)


def has_checkpoint(run: Path) -> bool:
    """Whether a run folder holds a checkpoint to resume training from."""
    return is_checkpoint(run / "checkpoints" / CHECKPOINT_NAME) or _old_zip(run) is not None


def checkpoint_step(run: Path) -> int | None:
    """The step a run's checkpoint was written at (``None``: no checkpoint)."""
    folder = run / "checkpoints" / CHECKPOINT_NAME
    if is_checkpoint(folder):
        return int(read_checkpoint_meta(folder)["timesteps"])
    zipped = _old_zip(run)
    return int(read_meta(zipped).get("timesteps", 0)) if zipped is not None else None


class _ModelPolicy(Policy):
    """The model being trained, as a policy (for periodic evaluation)."""

    name = "ppo"

    def __init__(
        self, model: Any, deterministic: bool, features: tuple[Features, ...] = (), keep: np.ndarray | None = None
    ) -> None:
        self.model = model
        self.deterministic = deterministic
        self.features = features
        self.keep = keep

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        action, _ = self.model.predict(
            with_features(self.features, observation, self.keep, action_mask),
            action_masks=action_mask.astype(bool),
            deterministic=self.deterministic,
        )
        return int(action)


def model_policy(cfg: TrainConfig, model: Any) -> Policy:
    """The SB3 model being trained, as the policy its periodic evaluations play (its input the config's feature sets
    and observation fields, greedy or sampled as ``learner.deterministic`` says)."""
    keep = field_index(cfg.game.name, cfg.game.num_players, cfg.game.options, cfg.ppo.observation_fields)
    return _ModelPolicy(model, cfg.learner.deterministic, lookup(cfg.ppo.features, cfg.game.name), keep)


#: Config keys a resumed run may change (``parlour train --resume --out RUN key=value``): its budget and how
#: often it checkpoints, evaluates and how many threads it uses; everything else is the run that was started.
RESUMABLE_KEYS = (
    "train.total_timesteps",
    "train.checkpoint_every",
    "train.eval_every",
    "train.torch_threads",
    "rllib.ray_address",  # where the run computes, not what it computes (--ray-address on the command line)
)


def _flat(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict) and v and k != "options":
            out |= _flat(v, f"{prefix}{k}.")
        else:
            out[f"{prefix}{k}"] = v
    return out


def config_changes(before: TrainConfig, after: TrainConfig) -> dict[str, tuple[Any, Any]]:
    """Dotted key -> (before, after) for every value that differs."""
    a, b = _flat(asdict(before)), _flat(asdict(after))
    return {k: (a.get(k), b.get(k)) for k in sorted(a.keys() | b.keys()) if a.get(k) != b.get(k)}


def _saved_path(run: Path) -> Path:
    saved = run / "config.yaml"
    if not saved.is_file() or saved.is_symlink():
        raise RunError(f"--resume: {run} holds no run (no config.yaml); start it without --resume")
    return saved


def read_saved_config(run: Path) -> TrainConfig:
    """A run's ``config.yaml``, typed but not validated: nothing it names is imported or reached (for comparing a
    run's config with another, e.g. before reusing a finished run)."""
    from parlour.training.config import read_config

    return read_config(_saved_path(run))


def resume_config(
    run: Path, overrides: list[str], *, trust: bool = False, trust_pickle: bool = False
) -> tuple[TrainConfig, dict[str, tuple[Any, Any]]]:
    """The config a resumed run continues with: the one it was started with, plus explicit ``overrides`` of
    :data:`RESUMABLE_KEYS` (an override equal to the saved value changes nothing). Returns it and the changes.

    Unless ``trust`` (``--trust``) or ``trust_pickle`` (``--trust-pickle``, which trusts everything the run names),
    every value that reaches beyond the run folder (an address, an importable name, a process count:
    :data:`~parlour.training.config.UNTRUSTED_KEYS`) must be given again in ``overrides``; otherwise it is refused in
    one line naming the key, before anything is imported or reached. A saved ``trust_pickle: true`` needs
    ``trust_pickle``."""
    from parlour.training.config import check_untrusted, read_config, validate

    saved = _saved_path(run)
    before = read_config(saved)
    after = read_config(saved, overrides)
    changes = config_changes(before, after)
    _check_resumable(run, changes)
    if not trust_pickle:
        # a key given on the command line is confirmed: it equals the saved value (any other change of a fixed key
        # was refused just now) or is a resumable key the user set; --trust confirms them all
        given = {item.split("=", 1)[0].strip() for item in overrides}
        check_untrusted(after, str(saved), given, trust_keys=trust)
    _check_checkpoint_config(run, after)
    validate(after)
    return after, changes


def _check_resumable(run: Path, changes: dict[str, tuple[Any, Any]]) -> None:
    fixed = {k: v for k, v in changes.items() if k not in RESUMABLE_KEYS}
    if fixed:
        what = "; ".join(f"{k}: started with {old!r}, now {new!r}" for k, (old, new) in fixed.items())
        raise RunError(
            f"--resume: {run} continues the run it started, so these cannot change ({what}); a resume may change "
            f"only {list(RESUMABLE_KEYS)}: start a new run (another --out) for the rest"
        )


#: The file that marks a folder as a Parlour run folder (written when the run starts; holds the run's id).
RUN_MARKER = ".parlour-run.json"
#: Every name a run folder may hold (what ``parlour train`` writes): ``--overwrite`` deletes a folder only if it
#: carries :data:`RUN_MARKER` and holds nothing else.
RUN_ENTRIES = frozenset(
    {
        RUN_MARKER,
        FolderLock.NAME,
        "config.yaml",
        "command.txt",
        "versions.json",
        "logs",
        "evaluations.jsonl",
        "checkpoints",
        "snapshots",
        "model.zip",
        f"{POLICY_STEM}.json",
        f"{POLICY_STEM}.safetensors",
        f"{CLONE_STEM}.json",
        f"{CLONE_STEM}.safetensors",
        "final_eval.json",
        "final_eval.md",
        "learning_curve.png",
        "metrics.json",
        "pretrain.json",
    }
)


def _protected(folder: Path) -> str | None:
    """Why ``folder`` may never be deleted (the current folder, a home folder, the root, or a folder holding one
    of them), or ``None``."""
    target = folder.resolve()
    homes = {Path.home().resolve()}
    if os.environ.get("HOME"):
        homes.add(Path(os.environ["HOME"]).resolve())
    for what, place in [("the current folder", Path.cwd().resolve())] + [("a home folder", h) for h in homes]:
        if target == place or target in place.parents:
            return f"it is {what}" if target == place else f"it holds {what} ({place})"
    if target == Path(target.anchor):
        return "it is the root of the file system"
    return None


def check_deletable(run: Path, who: str = "--overwrite") -> None:
    """Refuse, with one line naming ``run`` and what it holds, to delete anything but a run folder Parlour made:
    one that carries :data:`RUN_MARKER` and nothing unknown to it, and is not the current folder, a home folder
    or the root. ``who`` starts the message (the flag or command that asked)."""
    why = _protected(run)
    if why is not None:
        raise RunError(f"{who}: refusing to delete {run}: {why}")
    if run.is_symlink() or not run.is_dir():
        raise RunError(f"{who}: refusing to delete {run}: it is not a folder")
    entries = sorted(p.name for p in run.iterdir())
    shown = ", ".join(entries[:8]) + (f", … ({len(entries)} entries)" if len(entries) > 8 else "")
    marker = run / RUN_MARKER
    try:
        ok = marker.is_file() and not marker.is_symlink() and "run_id" in read_json(marker, "run marker")
    except ValueError:
        ok = False
    if not ok:
        raise RunError(
            f"{who}: refusing to delete {run}: it is not a run folder Parlour made (no {RUN_MARKER}); it "
            f"holds {shown}. {'Choose another --out, or delete' if who == '--overwrite' else 'Move it away, or delete'} it "
            "yourself"
        )
    unknown = [e for e in entries if e not in RUN_ENTRIES]
    if unknown:
        raise RunError(
            f"{who}: refusing to delete {run}: besides its run it holds {', '.join(unknown[:8])}, which "
            f"Parlour did not write. Move those away{', or choose another --out' if who == '--overwrite' else ''}"
        )


def delete_run(run: Path, who: str) -> None:
    """Delete the run folder ``run`` -- the one way any Parlour command deletes a run: only a folder Parlour made
    (:func:`check_deletable`), and only while no process holds it (its lock is taken first, so a live run is refused
    naming its holder). ``who`` names the command in the one-line refusal."""
    if not run.exists() and not run.is_symlink():
        return
    check_deletable(run, who)
    try:
        lock = FolderLock(run, "run folder").acquire()
    except LockedError as exc:
        raise RunError(f"{who}: refusing to delete {run}: {exc}") from None
    try:
        check_deletable(run, who)  # again under the lock: nothing was added while it was taken
        _clear_run(run)
    finally:
        lock.release()
    (run / FolderLock.NAME).unlink(missing_ok=True)
    run.rmdir()


def _clear_run(run: Path) -> None:
    """Delete a run folder's contents (checked by :func:`check_deletable`), keeping the lock file we hold."""
    for entry in run.iterdir():
        if entry.name == FolderLock.NAME:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def is_run(run: Path) -> bool:
    """Whether ``run`` is a run folder that ``--resume`` can continue (it holds its config)."""
    return (run / "config.yaml").is_file()


def is_finished(run: Path, cfg: TrainConfig) -> bool:
    """Whether the run reached ``cfg``'s budget and wrote its final metrics."""
    try:
        metrics = read_json(run / "metrics.json", "metrics file")
    except ValueError:
        return False
    return (
        isinstance(metrics, dict)
        and metrics.get("finished", "session_steps" in metrics) is True
        and int(metrics.get("timesteps", 0)) >= cfg.train.total_timesteps
    )


def prepare_run(cfg: TrainConfig, run: Path, resume: bool, command: str, overwrite: bool = False) -> TrainConfig:
    """Create (or, with ``resume``, reopen) the run folder; the caller holds its lock. Returns the config the run
    uses.

    A resumed run uses the config it was started with; ``cfg`` may differ from it only in :data:`RESUMABLE_KEYS`
    (anything else is refused), and a change is written to ``config.yaml`` and noted in ``command.txt``. A new run
    goes into a missing or empty folder, or, with ``overwrite``, replaces a run folder Parlour made (see
    :func:`check_deletable`).
    """
    saved = run / "config.yaml"
    if resume:
        _check_no_links(run)
        changes = config_changes(read_saved_config(run), cfg)  # cfg was read and checked by the caller
        _check_resumable(run, changes)  # what the caller asks to change
        _check_checkpoint_config(run, cfg)  # what the folder's own files disagree on
        if changes:
            atomic_write(saved, to_yaml(cfg))  # the next resume continues with these values
            note = ", ".join(f"{k} {old} -> {new}" for k, (old, new) in changes.items())
            command = f"{command}  # resumed with {note}"
    else:
        if any(p.name != FolderLock.NAME for p in run.iterdir()):
            if not overwrite:
                raise RunError(
                    f"run folder {run} exists and is not empty: resume it with --resume, start afresh with "
                    "--overwrite, or choose another --out"
                )
            check_deletable(run)
            _clear_run(run)
        marker = {"format": "parlour-run/1", "run_id": uuid.uuid4().hex, "env": cfg.game.name, "created": time.time()}
        atomic_write(run / RUN_MARKER, json.dumps(marker, indent=2))
        atomic_write(saved, to_yaml(cfg))
        atomic_write(run / "versions.json", json.dumps(versions(), indent=2))
    append_text(run / "command.txt", command + "\n")
    return cfg


def _check_no_links(run: Path) -> None:
    """A run folder Parlour wrote holds no symbolic links: one planted in a handed-over folder is refused before
    anything is written, so no write follows it out of the folder."""
    for folder in (run, *(run / d for d in ("checkpoints", "logs", "snapshots"))):
        if not folder.is_dir():
            continue
        for entry in [folder, *folder.iterdir(), *(p for d in folder.iterdir() if d.is_dir() for p in d.iterdir())]:
            if entry.is_symlink():
                raise RunError(f"{entry} is a symbolic link; refusing to write through it (a run folder holds none)")


def _open_run(run: Path, resume: bool, overwrite: bool) -> FolderLock:
    """Make the run folder if it is new and take its lock (a second process is refused, naming the holder)."""
    if run.exists() and (run.is_symlink() or not run.is_dir()):
        raise RunError(f"run folder {run} is not a folder")
    if not resume and overwrite and run.is_dir():
        check_deletable(run)  # refuse before anything is written into it
    if not resume:
        run.mkdir(parents=True, exist_ok=True)
    try:
        return FolderLock(run, "run folder").acquire()
    except LockedError as exc:
        raise RunError(str(exc)) from None


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
    lock = _open_run(run, resume, overwrite)
    prepared = False
    try:
        if resume:
            if is_finished(run, cfg):
                raise RunFinished(run, cfg.train.total_timesteps)
            old = _old_zip(run)
            if old is not None and not has_checkpoint_folder(run) and not trust_pickle:
                raise RunError(
                    f"--resume: {run}'s checkpoint is {old}, an SB3 zip written by an earlier Parlour: loading it "
                    "unpickles it, which can run code stored in the file. Pass --trust-pickle if you trust it"
                )
        cfg = prepare_run(cfg, run, resume, command, overwrite)
        prepared = not resume
        session = Session(resume, progress, final_eval, trust_pickle, clone_only)
        return trainer_for(cfg.trainer).train(cfg, run, session)
    except (TrainingStopped, KeyboardInterrupt):
        raise  # the folder stays: --resume continues it
    except BaseException:
        if prepared and not _has_work_or_damage(run):
            _clear_run(run)  # a new run that failed with nothing to keep: what it wrote goes
            if created:
                lock.release()
                shutil.rmtree(run, ignore_errors=True)
        raise
    finally:
        lock.release()


def _check_checkpoint_config(run: Path, cfg: TrainConfig) -> None:
    """A resume continues what the checkpoints were trained with: a run folder whose ``config.yaml`` differs from the
    config its checkpoints record (beyond :data:`RESUMABLE_KEYS`) was edited or mixed up, and is refused naming the
    keys -- whatever a resume runs is then exactly the run that was checkpointed."""
    from parlour.training.baselines_table import with_defaults

    now = _flat(json.loads(json.dumps(asdict(cfg))))
    for name in (CHECKPOINT_NAME, PRETRAIN_DATA, PRETRAIN_CLONE):
        folder = run / "checkpoints" / name
        if not is_checkpoint(folder):
            continue
        recorded = read_checkpoint_meta(folder).get("config")
        if not isinstance(recorded, dict):
            raise RunError(f"{folder / 'parlour.json'}: records no config (a checkpoint Parlour wrote records its own)")
        # a key added to the schema after the checkpoint was written held its default then (``ppo.network``, say)
        then = _flat(with_defaults(recorded) or recorded)
        differ = [k for k in sorted(then.keys() | now.keys()) if k not in RESUMABLE_KEYS and then.get(k) != now.get(k)]
        if differ:
            what = "; ".join(f"{k}: checkpoint {then.get(k)!r}, config.yaml {now.get(k)!r}" for k in differ[:6])
            raise RunError(
                f"--resume: {run}'s config.yaml is not the config its checkpoint {folder} was trained with ({what}"
                f"{'; …' if len(differ) > 6 else ''}); a resume continues that run only: start a new run instead"
            )


def has_checkpoint_folder(run: Path) -> bool:
    """Whether the run holds this Parlour's (pickle-free) resume checkpoint."""
    return is_checkpoint(run / "checkpoints" / CHECKPOINT_NAME)


def _has_work_or_damage(run: Path) -> bool:
    """:func:`_has_work`, counting a damaged checkpoint as work (a failed run's cleanup never deletes one, and never
    hides the error that ended the run behind the checkpoint's)."""
    try:
        return _has_work(run)
    except ValueError:  # CheckpointError: something is there
        return True


def _has_work(run: Path) -> bool:
    """Whether a run folder holds work to resume from: a checkpoint, or behaviour cloning's."""
    return has_checkpoint(run) or any(is_checkpoint(run / "checkpoints" / d) for d in (PRETRAIN_DATA, PRETRAIN_CLONE))


def train_job(cfg: TrainConfig, run: Path, command: str, overwrite: bool) -> dict:
    """One run of a seed sweep (a Ray task): :func:`train` without progress bars; returns its metrics."""
    return train(cfg, run, command=command, progress=False, overwrite=overwrite)


def _new_model(cfg: TrainConfig, venv: Any) -> Any:
    """A MaskablePPO of the config's network and hyper-parameters, seeded with the run's seed."""
    import torch
    from sb3_contrib import MaskablePPO

    ppo = cfg.ppo
    policy: Any = "MlpPolicy"
    skip: dict[str, Any] = {}
    if ppo.skip_features:
        from parlour.baselines.features import size
        from parlour.training.networks import SkipFeaturesPolicy

        policy, skip = SkipFeaturesPolicy, {"skip": size(lookup(ppo.features, cfg.game.name))}
    return MaskablePPO(
        policy,
        venv,
        learning_rate=ppo.learning_rate,
        n_steps=ppo.n_steps,
        batch_size=ppo.batch_size,
        n_epochs=ppo.n_epochs,
        gamma=ppo.gamma,
        gae_lambda=ppo.gae_lambda,
        clip_range=ppo.clip_range,
        ent_coef=ppo.ent_coef,
        vf_coef=ppo.vf_coef,
        max_grad_norm=ppo.max_grad_norm,
        policy_kwargs={
            "net_arch": list(ppo.net_arch),
            "activation_fn": getattr(torch.nn, ACTIVATIONS[ppo.activation]),
            **skip,
        },
        seed=cfg.seed,
        device=cfg.train.device,
        verbose=0,
    )


class StopAtBoundary(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised by the SB3 callback at the start of a rollout once a stop was asked for: the run stops between an update
    and the next rollout, where everything it needs to go on is in the checkpoint (no partial rollout is lost)."""


def _vec_chain(venv: Any) -> list[Any]:
    """``venv`` and every VecEnv it wraps, outermost first."""
    chain = [venv]
    while hasattr(chain[-1], "venv"):
        chain.append(chain[-1].venv)
    return chain


def venv_state(venv: Any) -> dict[str, Any]:
    """The training envs' state (for an exact resume): each game's (:meth:`SingleAgentEnv.get_state`, or the JAX
    batch's own ``get_state``) and the episode statistics ``VecMonitor`` keeps for the logs."""
    from stable_baselines3.common.vec_env import VecMonitor

    chain = _vec_chain(venv)
    base = chain[-1]
    out: dict[str, Any] = {"envs": base.get_state() if hasattr(base, "get_state") else venv.env_method("get_state")}
    for v in chain:
        if isinstance(v, VecMonitor):
            out["monitor"] = {"returns": np.asarray(v.episode_returns), "lengths": np.asarray(v.episode_lengths)}
    return out


def set_venv_state(venv: Any, state: dict[str, Any], source: str) -> None:
    """Restore :func:`venv_state` into freshly built training envs; one line naming ``source`` if it does not fit."""
    from stable_baselines3.common.vec_env import VecMonitor

    chain = _vec_chain(venv)
    base = chain[-1]
    try:
        envs = state["envs"]
        if hasattr(base, "set_state"):
            base.set_state(envs)
        else:
            if not isinstance(envs, list) or len(envs) != base.num_envs:
                raise ValueError(
                    f"it holds {len(envs) if isinstance(envs, list) else 'no'} envs, the run has {base.num_envs}"
                )
            for i, env_state in enumerate(envs):
                venv.env_method("set_state", env_state, indices=[i])
        for v in chain:
            if isinstance(v, VecMonitor) and "monitor" in state:
                v.episode_returns = np.asarray(state["monitor"]["returns"], np.float32).reshape(v.num_envs)
                v.episode_lengths = np.asarray(state["monitor"]["lengths"], np.int32).reshape(v.num_envs)
    except (KeyError, TypeError, ValueError) as exc:
        raise RunError(f"{source}: the training envs saved in this checkpoint do not fit the run ({exc})") from None


def save_resume_checkpoint(
    model: Any, folder: Path, meta: dict[str, Any], session: dict[str, Any] | None = None
) -> Path:
    """The model's whole training state as a pickle-free checkpoint (:mod:`parlour.training.checkpoints`): the
    policy's and optimizer's tensors, the counters and the random states; and, once training has started, the
    training envs, the last observations and the callback's ``session`` state -- everything the next rollout depends
    on, so that a resume equals a run that never stopped. Written between an update and the next rollout only."""
    state: dict[str, Any] = {
        "policy": model.policy.state_dict(),
        "optimizer": model.policy.optimizer.state_dict(),
        "counters": {"num_timesteps": int(model.num_timesteps), "n_updates": int(model._n_updates)},
        "rng": rng_state(),
    }
    if model._last_obs is not None and model.get_env() is not None:
        state["rollout"] = {
            "last_obs": np.asarray(model._last_obs),
            "last_episode_starts": np.asarray(model._last_episode_starts),
            "ep_info_buffer": [dict(e) for e in (model.ep_info_buffer or [])],
            "venv": venv_state(model.get_env()),
        }
    if session is not None:
        state["session"] = session
    return write_checkpoint(folder, meta | {"timesteps": int(model.num_timesteps), "trainer": "sb3"}, state)


def load_resume_checkpoint(model: Any, folder: Path, meta: dict[str, Any], state: Any = None) -> int:
    """Load a checkpoint of :func:`save_resume_checkpoint` into ``model`` (built from the run's config), after
    checking that it was trained for this config's table; returns its step. ``state``: the checkpoint already
    read (with its table checked), else it is read here. The training envs' state is restored by
    :func:`restore_rollout`."""
    if state is None:
        saved, state = read_checkpoint(folder)
        check_compatible(saved, meta, str(folder))  # meta holds this config's table
    source = str(folder / "state.json")
    try:
        model.policy.load_state_dict(state["policy"])
        model.policy.optimizer.load_state_dict(state["optimizer"])
        counters = state["counters"]
        model.num_timesteps = int(counters["num_timesteps"])
        model._n_updates = int(counters["n_updates"])
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise does_not_fit(folder, "network", exc) from None
    set_rng_state(state["rng"], source)
    return int(model.num_timesteps)


def restore_rollout(model: Any, folder: Path, state: dict[str, Any]) -> bool:
    """Put the training envs, the last observations and the episode statistics of a checkpoint back (``False``: the
    checkpoint has none -- it was written before training started, or by an earlier Parlour)."""
    from collections import deque

    rollout = state.get("rollout")
    if rollout is None:
        return False
    source = str(folder / "state.json")
    venv = model.get_env()
    set_venv_state(venv, rollout["venv"], source)
    try:
        obs = np.asarray(rollout["last_obs"])
        starts = np.asarray(rollout["last_episode_starts"])
        expected = (venv.num_envs, *venv.observation_space.shape)
        if obs.shape != expected or starts.shape != (venv.num_envs,):
            raise ValueError(f"observations of shape {obs.shape}, the run's are {expected}")
        model._last_obs = obs.astype(venv.observation_space.dtype)
        model._last_episode_starts = starts.astype(bool)
        model.ep_info_buffer = deque(
            ({"r": float(e["r"]), "l": int(e["l"]), "t": float(e["t"])} for e in rollout["ep_info_buffer"]),
            maxlen=model._stats_window_size,
        )
        model.ep_success_buffer = deque(maxlen=model._stats_window_size)  # SB3 makes both or neither on learn()
    except (KeyError, TypeError, ValueError) as exc:
        raise RunError(f"{source}: the rollout saved in this checkpoint does not fit the run ({exc})") from None
    return True


def does_not_fit(folder: Path, what: str, exc: BaseException) -> RunError:
    """The one-line refusal of a checkpoint whose state does not load into the model rebuilt from the run's config."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return RunError(f"{folder}: this checkpoint does not fit the run's {what} ({first})")


def _old_zip(run: Path) -> Path | None:
    """An SB3 zip checkpoint written by an earlier Parlour (loading it unpickles it)."""
    path = run / "checkpoints" / "latest.zip"
    return path if path.is_file() else None


def train_sb3(cfg: TrainConfig, run: Path, session: Session) -> dict:
    """The SB3 trainer's run (:class:`parlour.training.trainers.sb3.SB3Trainer`): MaskablePPO on one seat, after
    behaviour cloning when the config names a teacher."""
    import torch
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.vec_env import VecMonitor

    from parlour.training.callbacks import PeriodicCallback

    torch.set_num_threads(cfg.train.torch_threads)
    probe = make_env(cfg.game.name, num_players=cfg.game.num_players, **cfg.game.options)
    meta = checkpoint_meta(
        probe,
        {
            "config": json.loads(json.dumps(asdict(cfg))),
            "features": list(cfg.ppo.features),
            "observation_fields": list(cfg.ppo.observation_fields),
        },
    )

    latest = run / "checkpoints" / CHECKPOINT_NAME
    saved: dict[str, Any] | None = None
    if session.resume and is_checkpoint(latest):
        saved_meta, saved = read_checkpoint(latest)
        check_compatible(saved_meta, meta, str(latest))  # meta holds this config's table
        counted = (saved.get("counters") or {}).get("num_timesteps") if isinstance(saved, dict) else None
        if counted != saved_meta.get("timesteps"):
            raise RunError(
                f"{latest}: parlour.json says step {saved_meta.get('timesteps')!r}, its state step {counted!r}; "
                "a checkpoint Parlour wrote agrees with itself"
            )
    snapshots = _pool_snapshots(run, saved)
    base = _vec_env(cfg, snapshots)
    venv = _timed_vec_env(VecMonitor(base))

    logger = configure(str(new_session(run)), ["csv", "tensorboard"])
    model = _new_model(cfg, venv)
    if saved is not None:
        done_steps = load_resume_checkpoint(model, latest, meta, saved)
        if not restore_rollout(model, latest, saved) and done_steps > 0:
            # an earlier Parlour's checkpoint, written mid-rollout without the games in progress: fresh deals from
            # here on (the same ones on every resume from this step), so this run no longer equals an unstopped one
            print(
                f"{latest} holds no training envs (an earlier Parlour wrote it): the run continues on fresh deals "
                "from this step",
                flush=True,
            )
            venv.seed(int(np.random.SeedSequence([cfg.seed, done_steps]).generate_state(1)[0]))
    elif session.resume and (old := _old_zip(run)) is not None and session.trust_pickle:
        from sb3_contrib import MaskablePPO

        check_compatible(read_meta(old), meta, str(old))
        model = MaskablePPO.load(old, env=venv, device=cfg.train.device)  # unpickles: the user trusted it
        done_steps = int(model.num_timesteps)
    else:
        done_steps = 0
        if cfg.pretrain.teacher:
            with _Stop() as stop:
                cloned = _pretrain(cfg, model, run, meta, stop)
            # the clone alone, before any PPO step: what imitation reached (the distilled track's clone row)
            export_policy(model, run / CLONE_STEM, meta, training_record(meta, 0, pretrain=cloned))
            if session.clone_only:
                venv.close()
                return {"finished": False, "timesteps": 0, "clone": cloned}
            # PPO starts from the cloned weights, also on a resume after a stop from here on
            save_resume_checkpoint(model, latest, meta)
            for done in (PRETRAIN_DATA, PRETRAIN_CLONE):  # kept in the checkpoint just written
                shutil.rmtree(run / "checkpoints" / done, ignore_errors=True)
    model.set_logger(logger)
    remaining = cfg.train.total_timesteps - done_steps
    previous = _previous_metrics(run) if session.resume else {}
    start = time.perf_counter()
    resumed = (saved or {}).get("session")
    with _Stop() as stop:
        callback = PeriodicCallback(
            cfg, run, cfg.game.name, meta, session.progress, stop, wall_before=_wall_before(previous), resumed=resumed
        )
        if remaining > 0:
            try:
                model.learn(remaining, callback=callback, reset_num_timesteps=False)
            except StopAtBoundary:
                callback.on_stop()
        wall = time.perf_counter() - start
        # the training time of every session of the run (a resumed run adds its sessions up)
        train_wall = _wall_before(previous) + wall
        # the envs are still open: their games in progress go into the checkpoint (a finished run's too, so that a
        # raised budget continues exactly)
        save_resume_checkpoint(model, latest, meta, callback.session_state() if remaining > 0 else resumed)
        if remaining > 0:
            callback.prune_snapshots()
        venv.close()
        if stop.signum is not None:
            _write_metrics(run, {"timesteps": int(model.num_timesteps), "train_wall_seconds": train_wall})
            raise TrainingStopped(
                stop.signum,
                f"at step {int(model.num_timesteps):,} of {cfg.train.total_timesteps:,}; checkpoint saved to {latest}",
            )
    env_seconds = type(venv).env_seconds
    # SB3's own archive, for users who fine-tune with SB3 (loading it unpickles it: only behind --trust-pickle)
    save_checkpoint(model, run / "model.zip", meta | {"timesteps": model.num_timesteps})
    pretrained = read_json(run / PRETRAIN_FILE, "pretraining report") if (run / PRETRAIN_FILE).is_file() else None
    record = training_record(
        meta, model.num_timesteps, evaluations=evaluations(run), train_wall_seconds=train_wall, pretrain=pretrained
    )
    export_policy(model, run / POLICY_STEM, meta, record)

    report = final_evaluation(cfg, run, session.progress) if session.final_eval else None
    plot_learning_curve(run)
    session_steps = int(model.num_timesteps) - done_steps
    metrics = {
        "finished": True,
        "timesteps": int(model.num_timesteps),
        "session_steps": session_steps,
        "session_wall_seconds": wall,
        "train_wall_seconds": train_wall,
        "steps_per_second": session_steps / wall if wall > 0 else None,
        "env_seconds": env_seconds,
        "env_share": env_seconds / wall if wall > 0 else None,
        "learner_share": 1 - env_seconds / wall if wall > 0 else None,
        "final_eval": dict(report["policies"]) if report is not None else None,
    }
    _write_metrics(run, metrics)
    return {**metrics, FINAL_REPORT: report}  # the whole report for the caller to print; metrics.json keeps rates


def _pool_snapshots(run: Path, saved: dict[str, Any] | None) -> list[Path]:
    """The self-play snapshots in the opponent pool: those the checkpoint resumed from names (in its order), else
    every snapshot in the run folder. A named one that is missing is refused in one line."""
    names = ((saved or {}).get("session") or {}).get("snapshots")
    if names is None:
        return sorted((run / "snapshots").glob("snap_*.json"))
    paths = [run / "snapshots" / f"{name}.json" for name in names]
    missing = [str(p) for p in paths if not p.is_file() or p.is_symlink() or p.name.startswith(".")]
    if missing:
        raise RunError(f"--resume: the checkpoint's opponent pool needs {', '.join(missing)}, which is missing")
    return paths


def new_session(run: Path) -> Path:
    """A new, empty log folder for this start or resume (``logs/session_K``, K one past the highest there): made
    afresh, so nothing planted in the run folder is written through."""
    numbers = [int(p.name[8:]) for p in (run / "logs").glob("session_*") if p.name[8:].isdigit()]
    folder = run / "logs" / f"session_{max(numbers, default=-1) + 1}"
    folder.mkdir(parents=True)
    return folder


def _wall_before(previous: dict[str, Any]) -> float:
    """The training seconds of a run's earlier sessions, from the metrics they wrote."""
    return float(previous.get("train_wall_seconds", previous.get("session_wall_seconds", 0.0)))


def _previous_metrics(run: Path) -> dict[str, Any]:
    """The metrics an earlier session of the run wrote (``{}`` if none); a broken file is named in the error."""
    path = run / "metrics.json"
    if not path.is_file():
        return {}
    metrics = read_json(path, "metrics file")
    if not isinstance(metrics, dict):
        raise RunError(f"{path} is not a metrics file (expected a JSON object)")
    return metrics


def _write_metrics(run: Path, metrics: dict[str, Any]) -> None:
    atomic_write(run / "metrics.json", json.dumps(metrics, indent=2))


#: The pretraining report in a run folder (``pretrain`` in the config).
PRETRAIN_FILE = "pretrain.json"
#: Behaviour cloning's own checkpoints, under ``RUN/checkpoints/``: the teacher's games (``data``) and the cloned
#: network after each epoch (``clone``).
PRETRAIN_DATA, PRETRAIN_CLONE = "pretrain_data", "pretrain_clone"


def _pretrain(cfg: TrainConfig, model: Any, run: Path, meta: dict[str, Any], stop: _Stop) -> dict[str, Any]:
    """Behaviour cloning of ``cfg.pretrain.teacher`` on the learner's tables (a separate env, its own seed).

    Resumable: a stop while the teacher plays saves the games played so far and the random state
    (``checkpoints/pretrain_data``), and one while cloning keeps the network after its last whole epoch
    (``checkpoints/pretrain_clone``); the next start continues from there, with the same result as a run that never
    stopped. Raises :class:`TrainingStopped` after saving."""
    from parlour.training.pretrain import behaviour_clone, teacher_data

    pre = cfg.pretrain
    data_dir, clone_dir = run / "checkpoints" / PRETRAIN_DATA, run / "checkpoints" / PRETRAIN_CLONE
    saved: dict[str, Any] = read_checkpoint(data_dir)[1] if is_checkpoint(data_dir) else {}
    seconds = float(saved.get("seconds", 0.0))
    start = time.perf_counter()
    rng = np.random.default_rng([cfg.seed, 1])
    data: dict[str, np.ndarray] = saved.get("data", {})
    games = int(saved.get("games", 0))
    if games < pre.games:
        if saved:
            rng.bit_generator.state = saved["rng"]
        env = _make_env_fn(cfg, cfg.train.n_envs, [], cfg.seed)()  # the training tables, one index past the envs'
        data, games = teacher_data(
            env,
            resolve_for(cfg, pre.teacher),
            pre.games,
            rng,
            data=data,
            games_done=games,
            should_stop=lambda: stop.signum is not None,  # asked between games: a stop keeps the games played
        )
        seconds += time.perf_counter() - start
        start = time.perf_counter()
        write_checkpoint(
            data_dir,
            meta | {"timesteps": 0},
            {"games": games, "rng": rng.bit_generator.state, "data": data, "seconds": seconds},
        )
        if stop.signum is not None:
            raise TrainingStopped(
                stop.signum,
                f"during behaviour cloning ({games:,} of {pre.games:,} teacher games played); they are saved in "
                f"{data_dir}",
            )
    progress: dict[str, Any] = {}
    if is_checkpoint(clone_dir):
        progress = read_checkpoint(clone_dir)[1]
        model.policy.load_state_dict(progress["policy"])
        seconds += float(progress.get("seconds", 0.0))
    kept = [int(progress.get("epoch", 0))]  # the last whole epoch on disk

    def keep_epoch(epoch: int, optimizer: Any, generator: Any) -> None:
        kept[0] = epoch
        state = {
            "epoch": epoch,
            "policy": model.policy.state_dict(),
            "optimizer": optimizer.state_dict(),
            "generator": generator.get_state(),
            "seconds": seconds + time.perf_counter() - start,
        }
        write_checkpoint(clone_dir, meta | {"timesteps": 0}, state)

    stats = behaviour_clone(
        model.policy,
        data,
        epochs=pre.epochs,
        batch_size=pre.batch_size,
        learning_rate=pre.learning_rate,
        seed=cfg.seed,
        resume=progress or None,
        on_epoch=keep_epoch,
        should_stop=lambda: stop.signum is not None,
    )
    if stats is None:
        assert stop.signum is not None
        raise TrainingStopped(
            stop.signum,
            f"during behaviour cloning (epoch {kept[0]} of {pre.epochs} done); the teacher's games and the cloned "
            f"network are saved in {run / 'checkpoints'}",
        )
    seconds += time.perf_counter() - start
    report = {"teacher": pre.teacher, "games": pre.games, **stats, "seconds": seconds}
    atomic_write(run / PRETRAIN_FILE, json.dumps(report, indent=2))
    print(
        f"pretrained on {pre.teacher} ({pre.games} games, {int(stats['decisions'])} decisions): teacher's action "
        f"{stats['accuracy']:.3f} of the time, value RMSE {stats['value_rmse']:.3f}, {report['seconds']:.0f} s",
        flush=True,
    )
    return report


def final_evaluation(cfg: TrainConfig, run: Path, progress: bool) -> dict[str, Any]:
    """The trained policy (and the config's reference bots) against every evaluation opponent."""
    table = table_for(cfg.game.name, cfg.game.num_players, cfg.game.options)
    trained = PolicyFile(run / f"{POLICY_STEM}.json", table, deterministic=cfg.learner.deterministic, label="ppo")
    report = run_evaluation(
        cfg.game.name,
        [trained, *(resolve_for(cfg, n) for n in cfg.eval.reference)],
        [resolve_for(cfg, n) for n in cfg.eval.opponents],
        num_players=cfg.game.num_players,
        games=cfg.eval.games,
        seed_set=cfg.eval.seed_set,
        env_kwargs=cfg.game.options,
        progress=progress,
    )
    write_report(report, run, "final_eval")
    return report


def plot_learning_curve(run: Path) -> Path:
    """Periodic evaluation win rates (and the training episodes' mean reward) against timesteps."""
    import csv

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    rows = evaluations(run)
    # the opponents' entries (a JAX evaluation's row also says its "backend")
    names = [k for k, v in (rows[0] if rows else {}).items() if k not in ("timesteps", "time") and isinstance(v, dict)]
    for name in names:
        xs = [r["timesteps"] for r in rows if name in r]
        ax1.plot(xs, [r[name]["win_rate"] for r in rows if name in r], marker="o", label=f"vs {name}")
        ax1.fill_between(
            xs,
            [r[name]["win_ci"][0] for r in rows if name in r],
            [r[name]["win_ci"][1] for r in rows if name in r],
            alpha=0.15,
        )
    ax1.set(xlabel="timesteps", ylabel="win rate (95% CI)", title="periodic evaluation", ylim=(0, 1))
    if names:
        ax1.legend()
    xs, ys = [], []
    for session in sorted((run / "logs").glob("session_*")):
        progress = session / "progress.csv"
        if progress.is_file() and progress.stat().st_size:
            with open(progress) as f:
                for r in csv.DictReader(f):
                    if r.get("rollout/ep_rew_mean") and r.get("time/total_timesteps"):
                        xs.append(float(r["time/total_timesteps"]))
                        ys.append(float(r["rollout/ep_rew_mean"]))
    ax2.plot(xs, ys)
    ax2.set(xlabel="timesteps", ylabel="mean episode reward", title="training episodes")
    fig.tight_layout()
    out = atomic_write(run / "learning_curve.png", lambda path: fig.savefig(path, dpi=100, format="png"))
    plt.close(fig)
    return out
