"""``parlour train``: MaskablePPO on one seat of a Parlour game, from a config, into one run folder.

The run folder holds: ``config.yaml`` (resolved), ``command.txt``, ``versions.json``, ``logs/session_K/`` (CSV and
TensorBoard, one session per start or resume), ``evaluations.jsonl`` (periodic evaluations),
``checkpoints/latest.zip`` (written atomically every ``train.checkpoint_every`` steps), ``snapshots/`` (self-play),
``model.zip`` (the final model, an SB3 zip), ``policy.json`` + ``policy.safetensors`` (the final policy as a safe
policy file: what evaluation loads), ``final_eval.json`` / ``final_eval.md``, ``learning_curve.png`` and
``metrics.json`` (throughput, the environment's share of the time, wall time).
"""

from __future__ import annotations

import json
import platform
import shutil
import signal
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from parlour.baselines import resolve
from parlour.baselines.base import Policy
from parlour.baselines.features import Features, field_index, lookup, with_features
from parlour.baselines.policy_file import PolicyFile, check_compatible, table_for
from parlour.envs import make as make_env
from parlour.training.config import ACTIVATIONS, SELF_PLAY, TrainConfig, to_yaml
from parlour.training.evaluate import play_matchup, run_evaluation, write_report
from parlour.training.policies import checkpoint_meta, export_policy, read_meta, save_checkpoint, training_record
from parlour.training.single_agent import SingleAgentEnv

#: The trained policy as a safe policy file in the run folder: ``policy.json`` + ``policy.safetensors``.
POLICY_STEM = "policy"


class RunError(RuntimeError):
    """A run folder that cannot be used as asked."""


class TrainingStopped(RuntimeError):
    """A run stopped by SIGINT (Ctrl-C) or SIGTERM, after writing its checkpoint: ``--resume`` continues it."""

    def __init__(self, signum: int, timesteps: int, total: int, checkpoint: Path) -> None:
        self.signum = signum
        self.timesteps = timesteps
        self.checkpoint = checkpoint
        #: The shell's convention for a process ended by a signal.
        self.exit_code = 128 + signum
        super().__init__(
            f"stopped by {signal.Signals(signum).name} at step {timesteps:,} of {total:,}; checkpoint saved to "
            f"{checkpoint}"
        )


class _StopNow(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised by the signal handler inside a periodic evaluation, which is then abandoned."""


class _Stop:
    """SIGINT/SIGTERM while training: the step finishes, the checkpoint is written, the run stops. A second
    Ctrl-C stops at once (without saving). Only the main thread can take signals; elsewhere this does nothing."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.in_evaluation = False
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
        if self.in_evaluation:
            raise _StopNow


def evaluations(run: Path) -> list[dict[str, Any]]:
    """The periodic evaluations of a run (``evaluations.jsonl``), oldest first."""
    path = run / "evaluations.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


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


def format_evaluation(row: dict[str, Any]) -> str:
    """One line for a periodic evaluation: the step and the win rate against each opponent."""
    parts = [
        f"vs {k} {v['win_rate']:.3f} ({v['win_ci'][0]:.3f}-{v['win_ci'][1]:.3f})"
        for k, v in row.items()
        if isinstance(v, dict)
    ]
    games = next((v["games"] for v in row.values() if isinstance(v, dict)), 0)
    return f"evaluation at step {row['timesteps']:,} ({games} games each): win rate " + ", ".join(parts)


def periodic_evaluation(cfg: TrainConfig, run: Path, policy: Policy | Path, timesteps: int) -> dict[str, Any]:
    """Play the policy (or the policy file at a path) against each evaluation opponent on ``eval.periodic_games``
    deals and append the row to ``evaluations.jsonl``; returns the row."""
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
    with open(run / "evaluations.jsonl", "a") as f:
        f.write(json.dumps(row) + "\n")
    return row


def has_checkpoint(run: Path) -> bool:
    """Whether a run folder holds a checkpoint to resume from (SB3's ``latest.zip`` or RLlib's ``latest/``)."""
    return (run / "checkpoints" / "latest.zip").is_file() or (run / "checkpoints" / "latest" / "parlour.json").is_file()


def checkpoint_step(run: Path) -> int | None:
    """The step a run's checkpoint was written at (``None``: no checkpoint)."""
    zipped = run / "checkpoints" / "latest.zip"
    if zipped.is_file():
        return int(read_meta(zipped).get("timesteps", 0))
    from parlour.training.rllib_train import checkpoint_steps

    return checkpoint_steps(run)


def _callbacks(cfg: TrainConfig, run: Path, env_name: str, meta: dict[str, Any], progress: bool, stop: _Stop) -> Any:
    from stable_baselines3.common.callbacks import BaseCallback, CallbackList

    budget = cfg.train

    class Periodic(BaseCallback):
        """Atomic checkpoints, periodic evaluations, self-play snapshots, stopping on a signal, the progress bar."""

        def _on_training_start(self) -> None:
            self._last = {"ckpt": self.num_timesteps, "eval": self.num_timesteps, "snap": self.num_timesteps}
            self.bar = None
            self._ticking = threading.Event()
            if progress:
                from tqdm import tqdm

                # smoothing=0: the rate (and the ETA) averages the whole session, updates and evaluations
                # included, instead of jumping between fast rollouts and slow updates
                self.bar = tqdm(
                    total=budget.total_timesteps,
                    initial=self.num_timesteps,
                    desc="train",
                    unit="step",
                    smoothing=0,
                    dynamic_ncols=True,
                )
                threading.Thread(target=self._tick, daemon=True).start()

        def _tick(self) -> None:
            # redraw every second, so that elapsed time and ETA keep moving through an update or evaluation
            while not self._ticking.wait(1.0):
                if self.bar is not None:
                    self.bar.refresh()

        def _phase(self, text: str) -> None:
            if self.bar is not None:
                self.bar.set_postfix_str(text, refresh=True)

        def _on_rollout_start(self) -> None:
            self._phase("collecting")

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
            if stop.signum is not None:
                return False  # SB3 ends learn() before any update with a partial rollout
            if self.bar is not None:
                self.bar.update(self.num_timesteps - self.bar.n)  # tqdm throttles the redraws
            if self._due("ckpt", budget.checkpoint_every):
                save_checkpoint(
                    self.model, run / "checkpoints" / "latest.zip", meta | {"timesteps": self.num_timesteps}
                )
            if SELF_PLAY in cfg.opponents and self._due("snap", cfg.self_play.snapshot_every):
                self._snapshot()
            if self._due("eval", budget.eval_every):
                self._phase("evaluating")
                stop.in_evaluation = True
                try:
                    self._evaluate()
                except _StopNow:
                    return False  # a signal during the evaluation: abandon it, the run stops
                finally:
                    stop.in_evaluation = False
                self._phase("collecting")
            return stop.signum is None

        def _snapshot(self) -> None:
            folder = run / "snapshots"
            record = training_record(meta, self.num_timesteps)
            path = export_policy(self.model, folder / f"snap_{self.num_timesteps:010d}", meta, record)
            for old in sorted(folder.glob("snap_*.json"))[: -cfg.self_play.max_snapshots]:
                old.unlink()
                old.with_suffix(".safetensors").unlink(missing_ok=True)
            self.training_env.env_method("add_opponent", _snapshot_policy(cfg, path))
            pool = self.training_env.get_attr("pool")[0]
            keep = [p for p in pool if not p.name.startswith("self@") or (folder / f"{p.name[5:]}.json").exists()]
            self.training_env.env_method("set_opponents", keep)

        def _evaluate(self) -> None:
            keep = field_index(env_name, cfg.game.num_players, cfg.game.options, cfg.ppo.observation_fields)
            policy = _ModelPolicy(self.model, cfg.learner.deterministic, lookup(cfg.ppo.features, env_name), keep)
            row = periodic_evaluation(cfg, run, policy, self.num_timesteps)
            for name in cfg.eval.opponents:
                self.logger.record(f"eval/win_rate_vs_{name}", row[name]["win_rate"])
            self._say(format_evaluation(row))

        def _on_training_end(self) -> None:
            self._ticking.set()
            if self.bar is not None:
                self.bar.n = self.num_timesteps
                self.bar.set_postfix_str("stopping" if stop.signum is not None else "done", refresh=False)
                self.bar.close()

    return CallbackList([Periodic()])


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


#: Config keys a resumed run may change (``parlour train --resume --out RUN key=value``): its budget and how
#: often it checkpoints, evaluates and how many threads it uses; everything else is the run that was started.
RESUMABLE_KEYS = ("train.total_timesteps", "train.checkpoint_every", "train.eval_every", "train.torch_threads")


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


def saved_config(run: Path) -> TrainConfig:
    """The resolved config a run was started with (``RUN/config.yaml``, overrides included)."""
    from parlour.training.config import load_config

    saved = run / "config.yaml"
    if not saved.is_file():
        raise RunError(f"--resume: {run} holds no run (no config.yaml); start it without --resume")
    return load_config(saved)


def resume_config(run: Path, overrides: list[str]) -> tuple[TrainConfig, dict[str, tuple[Any, Any]]]:
    """The config a resumed run continues with: the one it was started with, plus explicit ``overrides`` of
    :data:`RESUMABLE_KEYS` (an override equal to the saved value changes nothing). Returns it and the changes."""
    from parlour.training.config import load_config

    before = saved_config(run)
    after = load_config(run / "config.yaml", overrides)
    changes = config_changes(before, after)
    _check_resumable(run, changes)
    return after, changes


def _check_resumable(run: Path, changes: dict[str, tuple[Any, Any]]) -> None:
    fixed = {k: v for k, v in changes.items() if k not in RESUMABLE_KEYS}
    if fixed:
        what = "; ".join(f"{k}: started with {old!r}, now {new!r}" for k, (old, new) in fixed.items())
        raise RunError(
            f"--resume: {run} continues the run it started, so these cannot change ({what}); a resume may change "
            f"only {list(RESUMABLE_KEYS)}: start a new run (another --out) for the rest"
        )


def prepare_run(cfg: TrainConfig, run: Path, resume: bool, command: str, overwrite: bool = False) -> TrainConfig:
    """Create (or, with ``resume``, reopen) the run folder; returns the config the run uses.

    A resumed run uses the config it was started with; ``cfg`` may differ from it only in :data:`RESUMABLE_KEYS`
    (anything else is refused), and a change is written to ``config.yaml`` and noted in ``command.txt``.
    """
    saved = run / "config.yaml"
    if resume:
        changes = config_changes(saved_config(run), cfg)
        _check_resumable(run, changes)
        if changes:
            saved.write_text(to_yaml(cfg))  # the next resume continues with these values
            note = ", ".join(f"{k} {old} -> {new}" for k, (old, new) in changes.items())
            command = f"{command}  # resumed with {note}"
    else:
        if run.exists() and any(run.iterdir()):
            if not overwrite:
                raise RunError(
                    f"run folder {run} exists and is not empty: resume it with --resume, start afresh with "
                    "--overwrite, or choose another --out"
                )
            if not saved.is_file():
                raise RunError(f"--overwrite: {run} is not a run folder (no config.yaml); refusing to delete it")
            shutil.rmtree(run)
        run.mkdir(parents=True, exist_ok=True)
        saved.write_text(to_yaml(cfg))
        (run / "versions.json").write_text(json.dumps(versions(), indent=2))
    with open(run / "command.txt", "a") as f:
        f.write(command + "\n")
    return cfg


def train(
    cfg: TrainConfig,
    run: Path,
    *,
    resume: bool = False,
    command: str = "",
    progress: bool = True,
    final_eval: bool = True,
    overwrite: bool = False,
) -> dict:
    """Train, evaluate and write the run folder; returns the metrics.

    ``resume`` continues the run in ``run`` from its latest checkpoint, with the config it was started with
    (``cfg`` may differ from it only in :data:`RESUMABLE_KEYS`). ``final_eval=False`` skips the final evaluation
    (``parlour baselines`` evaluates every seed itself). SIGINT or SIGTERM stops the run after writing its
    checkpoint and raises :class:`TrainingStopped`. A new run that fails before its first checkpoint leaves no
    folder behind.
    """
    cfg = prepare_run(cfg, run, resume, command, overwrite)
    try:
        return _train(cfg, run, resume, progress, final_eval)
    except BaseException as exc:
        if not resume and not isinstance(exc, TrainingStopped) and not has_checkpoint(run):
            shutil.rmtree(run, ignore_errors=True)  # nothing to resume: leave no folder to block the next run
        raise


def train_job(cfg: TrainConfig, run: Path, command: str, overwrite: bool) -> dict:
    """One run of a seed sweep (a Ray task): :func:`train` without progress bars; returns its metrics."""
    return train(cfg, run, command=command, progress=False, overwrite=overwrite)


def _train(cfg: TrainConfig, run: Path, resume: bool, progress: bool, final_eval: bool) -> dict:
    if cfg.trainer == "rllib":
        from parlour.training.rllib_train import train_rllib

        return train_rllib(cfg, run, resume, progress, final_eval)
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

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

    snapshots = sorted((run / "snapshots").glob("snap_*.json"))
    fns = [_make_env_fn(cfg, i, snapshots, cfg.seed) for i in range(cfg.train.n_envs)]
    base = SubprocVecEnv(fns) if cfg.train.vec_env == "subproc" else DummyVecEnv(fns)
    venv = _timed_vec_env(VecMonitor(base))

    latest = run / "checkpoints" / "latest.zip"
    sessions = sorted((run / "logs").glob("session_*"))
    logger = configure(str(run / "logs" / f"session_{len(sessions)}"), ["csv", "tensorboard"])
    if resume and latest.is_file():
        # The run's own file (SB3 zips unpickle on load); its table must still be this config's.
        check_compatible(read_meta(latest), meta, str(latest))  # meta holds this config's table
        model = MaskablePPO.load(latest, env=venv, device=cfg.train.device)
        done_steps = model.num_timesteps
    else:
        ppo = cfg.ppo
        policy: Any = "MlpPolicy"
        skip: dict[str, Any] = {}
        if ppo.skip_features:
            from parlour.baselines.features import lookup, size
            from parlour.training.networks import SkipFeaturesPolicy

            policy, skip = SkipFeaturesPolicy, {"skip": size(lookup(ppo.features, cfg.game.name))}
        model = MaskablePPO(
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
        done_steps = 0
        if cfg.pretrain.teacher:
            _pretrain(cfg, model, run)
    model.set_logger(logger)
    remaining = cfg.train.total_timesteps - done_steps
    previous = json.loads((run / "metrics.json").read_text()) if resume and (run / "metrics.json").is_file() else {}
    start = time.perf_counter()
    with _Stop() as stop:
        if remaining > 0:
            model.learn(
                remaining,
                callback=_callbacks(cfg, run, cfg.game.name, meta, progress, stop),
                reset_num_timesteps=False,
            )
        wall = time.perf_counter() - start
        # the training time of every session of the run (a resumed run adds its sessions up)
        train_wall = previous.get("train_wall_seconds", previous.get("session_wall_seconds", 0.0)) + wall
        venv.close()
        save_checkpoint(model, latest, meta | {"timesteps": model.num_timesteps})
        if stop.signum is not None:
            (run / "metrics.json").write_text(
                json.dumps({"timesteps": int(model.num_timesteps), "train_wall_seconds": train_wall}, indent=2)
            )
            raise TrainingStopped(stop.signum, int(model.num_timesteps), cfg.train.total_timesteps, latest)
    env_seconds = type(venv).env_seconds
    save_checkpoint(model, run / "model.zip", meta | {"timesteps": model.num_timesteps})
    pretrained = json.loads((run / PRETRAIN_FILE).read_text()) if (run / PRETRAIN_FILE).is_file() else None
    record = training_record(
        meta, model.num_timesteps, evaluations=evaluations(run), train_wall_seconds=train_wall, pretrain=pretrained
    )
    export_policy(model, run / POLICY_STEM, meta, record)

    report = final_evaluation(cfg, run, progress) if final_eval else None
    plot_learning_curve(run)
    session_steps = int(model.num_timesteps) - done_steps
    metrics = {
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
    (run / "metrics.json").write_text(json.dumps(metrics, indent=2))
    return metrics


#: The pretraining report in a run folder (``pretrain`` in the config).
PRETRAIN_FILE = "pretrain.json"


def _pretrain(cfg: TrainConfig, model: Any, run: Path) -> dict[str, Any]:
    """Behaviour cloning of ``cfg.pretrain.teacher`` on the learner's tables (a separate env, its own seed)."""
    from parlour.training.pretrain import behaviour_clone, teacher_data

    pre = cfg.pretrain
    env = _make_env_fn(cfg, cfg.train.n_envs, [], cfg.seed)()  # the training tables, one index past the envs'
    start = time.perf_counter()
    data = teacher_data(env, resolve_for(cfg, pre.teacher), pre.games, np.random.default_rng([cfg.seed, 1]))
    stats = behaviour_clone(
        model.policy,
        data,
        epochs=pre.epochs,
        batch_size=pre.batch_size,
        learning_rate=pre.learning_rate,
        seed=cfg.seed,
    )
    report = {"teacher": pre.teacher, "games": pre.games, **stats, "seconds": time.perf_counter() - start}
    (run / PRETRAIN_FILE).write_text(json.dumps(report, indent=2))
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
    names = [k for k in (rows[0] if rows else {}) if k not in ("timesteps", "time")]
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
    out = run / "learning_curve.png"
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out
