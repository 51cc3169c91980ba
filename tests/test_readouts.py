"""The zero-parameter readouts (the distilled track's readout row): each plays what its feature sets say and
nothing else, checked against the features' own meaning at every decision of real games."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from parlour.baselines import elevenses as EB
from parlour.baselines import lady_alice as LB
from parlour.baselines import make
from parlour.baselines import six_suspects as SB
from parlour.envs import make as make_env
from parlour.envs.elevenses import rules as ER
from parlour.envs.lady_alice import rules as LR
from parlour.envs.six_suspects import rules as SR


def _six(obs: np.ndarray, mask: np.ndarray, action: int) -> None:
    f = SB.belief_features(obs)
    p, values = f[: SR.NUM_SUSPECTS], f[SR.NUM_SUSPECTS : SR.NUM_SUSPECTS + SR.NUM_POSITIONS]
    if action >= SR.VOTE_BASE:  # a vote for a likeliest culprit
        assert p[action - SR.VOTE_BASE] == pytest.approx(p[np.flatnonzero(mask[SR.VOTE_BASE :])].max())
    elif action == SR.ANNOUNCE:  # only once sure enough, or with nothing left to learn
        assert f[-2] >= SB.READOUT_ANNOUNCE_AT or f[-1] <= 1e-9
    else:  # a peek where the expected gain is highest, and only while announcing is not yet due
        assert values[action] == pytest.approx(values[np.flatnonzero(mask[: SR.NUM_POSITIONS])].max())
        assert not (mask[SR.ANNOUNCE] and (f[-2] >= SB.READOUT_ANNOUNCE_AT or f[-1] <= 1e-9))


def _elevenses(obs: np.ndarray, mask: np.ndarray, action: int) -> None:
    f = EB.action_score_features(obs, mask).reshape(2, ER.NUM_ACTIONS)
    if f[1].any():
        assert f[1][action] == 1.0  # an action the expert's scores put first


def _lady_alice(obs: np.ndarray, mask: np.ndarray, action: int) -> None:
    phase = LB.decode(obs).phase
    if phase == LR.SUSPECT:
        info = LB.inquiry_features(obs)
        assert info[action] == pytest.approx(info[np.flatnonzero(mask[: LB.C])].max())
    elif phase == LR.DEDUCE:
        certain = LB.belief_features(obs)[LB.C + LB.K] >= 0.5
        assert action == (LR.ACCUSE if certain else LR.PASS)  # never a counter: no feature scores one


CASES: list[tuple[str, str, Callable[[np.ndarray, np.ndarray, int], None]]] = [
    ("six_suspects_v0", "six_suspects_readout", _six),
    ("elevenses_v0", "elevenses_readout", _elevenses),
    ("lady_alice_v1", "lady_alice_readout", _lady_alice),
]


@pytest.mark.parametrize(("env_name", "name", "check"), CASES)
def test_a_readout_plays_what_its_features_say(
    env_name: str, name: str, check: Callable[[np.ndarray, np.ndarray, int], None]
) -> None:
    env: Any = make_env(env_name, num_players=4)
    readout, other = make(name), make(name.replace("readout", "heuristic"))
    rng = np.random.default_rng(0)
    decisions = 0
    for game in range(3):
        env.reset(seed=game)
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            seat = env.possible_agents.index(agent)
            policy = readout if seat == game % 4 else other
            action = policy.act(obs["observation"], obs["action_mask"], rng)
            if policy is readout:
                check(obs["observation"], obs["action_mask"], action)
                decisions += 1
            env.step(action)
    assert decisions > 10
