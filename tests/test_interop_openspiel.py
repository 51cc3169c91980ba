"""The OpenSpiel bridge (``parlour.envs.interop.openspiel``): OpenSpiel's own checks and algorithms on every game."""

from __future__ import annotations

import numpy as np
import pytest

from parlour.envs import ENVIRONMENTS, game_of, make
from parlour.envs.declaration import env_ids

pyspiel = pytest.importorskip("pyspiel")
ps = pytest.importorskip("parlour.envs.interop.openspiel")


def _tier(name: str, players: int) -> list[pytest.MarkDecorator]:
    """The bridge is one code path for every player count (the envs' own counts are checked by the conformance
    suite): each current env at its default count runs by default, every other count and the previous versions of a
    game in the slow tier."""
    env = make(name)
    latest = env_ids(game_of(name))[0]  # a game's versions are declared newest first
    return [] if name == latest and players == env.num_players else [pytest.mark.slow]


CASES = [
    pytest.param(name, n, marks=_tier(name, n), id=f"{name}-{n}p")
    for name in sorted(ENVIRONMENTS)
    for n in range(make(name).min_players, make(name).max_players + 1)
]


@pytest.mark.parametrize(("name", "players"), CASES)
def test_openspiel_random_sim_test_passes_for_every_game_and_player_count(name: str, players: int) -> None:
    game = ps.load(name, players=players, rng_seed=players)
    assert game.num_players() == players and game.num_distinct_actions() == make(name, num_players=players).num_actions
    # OpenSpiel's own consistency test: legal actions, clones, returns within the utility bounds, game length
    pyspiel.random_sim_test(game, num_sims=1, serialize=False, verbose=False)


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_states_carry_the_envs_information_state_and_resample_through_resample_hidden(name: str) -> None:
    game = ps.load(name, rng_seed=4)
    state = game.new_initial_state()
    rng = np.random.default_rng(4)
    for _ in range(9):
        state.apply_action(int(rng.choice(state.legal_actions())))
    env = state.env
    for p, agent in enumerate(env.possible_agents):
        assert np.array_equal(
            np.asarray(state.information_state_tensor(p), np.float32), env.observe(agent)["observation"]
        )
        copy = state.resample_from_infostate(p, pyspiel.UniformProbabilitySampler(0.0, 1.0))
        # the player's information state is kept, and its world is redrawn by the env's own (audited) resampler
        assert copy.information_state_string(p) == state.information_state_string(p)
        if p == state.current_player():
            assert copy.legal_actions() == state.legal_actions()  # its own choices are its own information
    others = [state.resample_from_infostate(0, pyspiel.UniformProbabilitySampler(0.0, 1.0)) for _ in range(8)]
    assert len({o.env.state().tobytes() for o in others}) > 1  # hidden cards really are redrawn


def test_rng_seed_makes_the_sequence_of_deals_reproducible_and_options_reach_the_rules() -> None:
    a, b = (ps.load("goes_to_eleven_v0", rng_seed=7, options={"reward": "margin"}) for _ in range(2))
    assert [str(a.new_initial_state()) for _ in range(3)] == [str(b.new_initial_state()) for _ in range(3)]
    assert a.new_initial_state().env.rules_options.reward == "margin" and a.min_utility() < -1.0
    with pytest.raises(ValueError, match="reward"):
        ps.load("goes_to_eleven_v0", options={"reward": "nope"})
    with pytest.raises(ValueError, match="JSON"):
        pyspiel.load_game("parlour_goes_to_eleven_v0", {"options": "{reward"})


def test_the_bridge_cuts_a_game_at_max_game_length_as_a_truncation() -> None:
    game = ps.load("elevenses_v0", rng_seed=1, max_game_length=5)
    state = game.new_initial_state()
    while not state.is_terminal():
        state.apply_action(state.legal_actions()[0])
    assert len(state.history()) == 5 and not state.env.game_over and state.returns() == [0.0] * 4


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_openspiel_ismcts_plays_complete_games(name: str) -> None:
    from open_spiel.python.algorithms import ismcts, mcts

    game = ps.load(name, rng_seed=2)
    bot = ismcts.ISMCTSBot(
        game=game,
        uct_c=2.0,
        max_simulations=4,
        evaluator=mcts.RandomRolloutEvaluator(),
        random_state=np.random.RandomState(2),
    )
    state = game.new_initial_state()
    rng = np.random.default_rng(2)
    while not state.is_terminal():
        if state.current_player() == 0:
            action = bot.step(state)
            assert action in state.legal_actions()
        else:
            action = int(rng.choice(state.legal_actions()))
        state.apply_action(action)
    assert state.env.game_over and len(state.returns()) == game.num_players()


def test_rl_environment_runs_an_openspiel_dqn_learner() -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("tree")  # dm-tree, which OpenSpiel's PyTorch learners import (the openspiel extra has it)
    from open_spiel.python import rl_environment
    from open_spiel.python.pytorch import dqn

    torch.manual_seed(0)
    game = ps.load("six_suspects_v0", rng_seed=3)
    env = rl_environment.Environment(game)
    size = env.observation_spec()["info_state"][0]
    learner = dqn.DQN(
        player_id=0,
        state_representation_size=size,
        num_actions=env.action_spec()["num_actions"],
        hidden_layers_sizes=[32],
        batch_size=8,
        min_buffer_size_to_learn=8,
        learn_every=4,
        replay_buffer_capacity=200,
    )
    rng = np.random.default_rng(3)
    returns = []
    for _ in range(4):
        step = env.reset()
        while not step.last():
            player = step.observations["current_player"]
            if player == 0:
                action = learner.step(step).action
            else:
                action = int(rng.choice(step.observations["legal_actions"][player]))
            step = env.step([action])
        learner.step(step)
        returns.append(step.rewards)
    assert learner.loss is not None  # it learned from the transitions
    assert all(len(r) == 4 and all(-1.0 <= x <= 1.0 for x in r) for r in returns)


def test_ismcts_policy_plays_at_a_parlour_table_through_act_with_env() -> None:
    from parlour.baselines import make as make_bot
    from parlour.baselines.ismcts import ISMCTSPolicy
    from parlour.training.evaluation.games import play_game

    env = make("six_suspects_v0")
    seats = [ISMCTSPolicy(simulations=6), *(make_bot("six_suspects_heuristic", "six_suspects_v0") for _ in range(3))]
    out = play_game(env, seats, 11, np.random.default_rng(11))  # an illegal action would raise
    assert env.game_over and out["outcome"]["winners"]
    with pytest.raises(TypeError, match="act_with_env"):
        seats[0].act(np.zeros(3), np.ones(3), np.random.default_rng(0))
