"""Learning curves and sample efficiency of a track's training seeds (issue 26's rl section).

Every run evaluates its policy at fixed points of its budget (``train.eval_every``) on the first
``eval.periodic_games`` deals of the evaluation deal set, the same deals at every point and for every seed
(``evaluations.jsonl``). From those points, per algorithm and table:

- the **curve**: the seeds' interquartile mean (IQM, :func:`parlour.training.stats.iqm`) at each point, with the
  band from the lowest to the highest seed;
- the **area under the curve** (AUC): the mean of the IQM curve over the budget, by the trapezoid rule between the
  evaluation points (the curve is taken as flat before the first point), so 1.0 is a policy that wins every game
  from the first step and the number is comparable across budgets;
- the **steps to a level**: the first evaluation point at which the seeds' IQM reaches a reference level (the
  heuristic bot's own win rate at that table), or ``None`` -- "not within budget".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from parlour.training.stats import iqm

#: The method sentence printed beside these numbers.
CURVE_METHOD = (
    "IQM over training seeds at each evaluation point (band: lowest to highest seed); AUC = mean of the IQM curve "
    "over the budget (trapezoid rule, flat before the first point); steps to a level = first evaluation point whose "
    "IQM reaches it"
)


@dataclass(frozen=True)
class Curves:
    """One algorithm's curves at one table: ``values[seed, point]`` win rates at ``steps[point]``."""

    steps: np.ndarray
    values: np.ndarray

    @property
    def iqm(self) -> np.ndarray:
        return np.asarray(iqm(self.values, axis=0), float)


def read_runs(runs: Sequence[Path], opponent: str) -> Curves:
    """The periodic evaluations against ``opponent`` of several runs (one per seed), on the points they all reached."""
    from parlour.training.train import evaluations

    per_run = []
    for run in runs:
        rows = {r["timesteps"]: r[opponent]["win_rate"] for r in evaluations(run) if opponent in r}
        if not rows:
            raise ValueError(f"{run}: no periodic evaluation against {opponent} (evaluations.jsonl)")
        per_run.append(rows)
    steps = sorted(set.intersection(*(set(r) for r in per_run)))
    if not steps:
        raise ValueError(f"the runs {[str(r) for r in runs]} share no evaluation point")
    return Curves(np.asarray(steps, float), np.asarray([[r[s] for s in steps] for r in per_run], float))


def area_under_curve(steps: np.ndarray, values: np.ndarray, budget: float) -> float:
    """The mean of ``values`` over ``[0, budget]`` (trapezoid rule; flat before the first point, and after the last
    point up to the budget)."""
    x = np.concatenate([[0.0], steps, [budget]])
    y = np.concatenate([[values[0]], values, [values[-1]]])
    keep = x <= budget
    from scipy.integrate import trapezoid

    return float(trapezoid(y[keep], x[keep]) / budget)


def steps_to_level(curves: Curves, level: float) -> int | None:
    """The first evaluation point at which the seeds' IQM reaches ``level`` (``None``: not within the budget)."""
    reached = np.flatnonzero(curves.iqm >= level)
    return int(curves.steps[reached[0]]) if reached.size else None


def summary(curves: Curves, budget: float, level: float) -> dict[str, Any]:
    """AUC and steps to ``level`` of one algorithm at one table, and the curve itself."""
    return {
        "steps": curves.steps.astype(int).tolist(),
        "iqm": curves.iqm.tolist(),
        "low": curves.values.min(axis=0).tolist(),
        "high": curves.values.max(axis=0).tolist(),
        "seeds": int(curves.values.shape[0]),
        "auc": area_under_curve(curves.steps, curves.iqm, budget),
        "steps_to_level": steps_to_level(curves, level),
    }


def plot(
    panels: Mapping[str, Mapping[str, Mapping[str, Any]]],
    levels: Mapping[str, Mapping[str, float]],
    out: Path,
    title: str = "",
    budget: float | None = None,
) -> Path:
    """One figure, one panel per table: each algorithm's IQM curve with its seed band (``panels[table][algorithm]``
    is a :func:`summary`), and each reference level at that table (``levels[bot][table]``) as a dashed line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from parlour.envs.fileio import atomic_write

    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.8), squeeze=False, sharey=True)
    for ax, (table, algorithms) in zip(axes[0], panels.items(), strict=True):
        for name, c in algorithms.items():
            ax.plot(c["steps"], c["iqm"], marker="o", ms=3, label=f"{name} (IQM, {c['seeds']} seeds)")
            ax.fill_between(c["steps"], c["low"], c["high"], alpha=0.2)
        for bot, at in levels.items():
            if table in at:
                ax.axhline(at[table], linestyle="--", linewidth=1, color="grey")
                ax.annotate(bot, (0, at[table]), textcoords="offset points", xytext=(2, 2), fontsize=8, color="grey")
        ax.set(xlabel="learner steps", title=f"at the {table} table", ylim=(0, 1))
        if budget is not None:
            ax.set_xlim(0, budget)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("win rate (periodic evaluation)")
    axes[0][-1].legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    atomic_write(out, lambda path: fig.savefig(path, dpi=90, format="png"))
    plt.close(fig)
    return out
