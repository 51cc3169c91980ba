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
        ([100, 200], [0.0, 1.0], 200, 0.25),  # flat 0 to 100, then a ramp to 1: (0 + 50) / 200
        ([50, 100], [0.2, 0.2], 200, 0.2),  # flat after the last point up to the budget
    ],
)
def test_the_area_is_the_mean_of_the_curve_over_the_budget(
    steps: list[int], values: list[float], budget: int, auc: float
) -> None:
    assert area_under_curve(np.asarray(steps, float), np.asarray(values), budget) == pytest.approx(auc)


def test_steps_to_a_level_read_the_seeds_iqm_and_say_when_it_is_not_reached(tmp_path: Path) -> None:
    # four seeds: the IQM (mean of the middle two) reaches 0.4 at step 200, though one seed got there at 100
    seeds = [{100: 0.5, 200: 0.6}, {100: 0.1, 200: 0.4}, {100: 0.2, 200: 0.4, 300: 0.9}, {100: 0.0, 200: 0.1}]
    curves = read_runs([run_with(tmp_path / f"s{k}", s) for k, s in enumerate(seeds)], "heur")
    assert curves.steps.tolist() == [100, 200]  # the points every seed reached
    assert curves.iqm.tolist() == pytest.approx([0.15, 0.4])
    assert steps_to_level(curves, 0.4) == 200
    assert steps_to_level(curves, 0.41) is None
    out = summary(curves, 200, 0.4)
    assert out["seeds"] == 4 and out["low"] == [0.0, 0.1] and out["high"] == [0.5, 0.6]
    with pytest.raises(ValueError, match="no periodic evaluation against nobody"):
        read_runs([tmp_path / "s0"], "nobody")


def test_the_figure_is_written(tmp_path: Path) -> None:
    c = Curves(np.asarray([100.0, 200.0]), np.asarray([[0.1, 0.3], [0.2, 0.4]]))
    panels = {"heuristic": {"ppo": summary(c, 200, 0.38)}, "expert": {"ppo": summary(c, 200, 0.38)}}
    levels = {"heuristic": {"heuristic": 0.38, "expert": 0.30}, "expert": {"heuristic": 0.69, "expert": 0.50}}
    out = plot(panels, levels, tmp_path / "curve.png", "t", budget=200)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
