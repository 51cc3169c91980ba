"""Elevenses' bots: legal, observation-only, reasoning as documented, and ordered in fixed-seed matches."""

from __future__ import annotations

import numpy as np
import pytest

from parlour.baselines import available, make
from parlour.baselines.elevenses import ElevensesExpert, ElevensesHeuristic, belief, decode, win_chance
from parlour.baselines.search import DeterminizedSearch
from parlour.envs import elevenses_v0
from parlour.envs import make as make_env
from parlour.envs.elevenses import rules
from parlour.envs.elevenses.rules import card
from parlour.training.evaluation.games import play_game
from parlour.training.evaluation.match import run_match

BOTS = ["random", "elevenses_heuristic", "elevenses_expert"]


def own(seat: int, *numbers: int) -> list[int]:
    return [card(seat, k) for k in numbers]


def test_registry() -> None:
    assert set(BOTS) | {"search"} <= set(available("elevenses_v0"))


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_bots_are_always_legal(n: int) -> None:
    env = make_env("elevenses_v0", num_players=n)
    pool = [make(b) for b in BOTS]
    rng = np.random.default_rng(n)
    for g in range(6):
        seats = [pool[(s + g) % len(pool)] for s in range(n)]
        result = play_game(env, seats, seed=g, rng=rng)  # an illegal choice raises the env's ValueError
        assert "winners" in result["outcome"]


def test_search_is_legal_in_elevenses() -> None:
    env = make_env("elevenses_v0", num_players=3, max_turns=12)
    seats = [DeterminizedSearch(worlds=2, rollouts=1), make("elevenses_heuristic"), make("random")]
    result = play_game(env, seats, seed=1, rng=np.random.default_rng(0))
    assert "winners" in result["outcome"]


def ending_env(plates: list[int], guilt: list[int], seen: list[int] | None = None) -> elevenses_v0.raw_env:
    """Three players; seat 0 holds its 11 with six cards face up and may end the game."""
    hands = [own(0, 11, 7), own(1, 1, 10, 11), own(2, 1, 10, 11)]
    up = [own(0, 1, 2, 3, 4, 5, 6), [], []]
    g = rules.position(rules.Options(num_players=3), hands, up, guests=[2, 1, 0], guilt=guilt, plates=plates)
    g.bowl = 0  # no late suspicion: the plates decide
    for p in seen or []:
        g.guilt_known[0][p] = 1
    env = elevenses_v0.env(num_players=3)
    env.unwrapped.set_state(g)
    return env


@pytest.mark.parametrize(
    ("plates", "guilt"),
    [
        ([1, 5, 2, 3], [0, 1, 0, 0]),
        ([1, 5, 2, 0], [0, 1, 0, 0]),
        ([2, 5, 2, 3], [0, 1, 0, 0]),
        ([1, 5, 2, 3], [0, 0, 1, 0]),
        ([1, 5, 5, 3], [0, 0, 1, 0]),
        ([5, 2, 2, 1], [1, 0, 0, 0]),
        ([1, 2, 2, 5], [1, 0, 0, 0]),
        ([2, 2, 2, 2], [0, 1, 0, 0]),
    ],
)
def test_the_experts_end_evaluation_agrees_with_the_rules(plates: list[int], guilt: list[int]) -> None:
    # With every Guilt card seen, the expert's chance of winning if the game ended now is 1 exactly when the rules
    # would make it a winner.
    env = ending_env(plates, guilt, seen=[0, 1, 2, 3])
    view = decode(env.observe("player_0")["observation"])
    p = belief(view)
    assert p.tolist() == [float(x) for x in guilt[:3]] + [0.0, 0.0, float(guilt[3])]
    chance = win_chance(view, view.plates, p)
    env.step(rules.card_action(card(0, 11), 0, 3))
    assert chance == float(0 in env.unwrapped.game.winners)


def test_the_expert_plays_the_eleven_only_when_it_would_win() -> None:
    rng = np.random.default_rng(0)
    eleven = rules.card_action(card(0, 11), 0, 3)
    for plates, guilt, plays in (([1, 5, 2, 3], [0, 1, 0, 0], True), ([5, 1, 2, 3], [0, 1, 0, 0], False)):
        env = ending_env(plates, guilt, seen=[0, 1])
        obs = env.observe("player_0")
        assert (ElevensesExpert().act(obs["observation"], obs["action_mask"], rng) == eleven) == plays


def test_belief_weighs_what_was_seen_and_claimed() -> None:
    env = elevenses_v0.env(num_players=4)
    env.reset(seed=0)
    view = decode(env.observe("player_0")["observation"])
    p = belief(view)
    own_card = env.unwrapped.game.guilt[0]
    assert p.sum() == pytest.approx(1.0) and p[0] == own_card and p[4] == 0.0, "four seats and Mrs Lansdowne"
    if not own_card:
        assert np.allclose(p[[1, 2, 3, 5]], 0.25)
    # A claim "Murderer" about a card makes the expert believe it more likely; "Not Guilty", less.
    view.claims[1, 2, 1] = True
    view.claims[2, 3, 2] = True
    q = belief(view)
    if not own_card:
        assert q[2] > p[2] and q[3] < p[3] and q.sum() == pytest.approx(1.0)


def test_five_player_belief_spreads_two_murderers() -> None:
    env = elevenses_v0.env(num_players=5)
    env.reset(seed=3)
    view = decode(env.observe("player_0")["observation"])
    p = belief(view)
    assert p.sum() == pytest.approx(2.0) and p.max() <= 1.0 and p[5] == 0.0


def test_an_innocent_heuristic_claims_truthfully() -> None:
    hands = [own(0, 5, 1, 11), own(1, 1, 10, 11), own(2, 1, 10, 11)]
    g = rules.position(rules.Options(num_players=3), hands, guilt=[0, 1, 0, 0])
    env = elevenses_v0.env(num_players=3)
    env.unwrapped.set_state(g)
    env.step(rules.card_action(card(0, 5), 0, 3))
    env.step(rules.GUILT_BASE + 1)
    obs = env.observe("player_0")
    assert ElevensesHeuristic().act(obs["observation"], obs["action_mask"], np.random.default_rng(0)) == (
        rules.CLAIM_MURDERER
    )


def test_ladder_is_ordered_in_fixed_seed_matches() -> None:
    low = {r["bot"]: r for r in run_match("elevenses_v0", BOTS[:2], num_players=4, games=300, seed=2)}
    high = {r["bot"]: r for r in run_match("elevenses_v0", BOTS[1:], num_players=4, games=300, seed=3)}
    for rows, lower, higher in ((low, BOTS[0], BOTS[1]), (high, BOTS[1], BOTS[2])):
        assert rows[higher]["win_ci"][0] > rows[lower]["win_ci"][1], (lower, higher, rows)
