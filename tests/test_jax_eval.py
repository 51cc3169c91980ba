"""``train.eval_backend: jax``: the jitted trainer's periodic evaluations played on the JAX core
(:mod:`parlour.training.jax_eval`) agree with the scalar env's for the same pair of players, rotate the learner's seat,
are a function of their key, write the scalar evaluation's rows without changing the training, and are refused where
they cannot play."""

from __future__ import annotations

import csv
import functools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("optax")

import jax.numpy as jnp  # noqa: E402

from parlour.baselines import resolve  # noqa: E402
from parlour.baselines.base import Policy  # noqa: E402
from parlour.baselines.policy_file import read_spec, read_weights  # noqa: E402
from parlour.training.config import ConfigError, load_config  # noqa: E402
from parlour.training.evaluation.matchups import play_matchup  # noqa: E402
from parlour.training.jax_eval import _table_player, jax_evaluation, win_problem  # noqa: E402
from parlour.training.jax_ppo import PPO  # noqa: E402
from parlour.training.train import train  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RL = ROOT / "configs" / "six_suspects" / "rl.yaml"
N = 3


@pytest.fixture(scope="module")
def tiny(jax_tiny: tuple[str, ...]) -> list[str]:
    """The suite's tiny jitted run (tests/conftest.py), at three players."""
    return [*jax_tiny, "game.num_players=3"]


@pytest.fixture(scope="module")
def ppo(tiny: list[str]) -> PPO:
    return PPO(load_config(RL, tiny))


@pytest.fixture(scope="module")
def first_legal(ppo: PPO) -> dict[str, Any]:
    """Parameters whose logits are all zero: the greedy policy plays the first legal action."""
    return jax.tree_util.tree_map(jnp.zeros_like, ppo.init(jax.random.PRNGKey(0)).params)


class FirstLegal(Policy):
    name = "first_legal"

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        return int(np.flatnonzero(action_mask)[0])


@pytest.mark.parametrize("table", ["random", "six_suspects_heuristic"])
def test_the_jax_evaluation_agrees_with_the_scalar_env_for_the_same_players(
    ppo: PPO, first_legal: dict[str, Any], table: str
) -> None:
    # Against the heuristic the first-legal player wins about 0.17 and the heuristic about 0.39: reading the win of
    # another seat than the learner's, or the learner playing the wrong seat, moves the rate well past the band.
    jax_deals, scalar_deals = 400, 200
    got = jax_evaluation(ppo, first_legal, [table], jax_deals * N, jax.random.PRNGKey(7))[table]
    opponent = resolve(table, "six_suspects_v0", N, {"reward": "win"})
    want = play_matchup(
        "six_suspects_v0", FirstLegal(), opponent, num_players=N, games=scalar_deals, env_kwargs={"reward": "win"}
    ).summary()
    assert got["games"] == jax_deals * N and want["games"] == scalar_deals * N
    # standard errors at the number of deals (the games of a deal may be fully correlated: the conservative side)
    p = (got["win_rate"] + want["win_rate"]) / 2
    se = math.sqrt(p * (1 - p) * (1 / jax_deals + 1 / scalar_deals))
    assert abs(got["win_rate"] - want["win_rate"]) < 4 * se, (got, want["win_rate"])
    se_reward = math.sqrt(
        (1 - ((got["mean_reward"] + want["mean_reward"]) / 2) ** 2) * (1 / jax_deals + 1 / scalar_deals)
    )
    assert abs(got["mean_reward"] - want["mean_reward"]) < 4 * se_reward, (got, want["mean_reward"])
    lo, hi = got["win_ci"]
    assert 0 <= lo <= got["win_rate"] <= hi <= 1


def test_game_i_seats_the_learner_at_i_mod_n(ppo: PPO, first_legal: dict[str, Any]) -> None:
    games = 5 * N + 1
    out = jax.device_get(_table_player(ppo, "random", games)(first_legal, jax.random.PRNGKey(3)))
    np.testing.assert_array_equal(out["seat"], np.arange(games) % N)
    per_seat = jax_evaluation(ppo, first_legal, ["random"], games, jax.random.PRNGKey(3))["random"]["per_seat"]
    assert {s: v["games"] for s, v in per_seat.items()} == {"0": 6, "1": 5, "2": 5}


def test_the_same_key_plays_the_same_games_and_another_key_other_deals(ppo: PPO, first_legal: dict[str, Any]) -> None:
    games = 20 * N
    play = _table_player(ppo, "random", games)
    a = jax.device_get(play(first_legal, jax.random.PRNGKey(5)))
    b = jax.device_get(play(first_legal, jax.random.PRNGKey(5)))
    c = jax.device_get(play(first_legal, jax.random.PRNGKey(6)))
    for k in ("won", "reward"):
        np.testing.assert_array_equal(a[k], b[k])
    assert any(not np.array_equal(a[k], c[k]) for k in ("won", "reward"))
    assert jax_evaluation(ppo, first_legal, ["random"], games, jax.random.PRNGKey(5)) == jax_evaluation(
        ppo, first_legal, ["random"], games, jax.random.PRNGKey(5)
    )


def _training(run: Path) -> tuple[list[list[str]], dict[str, np.ndarray]]:
    with open(next((run / "logs").glob("session_*")) / "progress.csv") as f:
        rows = [r[:3] for r in csv.reader(f)]  # every column but the elapsed seconds
    return rows, read_weights(run / "policy.json", read_spec(run / "policy.json"))


@pytest.mark.slow
def test_a_jitted_run_writes_jax_evaluations_and_trains_as_without_them(tmp_path: Path, tiny: list[str]) -> None:
    with_eval = load_config(RL, [*tiny, "train.eval_backend=jax"])
    train(with_eval, tmp_path / "jax", progress=False, final_eval=False)
    rows = [json.loads(line) for line in (tmp_path / "jax" / "evaluations.jsonl").read_text().splitlines()]
    assert [r["timesteps"] for r in rows] == [0, 256, 512]
    for r in rows:
        assert r["backend"] == "jax" and set(r) == {"timesteps", "time", "backend", "random"}
        assert set(r["random"]) == {"games", "win_rate", "win_ci", "mean_reward"}
        assert r["random"]["games"] == N  # eval.periodic_games deals, each once per seat
    assert not (tmp_path / "jax" / "checkpoints" / "periodic.json").exists()  # no policy exported for the scalar env

    without = load_config(RL, [*tiny, "train.eval_every=0"])
    train(without, tmp_path / "none", progress=False, final_eval=False)
    assert not (tmp_path / "none" / "evaluations.jsonl").exists()
    (log_a, weights_a), (log_b, weights_b) = _training(tmp_path / "jax"), _training(tmp_path / "none")
    assert log_a == log_b
    assert weights_a.keys() == weights_b.keys()
    for k in weights_a:
        np.testing.assert_array_equal(weights_a[k], weights_b[k])


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["train.eval_backend=torch"], r"train.eval_backend='torch' is not valid: expected one of \['scalar', 'jax'\]"),
        (["trainer=sb3", "train.eval_backend=jax"], r"train.eval_backend=jax plays .* inside trainer: jax, not .* sb3"),
        (
            ["train.eval_backend=jax", "eval.opponents=[random,six_suspects_expert]"],
            r"train.eval_backend=jax plays eval.opponents as batched bots, and \['six_suspects_expert'\] have none "
            r"\(of eval.opponents, \['random'\] have one",
        ),
    ],
)
def test_an_eval_backend_that_cannot_play_is_refused_in_one_line(
    overrides: list[str], message: str, tiny: list[str]
) -> None:
    with pytest.raises(ConfigError, match=message) as exc:
        load_config(RL, [*tiny, *overrides])
    assert "\n" not in str(exc.value) and "train.eval_backend" in str(exc.value)


def test_wins_are_read_where_the_core_tells_them() -> None:
    assert win_problem("six_suspects_v0", {"reward": "vote"}) is None  # read from the match scores
    assert win_problem("goes_to_eleven_v0", {"reward": "margin"}) is None  # read from the cards collected
    assert win_problem("elevenses_v0", {}) is None and win_problem("lady_alice_v2", {"reward": "win"}) is None
    assert win_problem("lady_alice_v2", {"reward": "score"}) is None  # the core's winners()


@pytest.mark.parametrize("players", [3, pytest.param(5, marks=pytest.mark.slow)])  # 5: the doubled category too
def test_lady_alices_core_tells_the_winners_of_a_game_that_pays_scores(players: int) -> None:
    """Under ``reward: score`` the core's ``winners`` are the seats the ``win`` core pays +1 on the same deal and
    moves (the win reward is the scalar ``_end``'s winners, by the lock-step checks): last player standing, the
    accuser, ties on points and the round cap (a cap of 2 rounds in half the games) included."""
    from parlour.envs.jax_core import make_core

    ends = []
    for cap in (2, 40):
        win, score = (make_core("lady_alice_v2", players, reward=r, max_rounds=cap) for r in ("win", "score"))
        step = jax.jit(jax.vmap(functools.partial(_random_step, win, score)))
        keys = jax.random.split(jax.random.PRNGKey(players + cap), 24)
        a, b = jax.vmap(win.init)(keys), jax.vmap(score.init)(keys)
        paid = np.zeros((24, players))
        for i in range(2000):
            a, b = step(a, b, jax.random.split(jax.random.PRNGKey(i), 24))
            paid += np.asarray(a.rewards)
            if bool(np.all(np.asarray(a.terminated | a.truncated))):
                break
        assert bool(np.all(np.asarray(b.terminated | b.truncated)))
        np.testing.assert_array_equal(np.asarray(jax.vmap(score.winners)(b)), paid > 0)
        ends.append(np.asarray(b.game_truncated))
    assert np.concatenate(ends).any() and not np.concatenate(ends).all()  # both kinds of end were checked


def _random_step(one: Any, other: Any, a: Any, b: Any, key: Any) -> tuple[Any, Any]:
    """One random legal move, the same in two cores of the same game (they differ in their rewards only)."""
    mask = one.legal_mask(a)
    action = jax.random.categorical(key, jnp.where(mask, 0.0, -jnp.inf)).astype(jnp.int32)
    return one.step(a, action), other.step(b, action)


def test_the_command_plays_a_runs_policy_and_its_policy_file_alike(
    tmp_path: Path, tiny: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m parlour.training.jax_points`` reads the run folder or the exported policy file alone (a published
    seed has no run folder beside it) and plays the same games from either; what it cannot play is refused in one
    line."""
    from parlour.training.jax_points import evaluate_run, main

    run = tmp_path / "run"
    train(load_config(RL, [*tiny, "train.eval_every=0"]), run, progress=False, final_eval=False)
    from_run = evaluate_run(run, ["random"], 4, seed=3)
    assert from_run == evaluate_run(run / "policy.json", ["random"], 4, seed=3)
    assert from_run["random"]["games"] == 4 * N and 0 <= from_run["random"]["win_rate"] <= 1
    assert main([str(run), "--tables", "random", "--deals", "4", "--seed", "3"]) == 0
    rate = from_run["random"]["win_rate"]
    assert f"| random | {4 * N} | {rate:.3f} (" in capsys.readouterr().out
    for argv, message in [
        ([str(tmp_path / "nothing")], "is neither a run folder nor a policy file"),
        ([str(tmp_path)], "is not a finished run folder"),
        ([str(run), "--tables", "six_suspects_expert"], "no batched bot 'six_suspects_expert' for six_suspects_v0"),
        ([str(run), "--deals", "0"], "--deals must be at least 1"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("python -m parlour.training.jax_points: ") and message in err and "\n" not in err
