"""6 Suspects through the AEC API: PettingZoo's own checks, the rulebook's turn structure, rewards, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from parlour.envs import make, six_suspects_v0
from parlour.envs.six_suspects import rules
from parlour.envs.six_suspects.env import OBSERVATION_LAYOUT

PLAYER_COUNTS = list(range(2, 9))


def peek(env: Any, position: int = 0) -> None:
    env.step(position)


def play_peeks(env: Any, count: int) -> None:
    for k in range(count):
        env.step(k % rules.NUM_POSITIONS)


def set_layout(env: Any, cards: list[int]) -> None:
    env.unwrapped.set_state(rules.position(env.unwrapped.rules_options, cards))


def test_same_seed_same_deal_different_seed_different_deal(six: Any) -> None:
    assert six(seed=7).game.layout == six(seed=7).game.layout
    assert six(seed=7).game.layout != six(seed=8).game.layout


def test_spaces_and_metadata() -> None:
    env = six_suspects_v0.env(num_players=5)
    env.reset(seed=0)
    assert env.metadata["name"] == "six_suspects_v0"
    assert env.possible_agents == [f"player_{i}" for i in range(5)]
    assert env.observation_space("player_0")["observation"].shape == (OBSERVATION_LAYOUT.size,)
    assert env.action_space("player_0").n == rules.NUM_ACTIONS == 19
    assert env.state().shape == env.state_space.shape
    assert env.state_space.contains(env.state())


# ------------------------------------------------------------------------------------------ the turn structure
ANNOUNCE_CASES = [
    # (players, peeks already taken, announce legal for the seat to act?)
    (3, 11, False),  # player_2 is about to take its 4th turn: not everyone has taken four
    (3, 12, True),  # everyone has taken four turns
    (2, 7, False),
    (2, 8, True),
    (8, 31, False),
    (8, 32, True),
]


@pytest.mark.parametrize(("n", "peeks", "legal"), ANNOUNCE_CASES)
def test_announcement_needs_four_turns_each(six: Any, n: int, peeks: int, legal: bool) -> None:
    env = six(num_players=n)
    play_peeks(env, peeks)
    assert bool(env.observe(env.agent_selection)["action_mask"][rules.ANNOUNCE]) is legal
    obs = env.observation_dict(env.agent_selection)
    assert obs["can_announce"][0] == float(legal)


def test_announcing_gives_everyone_else_exactly_one_last_turn_then_the_vote(six: Any) -> None:
    env = six(num_players=4)
    play_peeks(env, 4 * 4 + 1)  # player_1 is to act, everyone has had four turns
    assert env.agent_selection == "player_1"
    env.step(rules.ANNOUNCE)
    order = []
    while env.unwrapped.game.phase == rules.LAST_TURNS:
        mask = env.observe(env.agent_selection)["action_mask"]
        assert mask[:12].all() and not mask[12:].any(), "last turns are peeks only"
        order.append(env.agent_selection)
        env.step(3)
    assert order == ["player_2", "player_3", "player_0"]
    voters = []
    while env.agents and not env.terminations[env.agent_selection]:
        mask = env.observe(env.agent_selection)["action_mask"]
        assert not mask[:13].any() and mask[13:].all(), "the vote is the only choice"
        voters.append(env.agent_selection)
        env.step(rules.VOTE_BASE)
    assert voters == ["player_2", "player_3", "player_0", "player_1"]  # clockwise from the announcer's left
    assert all(env.terminations.values())


def test_table_announces_at_the_turn_cap(six: Any) -> None:
    env = six(num_players=3, table_announcement_turns=5)
    play_peeks(env, 15)
    assert env.unwrapped.game.phase == rules.VOTE and env.unwrapped.game.announcer == rules.TABLE
    assert env.observation_dict("player_1")["announcer"][-1] == 1
    assert env.agent_selection == "player_0"


def test_votes_are_hidden_until_everyone_has_voted(six: Any) -> None:
    env = six(num_players=3)
    play_peeks(env, 12)
    env.step(rules.ANNOUNCE)
    play_peeks(env, 2)
    first = env.agent_selection
    before = {a: env.observe(a)["observation"].copy() for a in env.agents}
    env.step(rules.VOTE_BASE + 2)
    for a in env.agents:
        changed = not np.array_equal(before[a], env.observe(a)["observation"])
        obs = env.observation_dict(a)
        if a == first:
            assert obs["own_vote"][2] == 1
        else:
            assert not obs["own_vote"].any() and not obs["votes_revealed"].any()
            # only "whose turn" may change for the others
            diff = np.flatnonzero(before[a] != env.observe(a)["observation"])
            assert changed and all(
                OBSERVATION_LAYOUT["to_act"].start <= i < OBSERVATION_LAYOUT["to_act"].stop for i in diff
            )


def test_peeking_shows_the_card_to_the_peeker_only(six: Any) -> None:
    env = six(num_players=3)
    card = env.unwrapped.game.layout[7]
    env.step(7)
    assert env.observation_dict("player_0")["seen_cards"][7, card] == 1
    for other, relative in (("player_1", 2), ("player_2", 1)):  # player_0 seen from player_k: (0 - k) % 3
        d = env.observation_dict(other)
        assert not d["seen_cards"].any()
        assert d["peek_counts"][relative, 7] > 0 and d["peek_counts"].sum() == d["peek_counts"][relative, 7]
        assert d["last_peek"][relative, 7] == 1


# ------------------------------------------------------------------------------------------ rewards and scoring
def finish_with_votes(env: Any, votes: dict[str, int]) -> dict[str, float]:
    """Play to the vote (announcement by the seat to act after four rounds) and cast ``votes``."""
    n = env.num_players
    play_peeks(env, 4 * n)
    env.step(rules.ANNOUNCE)
    play_peeks(env, n - 1)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        _, reward, term, trunc, _ = env.last()
        totals[agent] += reward
        env.step(None if term or trunc else rules.VOTE_BASE + votes[agent])
    return totals


# Swap-wraps-around layout from the resolution table: Beatrice (1) and Francine (5) are culprits.
TIE_LAYOUT = [0, 11, 6, 7, 5, 10, 9, 1, 2, 3, 4, 8]

REWARD_CASES = [
    (
        "vote",
        {"player_0": 1, "player_1": 5, "player_2": 0},
        {"player_0": 1.0, "player_1": 1.0, "player_2": -1.0},
    ),
    (
        "score",
        {"player_0": 1, "player_1": 5, "player_2": 0},
        {"player_0": 1.0, "player_1": 1.0, "player_2": 0.0},
    ),
    (
        "win",
        {"player_0": 1, "player_1": 3, "player_2": 0},
        {"player_0": 1.0, "player_1": -1.0, "player_2": -1.0},
    ),
    (
        "win",
        {"player_0": 0, "player_1": 3, "player_2": 2},
        {"player_0": 0.0, "player_1": 0.0, "player_2": 0.0},
    ),
]


@pytest.mark.parametrize(("mode", "votes", "expected"), REWARD_CASES)
def test_rewards_by_mode(six: Any, mode: str, votes: dict[str, int], expected: dict[str, float]) -> None:
    env = six(num_players=3, reward=mode)
    cards = rules.resolve(TIE_LAYOUT)
    assert [rules.SUSPECTS[c] for c in cards.culprits] == ["Beatrice", "Francine"]
    set_layout(env, TIE_LAYOUT)
    assert finish_with_votes(env, votes) == expected


def test_expected_reward_is_the_vote_reward_once_every_card_is_known(six: Any) -> None:
    totals = {}
    for mode in ("vote", "expected"):
        env = six(num_players=2, reward=mode, table_announcement_turns=13, seed=4)
        for p in range(12):  # player_0 sees every card, player_1 only Albert's top card
            env.step(p)
            env.step(0)
        env.step(rules.ANNOUNCE)
        env.step(0)
        for agent in env.agent_iter():
            _, reward, term, trunc, _ = env.last()
            totals[(mode, agent)] = totals.get((mode, agent), 0.0) + reward
            env.step(None if term or trunc else rules.VOTE_BASE + 3)
    assert totals[("expected", "player_0")] == totals[("vote", "player_0")] in (1.0, -1.0)
    # player_1 saw one card: its expected reward is strictly between the two outcomes
    assert -1.0 < totals[("expected", "player_1")] < 1.0


def test_expected_reward_is_unbiased() -> None:
    """Same games, both modes: the expected reward averages to the vote reward (it is its conditional mean)."""
    diffs = []
    for seed in range(300):
        per_mode = {}
        for mode in ("vote", "expected"):
            env = make("six_suspects_v0", num_players=3, reward=mode)
            env.reset(seed=seed)
            rng = np.random.default_rng(seed)
            total = 0.0
            for agent in env.agent_iter():
                obs, reward, term, trunc, _ = env.last()
                total += reward if agent == "player_0" else 0.0
                env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            per_mode[mode] = total
        diffs.append(per_mode["vote"] - per_mode["expected"])
    diffs_arr = np.array(diffs)
    assert abs(diffs_arr.mean()) < 3 * diffs_arr.std(ddof=1) / np.sqrt(len(diffs_arr)) + 1e-9
    assert diffs_arr.std() > 0.1  # the modes do differ game by game


def test_terminal_infos_reveal_the_outcome(six: Any) -> None:
    env = six(num_players=3)
    set_layout(env, TIE_LAYOUT)
    n = 3
    play_peeks(env, 4 * n)
    env.step(rules.ANNOUNCE)
    play_peeks(env, n - 1)
    for v in (1, 5, 0):
        env.step(rules.VOTE_BASE + v)
    info = env.infos["player_0"]["outcome"]
    # the vote runs clockwise from the announcer's left: player_1 (Beatrice), player_2 (Francine), player_0 (Albert)
    assert info["scores"] == [0, 1, 1] and info["winners"] == [1, 2]
    assert info["games"][0]["culprits"] == ["Beatrice", "Francine"]
    assert info["layout"] == TIE_LAYOUT and info["truncated"] is False
    # once over, every card and every vote is shown to everyone
    d = env.observation_dict("player_1")
    assert d["seen_cards"].sum() == 12 and d["votes_revealed"].sum() == 3


def test_three_games_in_a_row_accumulate_scores(six: Any) -> None:
    env = six(num_players=2, num_games=3, reward="score")
    rng = np.random.default_rng(1)
    games_seen = set()
    for _agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        games_seen.add(env.unwrapped.game.game_index)
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    outcome = info["outcome"]
    played = len(outcome["games"])
    assert 3 <= played <= 6
    assert outcome["scores"] == [sum(g["right"][s] for g in outcome["games"]) for s in range(2)]
    if played > 3:  # tie-break games happen only on a tie
        first3 = [sum(g["right"][s] for g in outcome["games"][:3]) for s in range(2)]
        assert first3[0] == first3[1]


def test_match_starts_rotate(six: Any) -> None:
    env = six(num_players=3, num_games=2)
    play_peeks(env, 4 * 3)
    env.step(rules.ANNOUNCE)
    play_peeks(env, 2)
    for _ in range(3):
        env.step(rules.VOTE_BASE)
    assert env.unwrapped.game.game_index == 1
    assert env.agent_selection == "player_1"  # the second game starts one seat further clockwise


# ------------------------------------------------------------------------------------------ bad input
def test_illegal_action_raises_with_the_legal_actions(six: Any) -> None:
    env = six(num_players=3)
    with pytest.raises(ValueError, match=r"illegal action 12 \(announce\) for player_0; legal actions: 0 \(peek"):
        env.step(rules.ANNOUNCE)
    with pytest.raises(ValueError, match="illegal action 99"):
        env.step(99)
    with pytest.raises(ValueError, match="illegal action 'x'"):
        env.step("x")


def test_illegal_action_penalty_mode_ends_the_game(six: Any) -> None:
    env = six(num_players=3, illegal_action="penalize", illegal_reward=-5)
    env.step(rules.VOTE_BASE)
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": -5.0, "player_1": 0.0, "player_2": 0.0}
    assert env.infos["player_0"]["outcome"]["illegal_action"]["agent"] == "player_0"


BAD_KWARGS = [
    ({"num_players": 9}, r"num_players=9 is out of range: expected an integer in \[2, 8\]"),
    ({"num_players": 1}, r"num_players=1 is out of range"),
    ({"num_games": 0}, r"num_games=0 is out of range"),
    ({"reward": "points"}, r"reward='points' is not valid: expected one of \['vote', 'score', 'win', 'expected'\]"),
    ({"plain_values": (1, 2)}, r"plain_values=\(1, 2\) is not valid"),
    ({"start_seat": 4, "num_players": 4}, r"start_seat=4 is out of range"),
    ({"illegal_action": "ignore"}, r"illegal_action='ignore' is not valid"),
    ({"max_turns": 0}, r"max_turns=0 is out of range"),
    ({"render_mode": "human"}, r"render_mode='human' is not valid"),
    ({"colour": "red"}, r"unknown keyword\(s\) \['colour'\]; allowed: \['num_players', 'num_games'"),
]


@pytest.mark.parametrize(("kwargs", "message"), BAD_KWARGS)
def test_bad_keywords_raise_with_the_valid_range(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make("six_suspects_v0", **kwargs)


def test_dead_step_must_be_none(six: Any) -> None:
    env = six(num_players=2, max_turns=3)
    play_peeks(env, 3)
    assert all(env.truncations.values()) and env.rewards == {"player_0": 0.0, "player_1": 0.0}
    with pytest.raises(ValueError, match="must be step\\(None\\)"):
        env.step(0)
    env.step(None)
    env.step(None)
    assert env.agents == []


# ------------------------------------------------------------------------------------------ views and docs
def test_decode_action_and_render(six: Any) -> None:
    env = six(num_players=3, render_mode="ansi")
    assert env.decode_action(9) == "peek Denise, bottom card"
    assert env.decode_action(12) == "announce"
    assert env.decode_action(18) == "vote Francine"
    with pytest.raises(ValueError, match=r"expected an integer in \[0, 18\]"):
        env.decode_action(19)
    env.step(4)
    card = rules.card_name(env.unwrapped.game.layout[4])
    umpire = env.render()
    assert umpire == env.render_text(None) and "?" not in umpire
    mine = env.render_text("player_0")
    theirs = env.render_text("player_1")
    assert mine.count("?") == 11 and theirs.count("?") == 12 and card in mine


def test_docs_action_table_matches_decode_action() -> None:
    env = six_suspects_v0.env(num_players=2)
    doc = six_suspects_v0.__doc__ or ""
    assert "| 0–5 | peek at the top card of Albert … Francine |" in doc
    assert env.decode_action(0) == "peek Albert, top card" and env.decode_action(5) == "peek Francine, top card"
    assert env.decode_action(6) == "peek Albert, bottom card" and env.decode_action(13) == "vote Albert"
    assert f"Discrete({rules.NUM_ACTIONS})" in doc and f"({OBSERVATION_LAYOUT.size},)" in doc


def test_observation_dict_decodes_the_vector(six: Any) -> None:
    env = six(num_players=4)
    d = env.observation_dict("player_2")
    assert d["num_players"].argmax() == 2 and d["phase"].argmax() == rules.PEEK
    assert d["to_act"].argmax() == 2  # player_0 is two seats left of player_2... relative (0-2)%4 = 2


@pytest.mark.parametrize(
    ("layout", "actions", "message"),
    [
        (list(range(11)), [], "is not a permutation"),
        ([0] * 12, [], "is not a permutation"),
        (list(range(12)), [rules.ANNOUNCE], "position: action 0 (12): illegal action 12"),
        (list(range(12)), [0, 1, rules.VOTE_BASE], "position: action 2"),
        (list(range(12)), [0, 99], "position: action 1 (99): action 99 is not valid"),
    ],
)
def test_position_refuses_what_the_rules_forbid(layout: list[int], actions: list[int], message: str) -> None:
    with pytest.raises(ValueError) as err:
        rules.position(rules.Options(num_players=2), layout, actions)
    assert message in str(err.value)


def test_position_plays_its_actions_from_the_start() -> None:
    opts = rules.Options(num_players=3)
    layout = list(range(11, -1, -1))
    g = rules.position(opts, layout, list(range(4 * 3)))  # four turns each: an announcement is allowed
    assert g.layout == layout and g.can_announce() and g.current == 0
    assert g.seen[1][1] and g.peeks[2] == [0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1]
    g.apply(rules.ANNOUNCE)
    assert (g.phase, g.announcer, g.current) == (rules.LAST_TURNS, 0, 1)


@pytest.mark.parametrize("n", [2, 5, 8])
def test_every_match_ends_within_the_rulebook_bound(n: int) -> None:
    from parlour.envs import checks

    report = checks.fuzz(lambda: six_suspects_v0.env(num_players=n, num_games=2), games=10, seed=n)
    # At most 2 + 3 tie-break games, each of at most 12 turns per player, n - 1 last turns and n votes, then n
    # dead steps.
    assert report.games == 10 and report.longest <= 5 * (12 * n + (n - 1) + n) + n
