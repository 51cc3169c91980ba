"""This Game Goes to Eleven's bots and the generic search bot: legal, observation-only, sensible, ordered."""

from __future__ import annotations

from math import comb
from typing import Any

import numpy as np
import pytest

from parlour.baselines import available, make
from parlour.baselines.goes_to_eleven import decode, p_holds
from parlour.baselines.search import DeterminizedSearch
from parlour.envs import goes_to_eleven_v0
from parlour.envs import make as make_env
from parlour.envs.goes_to_eleven import rules
from parlour.training.evaluation.games import play_game
from parlour.training.evaluation.match import run_match

ELEVEN_BOTS = ["random", "goes_to_eleven_heuristic", "goes_to_eleven_expert"]


def fast_search() -> DeterminizedSearch:
    return DeterminizedSearch(worlds=2, rollouts=1)


def test_registry() -> None:
    bots = available("goes_to_eleven_v0")
    assert set(ELEVEN_BOTS) | {"search"} <= set(bots)
    assert not any(b.startswith("six_suspects") for b in bots)
    assert "search" in available("six_suspects_v0"), "the search bot serves every game"


@pytest.mark.parametrize("variant", [{}, {"pick_on_me": True}, {"max_piles": 2, "reward": "margin"}])
@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_bots_are_always_legal(n: int, variant: dict[str, Any]) -> None:
    env = make_env("goes_to_eleven_v0", num_players=n, illegal_action="raise", **variant)
    pool = [make(b) for b in ELEVEN_BOTS] + [fast_search()]
    rng = np.random.default_rng(n)
    for g in range(2):
        seats = [pool[(s + g) % len(pool)] for s in range(n)]
        result = play_game(env, seats, seed=g, rng=rng)  # an illegal choice raises the env's ValueError
        assert len(result["outcome"]["collected"]) == n


def test_search_is_legal_in_six_suspects_and_votes_a_known_culprit() -> None:
    env = make_env("six_suspects_v0", num_players=2)
    result = play_game(env, [fast_search(), make("random")], seed=3, rng=np.random.default_rng(0))
    assert result["outcome"]["winners"] is not None
    # Everything seen: every determinisation is the true layout, so the search votes for a culprit.
    from parlour.envs.six_suspects import rules as SR

    # Both seats peek at all 12 cards (12 turns each): the table announces and player_0 votes first.
    opts = env.unwrapped.rules_options
    layout = np.random.default_rng(4).permutation(SR.NUM_CARDS).tolist()
    env.unwrapped.set_state(SR.position(opts, layout, [p for p in range(12) for _ in range(2)]))
    g = env.unwrapped.game
    assert g.phase == SR.VOTE and g.current == 0 and all(all(row) for row in g.seen)
    culprits = {SR.VOTE_BASE + c for c in SR.resolve(g.layout).culprits}
    assert DeterminizedSearch(worlds=2, rollouts=1).act_with_env(env, "player_0", np.random.default_rng(0)) in culprits


def position_env(hands: list[list[int]], piles: list[list[int]], draw: list[int], **kw: Any) -> Any:
    deck = [0] * rules.NUM_KINDS
    for cards in (*hands, *piles, draw):
        for k in cards:
            deck[k] += 1
    env = goes_to_eleven_v0.env(num_players=len(hands), deck=tuple(deck), **kw)
    env.unwrapped.set_state(rules.position(env.unwrapped.rules_options, hands, piles, draw))
    return env


def test_decode_reads_the_seat_view() -> None:
    env = position_env([[5, 9, 10], [0, 1, 2], [3, 3, 4]], [[4, 1], [7]], [8, 8, 6, 6])
    view = decode(env.observe("player_0")["observation"])
    assert view.n == 3 and view.max_piles == 12 and view.phase == rules.PLAY
    assert view.hand == [0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1]
    assert view.piles == {0: (7, 1, 2), 1: (8, 7, 1)} and view.pending == -1
    assert view.draw == 4 and view.hand_size == [3, 3, 3] and view.collected == [0, 0, 0]
    assert view.unseen == [1, 1, 1, 2, 1, 0, 2, 0, 2, 0, 0], "others' hands and the draw pile"


def test_hypergeometric_chance() -> None:
    unseen = [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3]
    assert p_holds(unseen, 2, {0}) == pytest.approx(1 - comb(3, 2) / comb(5, 2))
    assert p_holds(unseen, 2, {1}) == 0.0 and p_holds(unseen, 0, {0}) == 0.0
    assert p_holds(unseen, 5, {0}) == 1.0


@pytest.mark.parametrize("bot", ["goes_to_eleven_heuristic", "goes_to_eleven_expert"])
def test_bots_make_eleven_and_give_to_the_player_closest_to_winning(bot: str) -> None:
    # player_0 can make 11 (5 + 6) on a pile of five cards; player_2 has the fewest cards collected.
    hands = [[5, 0, 0], [1, 1, 1], [2, 2, 2]]
    env = position_env(hands, [[0, 0, 2]], [3, 3, 3, 3, 3, 3, 3, 3])
    g = env.unwrapped.game
    policy = make(bot)
    rng = np.random.default_rng(0)

    def choose() -> int:
        agent = env.agent_selection
        if policy.needs_env:
            return policy.act_with_env(env, agent, rng)
        obs = env.observe(agent)
        return policy.act(obs["observation"], obs["action_mask"], rng)

    env.step(choose())
    assert g.phase == rules.GIVE, f"{bot} did not make 11"
    g.collected[:] = [0, 5, 1]  # as if earlier piles had been collected (only the counts matter here)
    env.unwrapped._on_new_state()
    env.step(choose())
    assert g.collected[2] == 1 + 4, f"{bot} should give the pile to player_2"


@pytest.mark.parametrize("informed", [True, False])
def test_search_finds_the_winning_endgame_move(informed: bool) -> None:
    # Draw pile out; player_0 holds 6 and 1, player_1 holds a 5 (the only unseen card, so every world is true).
    # Making 11 now gives 8 cards away and wins; playing the 1 lets player_1 make 11 and give 8 cards back.
    q = rules.QUIET
    hands = [[5, 0], [4]]
    piles = [[q, q, q, q, q, 1, 2]]
    env = goes_to_eleven_v0.env(num_players=2)
    env.unwrapped.set_state(rules.position(env.unwrapped.rules_options, hands, piles, collected=[31, 31]))
    search = DeterminizedSearch(worlds=2, rollouts=1, informed=informed)
    values = search.action_values(env, "player_0", np.random.default_rng(0))
    assert values == {5: 1.0, 0: 0.0}, "play 6 wins (a share of 1), play 1 loses"
    assert search.act_with_env(env, "player_0", np.random.default_rng(0)) == 5
    by_reward = DeterminizedSearch(worlds=2, rollouts=1, informed=informed, objective="reward")
    assert by_reward.action_values(env, "player_0", np.random.default_rng(0)) == {5: 1.0, 0: -1.0}, "±1 reward"


def test_heuristic_and_expert_answer_an_eleven_aimed_at_them() -> None:
    hands = [[9, 0, 0], [10, 1, 1], [2, 2, 2]]
    for bot in ("goes_to_eleven_heuristic", "goes_to_eleven_expert"):
        env = position_env(hands, [[4, 2]], [3, 3, 3, 3, 3, 3])
        env.step(rules.ELEVEN)  # player_0 plays its Eleven on pile 0
        assert env.agent_selection == "player_1"
        obs = env.observe("player_1")
        action = make(bot).act(obs["observation"], obs["action_mask"], np.random.default_rng(0))
        assert action == rules.quiet_action(12), bot


def test_ladder_is_ordered_in_a_fixed_seed_match() -> None:
    rows = {r["bot"]: r for r in run_match("goes_to_eleven_v0", ELEVEN_BOTS, num_players=3, games=450, seed=5)}
    for lower, higher in zip(ELEVEN_BOTS, ELEVEN_BOTS[1:], strict=False):
        # clear margins: the intervals are apart and the rates at least 0.1 apart
        assert rows[higher]["win_ci"][0] > rows[lower]["win_ci"][1], (lower, higher, rows)
        assert rows[higher]["win_rate"] >= rows[lower]["win_rate"] + 0.1, (lower, higher, rows)
