"""Learning curves, AUC and steps to a level, from the periodic evaluations runs write (``evaluations.jsonl``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from parlour.training.learning_curves import Curves, area_under_curve, plot, read_runs, steps_to_level, summary


def run_with(folder: Path, points: dict[int, float], opponent: str = "heur") -> Path:
    folder.mkdir(parents=True)
    rows = [{"timesteps": s, "time": 0.0, opponent: {"win_rate": w, "games": 4}} for s, w in points.items()]
    (folder / "evaluations.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


@pytest.mark.parametrize(
    ("steps", "values", "budget", "auc"),
    [
        ([100, 200], [0.5, 0.5], 200, 0.5),  # flat: its own level
        ([100, 200], [0.0, 1.0], 200, 0.25),  # no step-0 point: flat 0 to 100, then a ramp to 1: (0 + 50) / 200
        ([50, 100], [0.2, 0.2], 200, 0.2),  # flat after the last point up to the budget
        ([0, 100, 200], [0.0, 1.0, 1.0], 200, 0.75),  # from the step-0 point: a ramp to 1, then 1: (50 + 100) / 200
        ([100, 200], [1.0, 1.0], 200, 1.0),  # the same curve without its step-0 point: flat at 1 from the start
        ([0, 100], [0.0, 0.0], 200, 0.0),  # step 0 and one point, then flat to the budget
    ],
)
def test_the_area_is_the_mean_of_the_curve_over_the_budget(
    steps: list[int], values: list[float], budget: int, auc: float
) -> None:
    assert area_under_curve(np.asarray(steps, float), np.asarray(values), budget) == pytest.approx(auc)


def test_the_area_of_runs_with_and_without_a_step_0_point_starts_flat(tmp_path: Path) -> None:
    # one run has a step-0 point and the other not: the curve keeps the points both have, so it starts flat
    old = run_with(tmp_path / "old", {100: 0.6, 200: 0.6})
    new = run_with(tmp_path / "new", {0: 0.0, 100: 0.6, 200: 0.6})
    assert summary(read_runs([new], "heur"), 200, 0.5)["auc"] == pytest.approx(0.45)  # (30 + 60) / 200
    mixed = read_runs([old, new], "heur")
    assert mixed.steps.tolist() == [100, 200]
    assert summary(mixed, 200, 0.5)["auc"] == pytest.approx(0.6)


def curve(values: list[float], steps: list[int] | None = None) -> Curves:
    """Three seeds with the same win rates: the IQM is those rates."""
    at = steps if steps is not None else [100 * (k + 1) for k in range(len(values))]
    return Curves(np.asarray(at, float), np.tile(np.asarray(values, float), (3, 1)))


@pytest.mark.parametrize(
    ("values", "steps", "reached"),
    [
        ([0.1, 0.5, 0.2, 0.3], None, None),  # one noisy point above the level, then below: no crossing
        ([0.1, 0.5, 0.2, 0.45, 0.5], None, 400),  # the spike is passed over; the confirmed crossing counts
        ([0.1, 0.4, 0.45], None, 200),  # two points in a row at or above the level (reaching it counts)
        ([0.1, 0.2, 0.5], None, None),  # at the last point only: not confirmed, not within the budget
        ([0.1, 0.2, 0.39], None, None),  # never reached
        ([0.9], None, None),  # a single point confirms nothing
        ([0.5, 0.6, 0.1], [0, 100, 200], 0),  # the untrained policy already at the level, confirmed at 100
        ([0.5, 0.1, 0.6, 0.7], [0, 100, 200, 300], 200),  # ... or not: a step-0 point alone is no crossing
    ],
)
def test_steps_to_a_level_need_a_crossing_the_next_point_confirms(
    values: list[float], steps: list[int] | None, reached: int | None
) -> None:
    assert steps_to_level(curve(values, steps), 0.4) == reached


def test_steps_to_a_level_read_the_seeds_iqm_and_say_when_it_is_not_reached(tmp_path: Path) -> None:
    # four seeds: the IQM (mean of the middle two) reaches 0.4 at step 200 and stays there, though one seed got
    # there at 100
    seeds = [
        {100: 0.5, 200: 0.6, 300: 0.6},
        {100: 0.1, 200: 0.4, 300: 0.5},
        {100: 0.2, 200: 0.4, 300: 0.4, 400: 0.9},
        {100: 0.0, 200: 0.1, 300: 0.3},
    ]
    curves = read_runs([run_with(tmp_path / f"s{k}", s) for k, s in enumerate(seeds)], "heur")
    assert curves.steps.tolist() == [100, 200, 300]  # the points every seed reached
    assert curves.iqm.tolist() == pytest.approx([0.15, 0.4, 0.45])
    assert steps_to_level(curves, 0.4) == 200
    assert steps_to_level(curves, 0.41) is None  # reached at 300, the last point, alone
    out = summary(curves, 300, 0.4)
    assert out["seeds"] == 4 and out["low"] == [0.0, 0.1, 0.3] and out["high"] == [0.5, 0.6, 0.6]
    assert out["steps_to_level"] == 200
    with pytest.raises(ValueError, match="no periodic evaluation against nobody"):
        read_runs([tmp_path / "s0"], "nobody")


def test_the_figure_is_written(tmp_path: Path) -> None:
    c = Curves(np.asarray([100.0, 200.0]), np.asarray([[0.1, 0.3], [0.2, 0.4]]))
    panels = {"heuristic": {"ppo": summary(c, 200, 0.38)}, "expert": {"ppo": summary(c, 200, 0.38)}}
    levels = {"heuristic": {"heuristic": 0.38, "expert": 0.30}, "expert": {"heuristic": 0.69, "expert": 0.50}}
    out = plot(panels, levels, tmp_path / "curve.png", "t", budget=200)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
