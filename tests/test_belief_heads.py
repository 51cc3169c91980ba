"""Belief heads (``ppo.hindsight_coef``): the jitted trainer's auxiliary targets are the end-of-game reveal of the
episode each step belongs to, they are refused where they cannot be right, and the policy file has no head."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("optax")

from parlour.training.config import ConfigError, load_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RL = ROOT / "configs" / "six_suspects" / "rl.yaml"

# One game (B = 1) over six steps: (done per step, the expected target per step as the index of the step whose
# hindsight it is, -1 for none: the episode did not end within the rollout).
BACKFILL_CASES = [
    ([0, 0, 1, 0, 0, 1], [2, 2, 2, 5, 5, 5]),
    ([1, 0, 0, 0, 0, 0], [0, -1, -1, -1, -1, -1]),
    ([0, 0, 0, 0, 0, 0], [-1, -1, -1, -1, -1, -1]),
    ([1, 1, 0, 1, 0, 0], [0, 1, 3, 3, -1, -1]),
    ([0, 0, 0, 0, 0, 1], [5, 5, 5, 5, 5, 5]),
]


@pytest.mark.parametrize(("done", "expected"), BACKFILL_CASES)
def test_each_step_is_taught_the_reveal_of_the_episode_it_belongs_to(done: list[int], expected: list[int]) -> None:
    from parlour.training.jax_ppo import backfill

    steps = len(done)
    hint = np.arange(steps, dtype=np.float32)[:, None, None] + np.zeros((steps, 1, 2), np.float32)  # step t: [t, t]
    targets, valid = backfill(jax.numpy.asarray(hint), jax.numpy.asarray(np.array(done, bool)[:, None]))
    targets, valid = np.asarray(targets)[:, 0, 0], np.asarray(valid)[:, 0]
    assert valid.tolist() == [e >= 0 for e in expected]
    assert targets[valid].tolist() == [e for e in expected if e >= 0]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["ppo.hindsight_coef=-0.5"], r"ppo.hindsight_coef=-0.5 is out of range: expected a finite number >= 0"),
        (["ppo.hindsight_coef=0.5", "trainer=sb3"], r"belief heads are supported with trainer: jax only"),
        (["ppo.hindsight_coef=0.5", "game.options.num_games=3"], r"shows the last game of a match only"),
    ],
)  # fmt: skip
def test_belief_heads_are_refused_where_they_cannot_be_right(
    overrides: list[str], message: str, jax_tiny: tuple[str, ...]
) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(RL, [*jax_tiny, *overrides])


# A run with belief heads (self-play, one compilation for both): tests/test_jax_training.py::test_self_play_puts_the_learners_own_policy_in_the_other_seats.
