"""Behaviour cloning before PPO: the data it collects and what fitting it does."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402

from parlour.baselines import make as make_bot  # noqa: E402
from parlour.training.config import ConfigError, load_config  # noqa: E402
from parlour.training.pretrain import behaviour_clone, teacher_data  # noqa: E402
from parlour.training.single_agent import SingleAgentEnv  # noqa: E402

ENV = "six_suspects_v0"


def test_teacher_data_holds_the_teachers_legal_actions_and_the_returns_that_followed() -> None:
    env = SingleAgentEnv(ENV, [make_bot("random")], env_kwargs={"reward": "vote"}, seed=0)
    data, games = teacher_data(env, make_bot("six_suspects_expert"), 5, np.random.default_rng(0))
    n = len(data["actions"])
    assert games == 5
    assert n > 5 and data["obs"].shape == (n, env.observation_space.shape[0])
    assert data["masks"][np.arange(n), data["actions"]].all()  # every action was legal where it was taken
    # one vote per game pays +-1 at the end of it: the return-to-go is that reward at every decision of a game
    assert set(np.unique(data["returns"])) <= {-1.0, 1.0}


def test_teacher_games_stopped_and_continued_are_the_games_played_at_once() -> None:
    def env() -> SingleAgentEnv:
        return SingleAgentEnv(ENV, [make_bot("random")], seed=0)

    whole, _ = teacher_data(env(), make_bot("six_suspects_heuristic"), 6, np.random.default_rng(3))
    rng = np.random.default_rng(3)
    asked = iter([False, False, True])
    part, done = teacher_data(env(), make_bot("six_suspects_heuristic"), 6, rng, should_stop=lambda: next(asked))
    assert done == 2
    state = json.loads(json.dumps(rng.bit_generator.state))  # what the checkpoint keeps of it
    rng = np.random.default_rng()
    rng.bit_generator.state = state
    rest, done = teacher_data(env(), make_bot("six_suspects_heuristic"), 6, rng, data=part, games_done=done)
    assert done == 6
    for key in whole:
        np.testing.assert_array_equal(rest[key], whole[key])


def test_cloning_makes_the_network_act_like_the_teacher() -> None:
    env = SingleAgentEnv(ENV, [make_bot("six_suspects_heuristic")], seed=1)
    data, _ = teacher_data(env, make_bot("six_suspects_expert"), 40, np.random.default_rng(1))
    model = MaskablePPO("MlpPolicy", env, seed=0, device="cpu")
    before = behaviour_clone(model.policy, data, epochs=1, batch_size=64, learning_rate=1e-12, seed=0)
    after = behaviour_clone(model.policy, data, epochs=30, batch_size=64, learning_rate=1e-3, seed=0)
    assert after["nll"] < 0.5 * before["nll"]
    assert after["accuracy"] > before["accuracy"] + 0.3


def test_a_run_with_pretraining_reports_it_in_the_run_and_the_policy_file(tmp_path: Path) -> None:
    from parlour.training.cli import main

    out = tmp_path / "run"
    args = ["train", "tests/data/six_suspects_base.yaml", "pretrain.teacher=six_suspects_heuristic",
            "pretrain.games=10", "train.total_timesteps=512", "train.n_envs=2", "ppo.n_steps=256",
            "ppo.batch_size=256", "train.eval_every=0", "eval.games=2", "--out", str(out), "--no-progress"]  # fmt: skip
    assert main(args) == 0
    report = json.loads((out / "pretrain.json").read_text())
    assert report["teacher"] == "six_suspects_heuristic" and report["games"] == 10 and report["decisions"] > 10
    assert json.loads((out / "policy.json").read_text())["training"]["pretrain"] == report


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["pretrain.teacher=nobody"], "pretrain.teacher: unknown policy 'nobody'"),
        (["pretrain.teacher=random", "pretrain.games=0"], r"pretrain.games=0 is out of range"),
        (["pretrain.teacher=random", "trainer=rllib"], "pretrain.teacher is supported with trainer: sb3 only"),
    ],
)
def test_bad_pretraining_configs_are_refused(overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config("tests/data/six_suspects_base.yaml", overrides)


def test_no_teacher_means_no_pretraining_and_is_valid() -> None:
    # a shipped config that leaves pretrain out loads with the empty teacher (the default, not an empty list to
    # refuse); one that names a teacher keeps it
    configs = [p for p in sorted(Path("configs").glob("*/*.yaml")) if p.name != "baselines.yaml"]
    without = [p for p in configs if "pretrain:" not in p.read_text()]
    assert without and len(without) < len(configs)
    for path in configs:
        teacher = load_config(path, []).pretrain.teacher
        assert (teacher == "") is (path in without), path
