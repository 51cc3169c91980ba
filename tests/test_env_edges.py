"""The driver's edges, for every registered env: what an illegal action tells whom, which values are actions, the
errors for names that are not agents (or have left), and how an action number outside the action space is named."""

from __future__ import annotations

import copy
import re
from typing import Any

import numpy as np
import pytest

from parlour.envs import ENVIRONMENTS, make
from parlour.envs.core import ParlourEnv

NAMES = sorted(ENVIRONMENTS)


def _fresh(name: str, **kwargs: Any) -> ParlourEnv[Any]:
    env = make(name, **kwargs)
    env.reset(seed=0)
    return env


def _play_out(env: ParlourEnv[Any]) -> None:
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))


# ------------------------------------------------------------------------ an illegal action under "penalize"
@pytest.mark.parametrize("name", NAMES)
def test_an_illegal_action_is_explained_to_its_offender_alone(name: str) -> None:
    env = _fresh(name, illegal_action="penalize")
    offender = env.agent_selection
    mask = env.observe(offender)["action_mask"]
    legal = [int(a) for a in np.flatnonzero(mask)]
    bad = int(np.flatnonzero(mask == 0)[0])
    env.step(bad)
    assert env.game_over and env.rewards[offender] == -1.0
    told = env.infos[offender]["illegal_action"]
    assert told["agent"] == offender and told["action"] == bad and told["legal"] == legal
    assert told["message"].startswith(f"illegal action {bad} ({env.decode_action(bad)}) for {offender}; legal actions:")
    assert all(f"{a} ({env.decode_action(a)})" in told["message"] for a in legal)
    for agent in env.agents:  # the others learn who offended, and nothing of its hand
        assert env.infos[agent]["outcome"]["illegal_action"] == {"agent": offender}
        if agent != offender:
            assert set(env.infos[agent]) == {"outcome"}, env.infos[agent]
    assert env.final_outcome is not None and env.final_outcome["illegal_action"] == {"agent": offender}
    assert env.record()["outcome"]["illegal_action"] == {"agent": offender}


@pytest.mark.parametrize("penalised", [False, True], ids=["game-end", "illegal-action"])
@pytest.mark.parametrize("name", NAMES)
def test_final_infos_are_not_shared_between_seats(name: str, penalised: bool) -> None:
    """Each seat has its own info dict and outcome dict (what is put in one reaches no other, nor the env's final
    outcome); the values inside are the same public objects, read-only (a deep copy per seat costs too much)."""
    env = _fresh(name, illegal_action="penalize")
    if penalised:
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0]))
    else:
        while not env.game_over:
            env.step(env.legal_actions()[0])
    infos = [env.infos[a] for a in env.agents]
    outcomes = [info["outcome"] for info in infos] + [env.final_outcome]
    assert len({id(x) for x in infos}) == len(infos) and len({id(x) for x in outcomes}) == len(outcomes)
    truth = copy.deepcopy(env.final_outcome)
    assert all(o == truth for o in outcomes)
    infos[0]["note"] = "mine"
    infos[0]["outcome"]["note"] = "mine"
    infos[0]["outcome"]["winners"] = "mine"
    assert all(set(info) <= {"outcome", "illegal_action"} for info in infos[1:])
    assert all(o == truth for o in outcomes[1:])
    assert env.record()["outcome"] == truth


# ------------------------------------------------------------------------------------ what is an action
NOT_INTEGERS = [
    (True, "bool True"),
    (False, "bool False"),
    (np.bool_(True), "bool True"),
    (3.0, "float 3.0"),
    (np.float32(2), "float32 2.0"),
    (np.float64(1), "float64 1.0"),
    (float("inf"), "float inf"),
    (float("nan"), "float nan"),
    ("3", "str '3'"),
    ([1], "list [1]"),
]


@pytest.mark.parametrize("mode", ["raise", "penalize"])
@pytest.mark.parametrize(("action", "got"), NOT_INTEGERS, ids=[repr(a) for a, _ in NOT_INTEGERS])
@pytest.mark.parametrize("name", NAMES)
def test_only_integers_are_actions(name: str, action: Any, got: str, mode: str) -> None:
    """A value that is not an integer is a programming error, refused in both modes (never played, never penalised)."""
    env = _fresh(name, illegal_action=mode)
    agent = env.agent_selection
    with pytest.raises(ValueError, match=re.escape(f"for {agent}: actions are integers; got {got}")):
        env.step(action)
    assert not env.game_over and env.agent_selection == agent and not any(env.rewards.values())
    env.step(env.legal_actions()[0])  # and the env goes on


@pytest.mark.parametrize("kind", [int, np.int64, np.int32, np.int16, np.uint8, np.intp])
@pytest.mark.parametrize("name", NAMES)
def test_numpy_integers_are_actions(name: str, kind: type) -> None:
    env, twin = _fresh(name), _fresh(name)
    for _ in range(6):
        if env.game_over:
            break
        action = env.legal_actions()[-1]
        env.step(kind(action))
        twin.step(action)
        assert env.agent_selection == twin.agent_selection
        assert np.array_equal(
            env.observe(env.agent_selection)["observation"], twin.observe(env.agent_selection)["observation"]
        )
    assert [a["action"] for a in env.record()["actions"]] == [a["action"] for a in twin.record()["actions"]]
    assert all(type(a["action"]) is int for a in env.record()["actions"])


@pytest.mark.parametrize("name", NAMES)
def test_a_numpy_integer_that_is_illegal_is_named_as_a_number(name: str) -> None:
    env = _fresh(name)
    bad = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match=rf"^illegal action {bad} \({re.escape(env.decode_action(bad))}\) for player_"):
        env.step(np.int64(bad))


# -------------------------------------------------------------------------------- names that are not agents
@pytest.mark.parametrize("who", ["bob", "player_9", "one past the last", "", 0])
@pytest.mark.parametrize("name", NAMES)
def test_observe_refuses_a_name_that_is_not_an_agent(name: str, who: Any) -> None:
    env = _fresh(name)
    if who == "one past the last":
        who = f"player_{env.num_players}"
    expected = f"{name}: {who!r} is not an agent of this env; agents: {env.possible_agents}"
    with pytest.raises(ValueError, match=re.escape(expected)):
        env.observe(who)
    with pytest.raises(ValueError, match=re.escape(expected)):
        env.unwrapped.observation_dict(who)
    with pytest.raises(ValueError, match=re.escape(expected)):
        env.unwrapped.legal_actions(who)
    assert env.observation_space("player_0").contains(env.observe("player_0"))


@pytest.mark.parametrize("name", NAMES)
def test_last_after_every_agent_has_left_says_so(name: str) -> None:
    env = _fresh(name)
    _play_out(env)
    gone = env.agent_selection
    with pytest.raises(
        ValueError,
        match=re.escape(f"{name}: {gone} has left the game (it is over); agents still to step: []; call reset()"),
    ):
        env.last()
    with pytest.raises(ValueError, match="has left the game"):
        env.last(observe=False)
    env.reset(seed=1)
    assert env.last()[0] is not None  # usable again


@pytest.mark.parametrize("name", NAMES)
def test_a_finished_agent_can_still_be_observed(name: str) -> None:
    """PettingZoo's api_test observes a done agent before its dead step, and the Tianshou adapter shows every seat
    its final observation after all the dead steps: both stay allowed (with an all-zero mask)."""
    env = _fresh(name)
    while not env.game_over:
        env.step(env.legal_actions()[0])
    final = {a: env.observe(a)["observation"].copy() for a in env.possible_agents}
    _play_out(env)
    assert env.agents == []
    for agent in env.possible_agents:
        obs = env.observe(agent)
        assert np.array_equal(obs["observation"], final[agent]) and not obs["action_mask"].any()


# -------------------------------------------------------------------------------- numbers outside the space
@pytest.mark.parametrize("which", ["-1", "-2", "num_actions", "huge", "np.int64(-1)"])
@pytest.mark.parametrize("name", NAMES)
def test_an_action_number_outside_the_space_is_not_decoded(name: str, which: str) -> None:
    n = make(name).num_actions
    action = {"-1": -1, "-2": -2, "num_actions": n, "huge": 10**30, "np.int64(-1)": np.int64(-1)}[which]
    expected = f"illegal action {int(action)} (not an action (expected 0..{n - 1})) for player_0; legal actions: "
    env = _fresh(name)
    with pytest.raises(ValueError, match=re.escape(expected)):
        env.step(action)
    penalised = _fresh(name, illegal_action="penalize")
    penalised.step(action)
    assert penalised.infos["player_0"]["illegal_action"]["message"].startswith(expected)
    with pytest.raises(
        ValueError, match=rf"action {int(action)} is out of range: expected an integer in \[0, {n - 1}\]"
    ):
        env.decode_action(int(action))


@pytest.mark.parametrize("name", NAMES)
def test_every_action_in_the_space_has_its_own_name(name: str) -> None:
    env = make(name)
    names = [env.decode_action(a) for a in range(env.num_actions)]
    assert all(names) and len(set(names)) == env.num_actions


def test_the_reward_since_a_seats_last_move_is_what_last_reports_on_its_turn() -> None:
    env = make("goes_to_eleven_v0", num_players=3)
    env.reset(seed=2)
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        assert env.reward_since_last_move(agent) == reward
        if term or trunc:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    with pytest.raises(ValueError, match="player_0"):
        env.reward_since_last_move("player_0")  # every seat has left


def test_a_deal_for_the_pure_rules_leaves_the_env_as_it_was() -> None:
    env = make("six_suspects_v0")
    env.reset(seed=1)
    vector = env.observe(env.agent_selection)["observation"].copy()
    a, b = env.unwrapped.deal(np.random.default_rng(5)), env.unwrapped.deal(np.random.default_rng(5))
    assert not a.is_terminal() and a.legal_mask().tolist() == b.legal_mask().tolist()  # seeded like any deal
    assert np.array_equal(env.observe(env.agent_selection)["observation"], vector) and env.unwrapped.game is not a
