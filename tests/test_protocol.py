"""PettingZoo's calling conventions, enforced with clear messages by the driver of every game."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from parlour.envs import ENVIRONMENTS, make
from parlour.envs.core import ParlourEnv


def _play_out(env: ParlourEnv) -> None:
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(obs["action_mask"].nonzero()[0][0]))


def _step_before_reset(env: ParlourEnv) -> None:
    env.step(0)


def _last_before_reset(env: ParlourEnv) -> None:
    env.last()


def _observe_before_reset(env: ParlourEnv) -> None:
    env.observe("player_0")


def _none_for_the_agent_to_act(env: ParlourEnv) -> None:
    env.reset(seed=0)
    env.step(None)


def _step_after_every_agent_left(env: ParlourEnv) -> None:
    env.reset(seed=0)
    _play_out(env)
    env.step(None)


def _action_for_a_finished_agent(env: ParlourEnv) -> None:
    env.reset(seed=0)
    while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
        env.step(env.legal_actions()[0])
    env.step(0)


CASES: list[tuple[Callable[[ParlourEnv], None], type[Exception], str]] = [
    (_step_before_reset, AttributeError, "agent_selection is not set before reset(); call reset() before step()"),
    (_last_before_reset, AttributeError, "call reset() before step(), last() or observe()"),
    (_observe_before_reset, AttributeError, "call reset() before step(), last() or observe()"),
    (_none_for_the_agent_to_act, ValueError, "step(None) is only for an agent whose game is over"),
    (_step_after_every_agent_left, ValueError, "the game is over and every agent has left; call reset()"),
    (_action_for_a_finished_agent, ValueError, "is done: its step must be step(None), got 0"),
]


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
@pytest.mark.parametrize(("misuse", "error", "message"), CASES, ids=[c[0].__name__.strip("_") for c in CASES])
def test_misuse_gives_a_clear_error(
    name: str, misuse: Callable[[ParlourEnv], None], error: type[Exception], message: str
) -> None:
    env = make(name)
    with pytest.raises(error) as info:
        misuse(env)
    assert message in str(info.value)
    assert name in str(info.value) or "player_" in str(info.value)


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_reset_options_are_used_or_named(name: str) -> None:
    env = make(name)
    env.reset(seed=11)
    _play_out(env)
    record = env.record()
    again = make(name)
    again.reset(options={"game_seed": record["game_seed"]})  # that deal, as a record names it
    for step in record["actions"]:
        again.step(step["action"])
    assert again.record()["outcome"] == record["outcome"]
    with pytest.warns(
        UserWarning, match=r"reset\(\) ignores the options \['num_players'\]; it understands \['game_seed'\]"
    ):
        env.reset(seed=0, options={"num_players": 3})
    assert env.num_players == make(name).num_players
    with pytest.raises(ValueError, match="reset option game_seed=-1 is out of range"):
        env.reset(options={"game_seed": -1})


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_an_env_is_usable_after_a_refused_call(name: str) -> None:
    env = make(name)
    with pytest.raises(AttributeError):
        env.last()
    env.reset(seed=3, options={})  # an empty options dict is what wrappers pass: accepted
    _play_out(env)
    assert env.agents == []
    env.reset(seed=3)
    assert env.agents == env.possible_agents


def test_record_refuses_a_game_it_cannot_replay() -> None:
    env = make("six_suspects_v0")
    with pytest.raises(ValueError, match=r"record\(\): call reset\(\) first"):
        env.record()
    env.reset(seed=1)
    copy = env.resample_hidden("player_0", np.random.default_rng(0))
    with pytest.raises(ValueError, match="no seed to replay"):
        copy.record()
    assert env.record()["game_seed"] == env.game_seed  # the env it was drawn from still records
    env.set_state(env.game)
    with pytest.raises(ValueError, match="no seed to replay"):
        env.record()
