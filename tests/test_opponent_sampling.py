"""``opponent_sampling: prioritised`` (``trainer: jax``): each episode draws its pool entry with probability
``floor / K + (1 - floor) * softmax(loss_ema / temperature)``, ``loss_ema`` being each entry's moving average of the
learner's loss rate, kept in the training state (so a resume carries it) and logged to ``progress.csv``; ``uniform``
(the default) trains as it did before."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("optax")
pytest.importorskip("omegaconf")
pytest.importorskip("matplotlib")

from parlour.training.checkpoints import read_checkpoint  # noqa: E402
from parlour.training.config import ConfigError, load_config  # noqa: E402
from parlour.training.jax_ppo import draw_probabilities, sampling_columns, update_loss_ema  # noqa: E402
from parlour.training.train import train  # noqa: E402

RL = Path(__file__).resolve().parents[1] / "configs" / "six_suspects" / "rl.yaml"
#: The prioritised runs below (3 players, pool [random, six_suspects_heuristic]): a fast-moving average (half the way
#: per update) and a sharp softmax, so that a handful of updates already leans on the harder table. Every run here
#: shares one compilation (they differ only in budget and cadence); no periodic evaluation.
PRIORITISED = (
    "game.num_players=3",
    "opponent_sampling=prioritised",
    "sampling.smoothing=0.5",
    "sampling.temperature=0.1",
    "sampling.floor=0.05",
    "train.eval_every=0",
)


# ------------------------------------------------------------------------------------------------- pure functions
@pytest.mark.parametrize(
    ("ema", "temperature", "floor", "expected"),
    [
        ([0.5, 0.5], 1.0, 0.05, [0.5, 0.5]),  # equal averages: uniform
        ([0.2, 0.2, 0.2, 0.2], 0.1, 0.3, [0.25] * 4),
        ([0.0, 1.0], 1.0, 0.0, [1 / (1 + np.e), np.e / (1 + np.e)]),  # the plain softmax without a floor
        ([0.0, 1.0], 1.0, 1.0, [0.5, 0.5]),  # all floor: uniform
        ([0.0, 1.0], 0.01, 0.1, [0.05, 0.95]),  # a sharp softmax: everything but the floor on the harder entry
        ([0.0, 1.0, 0.3], 1e6, 0.05, [1 / 3] * 3),  # temperature -> large: uniform
    ],
)  # fmt: skip
def test_the_draw_probabilities(ema: list[float], temperature: float, floor: float, expected: list[float]) -> None:
    p = np.asarray(draw_probabilities(np.asarray(ema, np.float32), temperature, floor))
    np.testing.assert_allclose(p, expected, atol=1e-5)
    assert abs(p.sum() - 1) < 1e-5


@pytest.mark.parametrize("floor", [0.0, 0.05, 0.5])
@pytest.mark.parametrize("temperature", [0.01, 0.3, 1.0])
def test_a_higher_loss_rate_is_drawn_more_and_the_floor_holds(floor: float, temperature: float) -> None:
    ema = np.asarray([0.1, 0.9, 0.5, 0.0], np.float32)
    p = np.asarray(draw_probabilities(ema, temperature, floor))
    order = np.argsort(ema)
    assert np.all(np.diff(p[order]) >= 0) and p[1] > p[2] >= p[0]  # a higher loss rate, no less probability
    assert np.all(p >= floor / len(ema) - 1e-7)  # no entry starved
    assert abs(p.sum() - 1) < 1e-5


@pytest.mark.parametrize(
    ("ema", "losses", "episodes", "smoothing", "expected"),
    [
        ([0.5, 0.5], [1, 0], [1, 1], 0.1, [0.55, 0.45]),  # one loss: s toward 1; one win: s toward 0
        ([0.2, 0.8], [1, 0], [1, 1], 0.25, [0.4, 0.6]),
        ([0.3, 0.7, 0.4], [0, 0, 2], [0, 0, 4], 0.5, [0.3, 0.7, 0.45]),  # entries without an ended game keep theirs
        ([0.5, 0.5], [3, 0], [4, 0], 1.0, [0.75, 0.5]),  # smoothing 1: the rollout's loss rate itself
    ],
)  # fmt: skip
def test_the_moving_average_update(
    ema: list[float], losses: list[int], episodes: list[int], smoothing: float, expected: list[float]
) -> None:
    out = update_loss_ema(np.asarray(ema), np.asarray(losses), np.asarray(episodes), smoothing)
    np.testing.assert_allclose(np.asarray(out), expected, atol=1e-6)


def test_pool_entries_listed_twice_get_their_own_columns() -> None:
    assert sampling_columns(["random", "self", "random"]) == ["random_0", "self", "random_2"]


# ------------------------------------------------------------------------------------------------- the config
@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["opponent_sampling=greedy"], r"opponent_sampling='greedy' is not valid: expected one of \['uniform', 'prio"),
        (["trainer=sb3", "opponent_sampling=prioritised"], r"opponent_sampling=prioritised is supported with trainer: jax only"),
        (["sampling.temperature=0"], r"sampling.temperature=0.0 is out of range: expected a finite number > 0"),
        (["sampling.temperature=inf"], r"sampling.temperature=inf is out of range"),
        (["sampling.smoothing=0"], r"sampling.smoothing=0.0 is out of range: expected a finite number in \(0, 1\]"),
        (["sampling.smoothing=1.5"], r"sampling.smoothing=1.5 is out of range"),
        (["sampling.floor=-0.1"], r"sampling.floor=-0.1 is out of range: expected a finite number in \[0, 1\]"),
        (["sampling.floor=nan"], r"sampling.floor=nan is out of range"),
    ],
)  # fmt: skip
def test_a_bad_sampling_config_is_refused_in_one_line(
    overrides: list[str], message: str, jax_tiny: tuple[str, ...]
) -> None:
    with pytest.raises(ConfigError, match=message) as refused:
        load_config(RL, [*jax_tiny, *overrides])
    assert "\n" not in str(refused.value)


# ------------------------------------------------------------------------------------------------- training
def _progress(run: Path) -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    for session in sorted((run / "logs").glob("session_*")):
        with open(session / "progress.csv", newline="") as f:
            rows += list(csv.DictReader(f))
    return rows


def _state(run: Path) -> dict[str, Any]:
    meta, tree = read_checkpoint(run / "checkpoints" / "latest")
    return {
        "timesteps": meta["timesteps"],
        **{k: (str(v.dtype), v.shape, v.tobytes()) for k, v in tree["state"].items()},
    }


def _policy(run: Path) -> dict[str, bytes]:
    from safetensors.numpy import load_file

    return {k: v.tobytes() for k, v in load_file(str(run / "policy.safetensors")).items()}


@pytest.mark.slow
def test_a_prioritised_run_follows_the_loss_rates_and_logs_its_probabilities(
    tmp_path: Path, jax_tiny: tuple[str, ...]
) -> None:
    """At 3 players a near-random learner loses about as often at the heuristic's tables as at random's (seeds 0-3
    give either order after 1k steps), so the test does not bet on which table is harder: it checks that the
    logged probabilities are those of the logged averages, that the averages are loss rates (a near-random learner
    of 3 loses more than it wins: above 0.5, where counting wins would put them below) and that the draws leave
    uniform."""
    run = tmp_path / "run"
    cfg = load_config(RL, [*jax_tiny, *PRIORITISED, "train.total_timesteps=1024"])
    assert train(cfg, run, progress=False, final_eval=False)["finished"]
    rows = _progress(run)
    assert len(rows) == 8  # one row per update of 128 steps
    names = ["random", "six_suspects_heuristic"]
    for row in rows:
        p = np.asarray([float(row[f"sampling/p_{n}"]) for n in names])
        ema = np.asarray([float(row[f"sampling/loss_ema_{n}"]) for n in names], np.float32)
        assert abs(p.sum() - 1) < 1e-5 and p.min() >= 0.05 / 2 - 1e-6
        np.testing.assert_allclose(p, np.asarray(draw_probabilities(ema, 0.1, 0.05)), atol=1e-5)
        assert np.all((ema > 0.5) & (ema <= 1))
    assert max(abs(float(r["sampling/p_random"]) - 0.5) for r in rows) > 0.1  # away from uniform
    # the average is in the checkpoint, equal to the last row's
    _, tree = read_checkpoint(run / "checkpoints" / "latest")
    last = rows[-1]
    np.testing.assert_allclose(tree["state"][".sampling"], [float(last[f"sampling/loss_ema_{n}"]) for n in names])


@pytest.mark.slow
def test_a_resumed_prioritised_run_equals_the_run_that_never_stopped(tmp_path: Path, jax_tiny: tuple[str, ...]) -> None:
    straight, stopped = tmp_path / "straight", tmp_path / "stopped"
    train(load_config(RL, [*jax_tiny, *PRIORITISED]), straight, progress=False, final_eval=False)
    train(load_config(RL, [*jax_tiny, *PRIORITISED, "train.total_timesteps=256"]), stopped, progress=False, final_eval=False)  # fmt: skip
    halfway = read_checkpoint(stopped / "checkpoints" / "latest")[1]["state"][".sampling"]
    assert not np.allclose(halfway, 0.5)  # the average moved before the stop: the resume must carry it
    metrics = train(load_config(RL, [*jax_tiny, *PRIORITISED]), stopped, resume=True, progress=False, final_eval=False)
    assert metrics["finished"] and metrics["timesteps"] == 512 and metrics["session_steps"] == 256
    assert _state(stopped) == _state(straight)
    assert _policy(stopped) == _policy(straight)
    # the logged probabilities of the resumed session continue the straight run's
    keep = [k for k in _progress(straight)[0] if k.startswith("sampling/")]
    assert [[r[k] for k in keep] for r in _progress(stopped)] == [[r[k] for k in keep] for r in _progress(straight)]


@pytest.mark.slow
def test_uniform_sampling_trains_as_before(tmp_path: Path, jax_tiny: tuple[str, ...]) -> None:
    """The default draws with the same keys as a config that never heard of prioritised sampling: the new keys at
    their defaults change nothing, the checkpoint holds no moving average, and the log has no sampling columns."""
    small = (*jax_tiny, "game.num_players=3", "train.total_timesteps=256", "train.eval_every=0")
    bare, explicit = tmp_path / "bare", tmp_path / "explicit"
    train(load_config(RL, list(small)), bare, progress=False, final_eval=False)
    defaults = [
        "opponent_sampling=uniform",
        "sampling.temperature=1.0",
        "sampling.smoothing=0.05",
        "sampling.floor=0.05",
    ]
    train(load_config(RL, [*small, *defaults]), explicit, progress=False, final_eval=False)
    assert _policy(bare) == _policy(explicit)
    assert _state(bare) == _state(explicit)
    assert not any(k.startswith(".sampling") for k in read_checkpoint(bare / "checkpoints" / "latest")[1]["state"])
    assert not any(k.startswith("sampling/") for k in _progress(bare)[0])
    # a prioritised run of the same seed draws otherwise (its tables follow the loss rates)
    other = tmp_path / "prioritised"
    train(load_config(RL, [*small, *PRIORITISED]), other, progress=False, final_eval=False)
    assert _policy(other) != _policy(bare)
