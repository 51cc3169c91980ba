"""What a training session does around its trainer's updates: the periodic evaluations of the policy being trained
(one line each, appended to ``evaluations.jsonl``), the final evaluation at the config's tables, and the learning
curve. Every trainer's session uses these (:mod:`parlour.training.run` holds the run folder below them)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from parlour.baselines import resolve
from parlour.baselines.base import Policy
from parlour.baselines.policy_file import PolicyFile, table_for
from parlour.envs.fileio import append_text, atomic_write
from parlour.training.config import TrainConfig
from parlour.training.evaluation.matchups import play_matchup, run_evaluation, write_report
from parlour.training.run import POLICY_STEM, evaluations


def resolve_for(cfg: TrainConfig, spec: str, label: str | None = None) -> Policy:
    """A policy spec of the config (opponent, evaluation entry) at the config's table."""
    game = cfg.game
    return resolve(spec, game.name, game.num_players, game.options, trust_pickle=cfg.trust_pickle, label=label)


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
