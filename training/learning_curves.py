"""Learning curves and sample efficiency of a track's training seeds (issue 26's rl section).

Every run evaluates its policy at fixed points of its budget (``train.eval_every``) on the first
``eval.periodic_games`` deals of the evaluation deal set, the same deals at every point and for every seed
(``evaluations.jsonl``). From those points, per algorithm and table:

- the **curve**: the seeds' interquartile mean (IQM, :func:`parlour.training.stats.iqm`) at each point, with the
  band from the lowest to the highest seed;
- the **area under the curve** (AUC): the mean of the IQM curve over the budget, by the trapezoid rule between the
  evaluation points, starting from the point at step 0 (the untrained policy, which SB3 and JAX runs evaluate since
  issue 38); a curve without one -- runs trained before, RLlib runs, or seeds of which one lacks it -- is taken as
  flat before its first point. It is flat after the last point up to the budget; so 1.0 is a policy that wins every
  game from the first step and the number is comparable across budgets. A run trained before gets its step-0 point
  back with :mod:`parlour.training.publish.initial_point`;
- the **steps to a level**: the first evaluation point at which the seeds' IQM reaches a reference level (the
  heuristic bot's own win rate at that table) and the next point's IQM reaches it too -- a crossing confirmed by
  the following point, so one noisy point above the level is not a crossing; a crossing at the last point alone
  is not confirmed. ``None`` -- "not within budget" -- when no confirmed crossing exists.
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
    "over the budget (trapezoid rule from the step-0 point, flat before the first point where a run has no step-0 "
    "point, flat after the last point); steps to a level = first evaluation point whose IQM reaches it and whose "
    "next point's IQM reaches it too (a crossing at the last point alone is not within budget)"
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
    from parlour.training.run import evaluations

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
    """The mean of ``values`` over ``[0, budget]`` (trapezoid rule from the point at step 0; a curve without one --
    a run trained before runs evaluated step 0 -- is taken as flat before its first point; flat after the last
    point up to the budget)."""
    from scipy.integrate import trapezoid

    steps, values = np.asarray(steps, float), np.asarray(values, float)
    if steps[0] > 0:  # no step-0 point: the first point's value stands in for the untrained policy's
        steps, values = np.concatenate([[0.0], steps]), np.concatenate([[values[0]], values])
    x = np.concatenate([steps, [budget]])
    y = np.concatenate([values, [values[-1]]])
    keep = x <= budget
    return float(trapezoid(y[keep], x[keep]) / budget)


def steps_to_level(curves: Curves, level: float) -> int | None:
    """The first evaluation point at which the seeds' IQM reaches ``level`` and the next point's IQM reaches it too
    (``None``: no such confirmed crossing within the budget; the last point alone confirms nothing)."""
    return confirmed_crossing(curves.steps, curves.iqm, level)


def confirmed_crossing(steps: Any, curve: Any, level: float) -> int | None:
    """:func:`steps_to_level` on a stored curve (``curve[i]`` at ``steps[i]``): how a rendering re-reads it."""
    reached = np.asarray(curve, float) >= level
    # one point above the level and the next below it is noise in a few games, not the policy having got there
    confirmed = np.flatnonzero(reached[:-1] & reached[1:])
    return int(np.asarray(steps)[confirmed[0]]) if confirmed.size else None


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
    log_from: float | None = None,
) -> Path:
    """One figure, one panel per table: each algorithm's IQM curve with its seed band (``panels[table][algorithm]``
    is a :func:`summary`; its ``statistic``, where another than the IQM, names the curve in the legend), and each
    reference level at that table (``levels[bot][table]``) as a dashed line. With ``log_from``, the step axis is
    linear up to it and logarithmic beyond (matplotlib's ``symlog``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from parlour.envs.fileio import atomic_write

    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.8), squeeze=False, sharey=True)
    # one colour per algorithm in every panel, and one legend of them all: an algorithm may have no curve at some
    # table (the jitted family's points are played against the batched bots only)
    names = list(dict.fromkeys(name for algorithms in panels.values() for name in algorithms))
    handles: dict[str, Any] = {}
    for ax, (table, algorithms) in zip(axes[0], panels.items(), strict=True):
        for name, c in algorithms.items():
            colour = f"C{names.index(name) % 10}"
            label = f"{name} ({c.get('statistic', 'IQM')}, {c['seeds']} seeds)"
            (line,) = ax.plot(c["steps"], c["iqm"], marker="o", ms=3, color=colour, label=label)
            handles.setdefault(label, line)
            ax.fill_between(c["steps"], c["low"], c["high"], alpha=0.2, color=colour)
        for bot, at in levels.items():
            if table in at:
                ax.axhline(at[table], linestyle="--", linewidth=1, color="grey")
                ax.annotate(bot, (0, at[table]), textcoords="offset points", xytext=(2, 2), fontsize=8, color="grey")
        ax.set(xlabel="learner steps", title=f"at the {table} table", ylim=(0, 1))
        if log_from is not None:
            ax.set_xscale("symlog", linthresh=log_from)
        if budget is not None:
            ax.set_xlim(0, budget)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("win rate (periodic evaluation)")
    axes[0][-1].legend(list(handles.values()), list(handles), fontsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    atomic_write(out, lambda path: fig.savefig(path, dpi=90, format="png"))
    plt.close(fig)
    return out
