"""The SB3 trainer (``trainer: sb3``): MaskablePPO on one seat of a Parlour game, after behaviour cloning when the config
names a teacher, with its callback (atomic checkpoints, periodic evaluations at the multiples of ``train.eval_every``,
self-play snapshots, stopping on a signal, the progress bar). Imported only where SB3 trains.

Checkpoints are written, and a stop is honoured, only between an update and the next rollout: there the whole
training state (network, optimizer, random states, the games in progress, the last observations, the callback's
cadence and snapshot pool) is on hand, so a resumed run equals one that never stopped. Snapshot files that leave the
pool are deleted only once a checkpoint that no longer needs them is written. The run folder it trains into is
:mod:`parlour.training.run`'s.
"""

from __future__ import annotations

import json
import shutil
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from parlour.baselines.base import Policy
from parlour.baselines.features import Features, field_index, with_features
from parlour.baselines.policy_file import PolicyFile, check_compatible, table_for
from parlour.baselines.registry import lookup
from parlour.baselines.sb3_zip import read_meta
from parlour.envs import make as make_env
from parlour.envs.fileio import atomic_write, read_json
from parlour.training.checkpoints import (
    is_checkpoint,
    read_checkpoint,
    rng_state,
    set_rng_state,
    write_checkpoint,
)
from parlour.training.config import ACTIVATIONS, SELF_PLAY, TrainConfig
from parlour.training.policies import checkpoint_meta, export_policy, save_checkpoint, training_record
from parlour.training.run import (
    CHECKPOINT_NAME,
    CLONE_STEM,
    FINAL_REPORT,
    POLICY_STEM,
    PRETRAIN_CLONE,
    PRETRAIN_DATA,
    PRETRAIN_FILE,
    RunError,
    Session,
    Stop,
    TrainingStopped,
    does_not_fit,
    evaluations,
    new_session,
    old_zip,
    previous_metrics,
    wall_before,
    write_metrics,
)
from parlour.training.session import (
    final_evaluation,
    format_evaluation,
    periodic_evaluation,
    plot_learning_curve,
    resolve_for,
)
from parlour.training.single_agent import SingleAgentEnv


def _learner_seat(cfg: TrainConfig) -> int | str:
    return "random" if cfg.learner.seat == "random" else int(cfg.learner.seat)


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


def vec_env(cfg: TrainConfig, snapshots: list[Path]) -> Any:
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


def new_model(cfg: TrainConfig, venv: Any) -> Any:
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


def train_sb3(cfg: TrainConfig, run: Path, session: Session) -> dict:
    """The SB3 trainer's run (:class:`parlour.training.trainers.sb3.SB3Trainer`): MaskablePPO on one seat, after
    behaviour cloning when the config names a teacher."""
    import torch
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.vec_env import VecMonitor

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
    base = vec_env(cfg, snapshots)
    venv = _timed_vec_env(VecMonitor(base))

    logger = configure(str(new_session(run)), ["csv", "tensorboard"])
    model = new_model(cfg, venv)
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
    elif session.resume and (old := old_zip(run)) is not None and session.trust_pickle:
        from sb3_contrib import MaskablePPO

        check_compatible(read_meta(old), meta, str(old))
        model = MaskablePPO.load(old, env=venv, device=cfg.train.device)  # unpickles: the user trusted it
        done_steps = int(model.num_timesteps)
    else:
        done_steps = 0
        if cfg.pretrain.teacher:
            with Stop() as stop:
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
    previous = previous_metrics(run) if session.resume else {}
    start = time.perf_counter()
    resumed = (saved or {}).get("session")
    with Stop() as stop:
        callback = PeriodicCallback(
            cfg, run, cfg.game.name, meta, session.progress, stop, wall_before=wall_before(previous), resumed=resumed
        )
        if remaining > 0:
            try:
                model.learn(remaining, callback=callback, reset_num_timesteps=False)
            except StopAtBoundary:
                callback.on_stop()
        wall = time.perf_counter() - start
        # the training time of every session of the run (a resumed run adds its sessions up)
        train_wall = wall_before(previous) + wall
        # the envs are still open: their games in progress go into the checkpoint (a finished run's too, so that a
        # raised budget continues exactly)
        save_resume_checkpoint(model, latest, meta, callback.session_state() if remaining > 0 else resumed)
        if remaining > 0:
            callback.prune_snapshots()
        venv.close()
        if stop.signum is not None:
            write_metrics(run, {"timesteps": int(model.num_timesteps), "train_wall_seconds": train_wall})
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
    write_metrics(run, metrics)
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


def _pretrain(cfg: TrainConfig, model: Any, run: Path, meta: dict[str, Any], stop: Stop) -> dict[str, Any]:
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


class PeriodicCallback(BaseCallback):
    """Atomic checkpoints, periodic evaluations, self-play snapshots, stopping on a signal, the progress bar."""

    def __init__(
        self,
        cfg: TrainConfig,
        run: Path,
        env_name: str,
        meta: dict[str, Any],
        progress: bool,
        stop: Stop,
        wall_before: float = 0.0,
        resumed: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.cfg, self.run, self.env_name, self.meta, self.progress, self.stop = (
            cfg,
            run,
            env_name,
            meta,
            progress,
            stop,
        )
        #: Training seconds of the run's earlier sessions (a resumed run adds its sessions up).
        self.wall_before = wall_before
        #: The cadence state saved in the checkpoint resumed from (see :meth:`session_state`).
        self.resumed = resumed or {}

    def _on_training_start(self) -> None:
        self._started = time.perf_counter()
        # the last snapshot's step comes from the checkpoint: the snapshots fall on the same steps across a resume
        self._last = {"ckpt": self.num_timesteps, "snap": int(self.resumed.get("last_snap", self.num_timesteps))}
        self.bar = None
        self._ticking = threading.Event()
        if self.progress:
            from tqdm import tqdm

            # smoothing=0: the rate (and the ETA) averages the whole session, updates and evaluations
            # included, instead of jumping between fast rollouts and slow updates
            self.bar = tqdm(
                total=self.cfg.train.total_timesteps,
                initial=self.num_timesteps,
                desc="train",
                unit="step",
                smoothing=0,
                dynamic_ncols=True,
            )
            threading.Thread(target=self._tick, daemon=True).start()
        # Evaluations fall on the multiples of eval_every whatever the resumes (every seed's curve has the same
        # points), 0 among them: the policy before its first rollout (the untrained network, or the clone of a run
        # that imitates a teacher), once per run -- a resume at step 0 whose session already wrote that point does
        # not write it again. One owed at the resumed step -- a stop during the evaluation at the checkpoint's step
        # abandoned it, and the weights resumed are the ones it was to evaluate -- is done now.
        done = [r["timesteps"] for r in evaluations(self.run)]
        self._next_eval = self._eval_after(max(done, default=0))
        if self.cfg.train.eval_every > 0 and self.num_timesteps == 0 and 0 not in done:
            with initial_rng(self.cfg):  # the training draws what it would without this point
                self._evaluate_now()
        elif self.cfg.train.eval_every > 0 and self.num_timesteps >= self._next_eval:
            self._next_eval = self._eval_after(self.num_timesteps)
            self._evaluate_now()

    def _eval_after(self, step: int) -> int:
        every = self.cfg.train.eval_every
        return (step // every + 1) * every if every > 0 else 0

    def _tick(self) -> None:
        # redraw every second, so that elapsed time and ETA keep moving through an update or evaluation
        while not self._ticking.wait(1.0):
            if self.bar is not None:
                self.bar.refresh()

    def _phase(self, text: str) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=True)

    def _on_rollout_start(self) -> None:
        # between an update and the next rollout: the only place a run stops or checkpoints (see the module's doc)
        if self.stop.signum is not None:
            raise StopAtBoundary
        if self._due("ckpt", self.cfg.train.checkpoint_every):
            save_resume_checkpoint(
                self.model, self.run / "checkpoints" / CHECKPOINT_NAME, self.meta, self.session_state()
            )
            self.prune_snapshots()
            # the time so far beside each checkpoint: a session killed outright (no signal to catch) loses at most
            # the time since its last checkpoint from the run's total, as it loses those steps
            wall = self.wall_before + time.perf_counter() - self._started
            write_metrics(self.run, {"timesteps": int(self.num_timesteps), "train_wall_seconds": wall})
        self._phase("collecting")

    def session_state(self) -> dict[str, Any]:
        """What the checkpoint keeps of this callback: the last snapshot's step and the snapshots in the pool."""
        return {"last_snap": int(self._last["snap"]), "snapshots": pool_snapshots(self.training_env)}

    def prune_snapshots(self) -> None:
        """Delete the snapshot files no longer in the pool (after a checkpoint that no longer needs them)."""
        keep = set(pool_snapshots(self.training_env))
        for old in sorted((self.run / "snapshots").glob("snap_*.json")):
            if old.stem not in keep:
                old.unlink()
                old.with_suffix(".safetensors").unlink(missing_ok=True)

    def _on_rollout_end(self) -> None:
        self._phase("updating the network")

    def _say(self, line: str) -> None:
        if self.bar is not None:
            self.bar.write(line)
        else:
            print(line, flush=True)

    def _due(self, key: str, every: int) -> bool:
        if every > 0 and self.num_timesteps - self._last[key] >= every:
            self._last[key] = self.num_timesteps
            return True
        return False

    def _on_step(self) -> bool:
        # A stop asked for during a rollout is honoured at the next rollout's start (:meth:`_on_rollout_start`): the
        # rollout and its update finish first, so that nothing is lost and the checkpoint holds a whole state.
        if self.bar is not None:
            self.bar.update(self.num_timesteps - self.bar.n)  # tqdm throttles the redraws
            if self.stop.signum is not None:
                self._phase("stopping after this rollout and its update")
        if SELF_PLAY in self.cfg.opponents and self._due("snap", self.cfg.self_play.snapshot_every):
            self._snapshot()
        if self.cfg.train.eval_every > 0 and self.num_timesteps >= self._next_eval:
            self._next_eval = self._eval_after(self.num_timesteps)
            self._evaluate_now()
        return True

    def _evaluate_now(self) -> None:
        """Evaluate (a stop asked for meanwhile waits for it: the run's curve keeps every point; a second Ctrl-C
        stops at once, and the run resumes from its last checkpoint)."""
        self._phase("evaluating")
        self._evaluate()
        self._phase("collecting")

    def _snapshot(self) -> None:
        folder = self.run / "snapshots"
        record = training_record(self.meta, self.num_timesteps)
        path = export_policy(self.model, folder / f"snap_{self.num_timesteps:010d}", self.meta, record)
        self.training_env.env_method("add_opponent", _snapshot_policy(self.cfg, path))
        pool = self.training_env.get_attr("pool")[0]
        # the newest max_snapshots stay in the pool; the files of the others go at the next checkpoint
        names = sorted(p.name for p in pool if p.name.startswith("self@"))
        keep = [
            p for p in pool if not p.name.startswith("self@") or p.name in names[-self.cfg.self_play.max_snapshots :]
        ]
        self.training_env.env_method("set_opponents", keep)

    def _evaluate(self) -> None:
        row = periodic_evaluation(self.cfg, self.run, model_policy(self.cfg, self.model), self.num_timesteps)
        for name in self.cfg.eval.opponents:
            self.logger.record(f"eval/win_rate_vs_{name}", row[name]["win_rate"])
        self._say(format_evaluation(row, self.cfg.game.num_players))

    def on_stop(self) -> None:
        """The run stops at a rollout's start (:class:`StopAtBoundary`): SB3 did not end the training, so close here."""
        self._on_training_end()

    def _on_training_end(self) -> None:
        self._ticking.set()
        if self.bar is not None:
            self.bar.n = self.num_timesteps
            self.bar.set_postfix_str("stopping" if self.stop.signum is not None else "done", refresh=False)
            self.bar.close()


def pool_snapshots(venv: Any) -> list[str]:
    """The names (file stems) of the learner's snapshots in the training envs' opponent pool, in pool order."""
    try:
        pool = venv.get_attr("pool")[0]
    except AttributeError:  # the JAX batch holds batched bots only: no snapshots
        return []
    return [p.name[5:] for p in pool if p.name.startswith("self@")]
