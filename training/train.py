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
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from parlour.baselines import resolve
from parlour.baselines.base import Policy
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
    def thunk() -> SingleAgentEnv:
        return SingleAgentEnv(
            cfg.game.name,
            _pool(cfg, snapshots),
            env_kwargs={"num_players": cfg.game.num_players, **cfg.game.options},
            learner_seat=_learner_seat(cfg),
            seed=seed * 1000 + index,
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


def _callbacks(cfg: TrainConfig, run: Path, env_name: str, meta: dict[str, Any], progress: bool) -> Any:
    from stable_baselines3.common.callbacks import BaseCallback, CallbackList

    budget = cfg.train

    class Periodic(BaseCallback):
        """Atomic checkpoints, periodic evaluations, self-play snapshots and the progress bar."""

        def _on_training_start(self) -> None:
            self._last = {"ckpt": self.num_timesteps, "eval": self.num_timesteps, "snap": self.num_timesteps}
            self.bar = None
            if progress:
                from tqdm import tqdm

                self.bar = tqdm(total=budget.total_timesteps, initial=self.num_timesteps, desc="train", unit="step")

        def _due(self, key: str, every: int) -> bool:
            if every > 0 and self.num_timesteps - self._last[key] >= every:
                self._last[key] = self.num_timesteps
                return True
            return False

        def _on_step(self) -> bool:
            if self.bar is not None:
                self.bar.update(self.num_timesteps - self.bar.n)  # tqdm throttles the redraws
            if self._due("ckpt", budget.checkpoint_every):
                save_checkpoint(
                    self.model, run / "checkpoints" / "latest.zip", meta | {"timesteps": self.num_timesteps}
                )
            if SELF_PLAY in cfg.opponents and self._due("snap", cfg.self_play.snapshot_every):
                self._snapshot()
            if self._due("eval", budget.eval_every):
                self._evaluate()
            return True

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
            policy = _ModelPolicy(self.model, cfg.learner.deterministic)
            row: dict[str, Any] = {"timesteps": self.num_timesteps, "time": time.time()}
            for name in cfg.eval.opponents:
                opponent = resolve_for(cfg, name)
                m = play_matchup(
                    env_name,
                    policy,
                    opponent,
                    num_players=cfg.game.num_players,
                    games=cfg.eval.periodic_games,
                    seed_set=cfg.eval.seed_set,
                    env_kwargs=cfg.game.options,
                ).summary()
                row[name] = {k: m[k] for k in ("games", "win_rate", "win_ci", "mean_reward")}
                self.logger.record(f"eval/win_rate_vs_{name}", m["win_rate"])
            with open(run / "evaluations.jsonl", "a") as f:
                f.write(json.dumps(row) + "\n")

        def _on_training_end(self) -> None:
            if self.bar is not None:
                self.bar.n = self.num_timesteps
                self.bar.close()

    return CallbackList([Periodic()])


class _ModelPolicy(Policy):
    """The model being trained, as a policy (for periodic evaluation)."""

    name = "ppo"

    def __init__(self, model: Any, deterministic: bool) -> None:
        self.model = model
        self.deterministic = deterministic

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        action, _ = self.model.predict(
            observation, action_masks=action_mask.astype(bool), deterministic=self.deterministic
        )
        return int(action)


def prepare_run(cfg: TrainConfig, run: Path, resume: bool, command: str) -> TrainConfig:
    """Create (or, with ``resume``, reopen) the run folder; returns the config the run uses."""
    from parlour.training.config import load_config

    saved = run / "config.yaml"
    if resume:
        if not saved.is_file():
            raise RunError(f"--resume: {run} holds no run (no config.yaml); start it without --resume")
        # A resumed run keeps the config it was started with; only its budget may be raised.
        used = load_config(saved, [f"train.total_timesteps={cfg.train.total_timesteps}"])
        if asdict(used) != asdict(cfg):  # both carry the same budget, so any difference is elsewhere
            print(f"note: resuming {run} with the config it was started with ({saved})", file=sys.stderr)
        cfg = used
    else:
        if run.exists() and any(run.iterdir()):
            raise RunError(f"run folder {run} exists and is not empty: resume it with --resume, or choose --out")
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
) -> dict:
    """Train, evaluate and write the run folder; returns the metrics.

    ``final_eval=False`` skips the final evaluation (``parlour baselines`` evaluates every seed itself).
    """
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    cfg = prepare_run(cfg, run, resume, command)
    torch.set_num_threads(cfg.train.torch_threads)
    probe = make_env(cfg.game.name, num_players=cfg.game.num_players, **cfg.game.options)
    meta = checkpoint_meta(probe, {"config": json.loads(json.dumps(asdict(cfg)))})

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
        model = MaskablePPO(
            "MlpPolicy",
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
            },
            seed=cfg.seed,
            device=cfg.train.device,
            verbose=0,
        )
        done_steps = 0
    model.set_logger(logger)
    remaining = cfg.train.total_timesteps - done_steps
    start = time.perf_counter()
    if remaining > 0:
        model.learn(
            remaining,
            callback=_callbacks(cfg, run, cfg.game.name, meta, progress),
            reset_num_timesteps=False,
        )
    wall = time.perf_counter() - start
    env_seconds = type(venv).env_seconds
    venv.close()
    save_checkpoint(model, run / "model.zip", meta | {"timesteps": model.num_timesteps})
    save_checkpoint(model, latest, meta | {"timesteps": model.num_timesteps})
    previous = json.loads((run / "metrics.json").read_text()) if resume and (run / "metrics.json").is_file() else {}
    # the training time of every session of the run (a resumed run adds its sessions up)
    train_wall = previous.get("train_wall_seconds", previous.get("session_wall_seconds", 0.0)) + wall
    record = training_record(meta, model.num_timesteps, evaluations=evaluations(run), train_wall_seconds=train_wall)
    export_policy(model, run / POLICY_STEM, meta, record)

    report = final_evaluation(cfg, run, progress) if final_eval else None
    plot_learning_curve(run)
    metrics = {
        "timesteps": int(model.num_timesteps),
        "session_steps": int(max(0, remaining)),
        "session_wall_seconds": wall,
        "train_wall_seconds": train_wall,
        "steps_per_second": max(0, remaining) / wall if wall > 0 else None,
        "env_seconds": env_seconds,
        "env_share": env_seconds / wall if wall > 0 else None,
        "learner_share": 1 - env_seconds / wall if wall > 0 else None,
        "final_eval": dict(report["policies"]) if report is not None else None,
    }
    (run / "metrics.json").write_text(json.dumps(metrics, indent=2))
    return metrics


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
