"""This Game Goes to Eleven: the rulebook's situations as table-driven scenarios, played through the AEC API."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from parlour.envs import goes_to_eleven_v0
from parlour.envs.goes_to_eleven import rules

E, Q = rules.ELEVEN, rules.QUIET
NEW = "new"


def num(v: int) -> int:
    """The kind of the number card ``v``."""
    return v - 1


def card(c: int | str) -> int:
    """A card of the scenario tables: a number 1–9, or "E" (Eleven) or "Q" (Quiet!)."""
    return {"E": E, "Q": Q}[c] if isinstance(c, str) else num(c)


def deck_for(
    hands: Sequence[Sequence[int]], piles: Sequence[Sequence[int]], draw: Sequence[int], collected_cards: int = 0
) -> tuple[int, ...]:
    """A deck holding exactly the cards of a scenario (collected cards are 1s)."""
    deck = [0] * rules.NUM_KINDS
    for cards in (*hands, *piles, draw):
        for k in cards:
            deck[k] += 1
    deck[0] += collected_cards
    return tuple(deck)


def setup(
    hands: Sequence[Sequence[int]],
    piles: Sequence[Sequence[int]],
    draw: Sequence[int] = (),
    *,
    collected: Sequence[int] | None = None,
    current: int = 0,
    new_pile: bool = False,
    **options: Any,
) -> Any:
    """An env whose game is the given position (``collected`` cards are counted as 1s in the deck)."""
    n = len(hands)
    extra = 0 if collected is None else sum(collected)
    deck = deck_for(hands, piles, draw, extra)
    env = goes_to_eleven_v0.env(num_players=n, deck=deck, **options)
    opts = env.unwrapped.rules_options
    env.unwrapped.set_state(
        rules.position(opts, hands, piles, draw, collected=collected, current=current, new_pile=new_pile)
    )
    return env


def play(env: Any, kind: int, target: int | str) -> None:
    mp = env.unwrapped.max_piles
    env.step((mp if target == NEW else int(target)) * rules.NUM_KINDS + kind)


def give(env: Any, seats_left: int) -> None:
    env.step(rules.give_base(env.unwrapped.max_piles) + seats_left - 1)


def legal_plays(env: Any) -> set[tuple[str, int | str]]:
    mp = env.unwrapped.max_piles
    out: set[tuple[str, int | str]] = set()
    for a in np.flatnonzero(env.observe(env.agent_selection)["action_mask"]):
        target, kind = divmod(int(a), rules.NUM_KINDS)
        assert target <= mp, "only play actions are legal on a turn"
        out.add((rules.KIND_NAMES[kind], NEW if target == mp else target))
    return out


# ------------------------------------------------------------------------------------------------ legal plays
# (name, hand of the seat to play, piles bottom→top, new pile allowed, max_piles, expected legal plays)
LEGAL_CASES = [
    (
        "the rulebook's 6 + 4 + 1 = 11: only the 1 fits, so going over is not allowed",
        [1, 2, 3],
        [[6, 4]],
        False,
        12,
        {("1", 0)},
    ),
    (
        "every legal play goes over: going over is allowed",
        [2, 3, 5],
        [[6, 4]],
        False,
        12,
        {("2", 0), ("3", 0), ("5", 0)},
    ),
    ("same number: the 4 may not go on the 4, it splits off a new pile", [4, 9, 9], [[4]], False, 12, {("4", NEW)}),
    (
        "a split does not stop other plays on the pile",
        [4, 5, 2],
        [[4]],
        False,
        12,
        {("4", NEW), ("5", 0), ("2", 0)},
    ),
    (
        "a split avoids going over",
        [9, 8, 7],
        [[9]],
        False,
        12,
        {("9", NEW)},
    ),
    ("Eleven and Quiet! go on any pile", ["E", "Q", 9], [[5]], False, 12, {("Eleven", 0), ("Quiet!", 0)}),
    (
        "right after a pile left the table, any card may start a new pile",
        [9, 2, "Q"],
        [[3]],
        True,
        12,
        {("2", 0), ("Quiet!", 0), ("9", NEW), ("2", NEW), ("Quiet!", NEW)},
    ),
    (
        "with no pile on the table a new pile must be started",
        [1, 5, "E"],
        [],
        False,
        12,
        {("1", NEW), ("5", NEW), ("Eleven", NEW)},
    ),
    ("several piles: every pile is a choice", [2, 2, 2], [[5], [3, 3], [7]], False, 12, {("2", 0), ("2", 1), ("2", 2)}),
    ("at the pile limit a split is not allowed", [4, 9, 9], [[4], [7]], False, 2, {("4", 1)}),
    (
        "at the pile limit a new pile is not allowed even after a pile left",
        [9, 9, 9],
        [[4], [7]],
        True,
        2,
        {("9", 0), ("9", 1)},
    ),
    ("at the limit with no other play, a number may go on the same number", [4, 4, 4], [[2, 4]], False, 1, {("4", 0)}),
    ("... even when it goes over", [4, 4, 4], [[5, 4]], False, 1, {("4", 0)}),
    (
        "a Quiet! on top lets the same number go on (and there is no split)",
        [5, 5, 5],
        [[5, "Q"]],
        False,
        12,
        {("5", 0)},
    ),
]


@pytest.mark.parametrize(
    ("hand", "piles", "new_pile", "max_piles", "expected"),
    [c[1:] for c in LEGAL_CASES],
    ids=[c[0] for c in LEGAL_CASES],
)
def test_legal_plays(
    hand: list[int | str],
    piles: list[list[int | str]],
    new_pile: bool,
    max_piles: int,
    expected: set[tuple[str, int | str]],
) -> None:
    kinds = [card(k) for k in hand]
    pile_kinds = [[card(k) for k in p] for p in piles]
    env = setup([kinds, [num(1)] * 3], pile_kinds, [num(1)] * 4, new_pile=new_pile, max_piles=max_piles)
    assert legal_plays(env) == expected


# ------------------------------------------------------------------------------------------------ situations
def test_exactly_eleven_with_numbers_the_player_chooses_the_receiver() -> None:
    # 6 + 4 + 1 = 11 (the rulebook's example), played by three seats in turn.
    env = setup([[num(4), num(9), num(9)], [num(1), num(9), num(9)], [num(8), num(9), num(9)]], [[num(6)]])
    play(env, num(4), 0)
    assert env.unwrapped.game.pile_value[0] == 10
    play(env, num(1), 0)
    g = env.unwrapped.game
    assert g.phase == rules.GIVE and env.agent_selection == "player_1", "no Quiet! answer for a number-card 11"
    gb = rules.give_base(env.unwrapped.max_piles)
    assert set(np.flatnonzero(env.observe("player_1")["action_mask"])) == {gb, gb + 1}, "give to either other seat"
    give(env, 2)  # two seats to the left of player_1 is player_0
    assert g.collected == [3, 0, 0] and g.num_piles == 0
    assert env.agent_selection == "player_2", "play goes on left of the player who made 11"
    assert g.new_pile and ("8", NEW) in legal_plays(env)


def test_forced_over_eleven_takes_the_pile() -> None:
    env = setup([[num(9), num(8), num(7)], [num(1)] * 3], [[num(5), num(2)]], [num(3)])
    play(env, num(8), 0)  # 7 + 8 = 15
    g = env.unwrapped.game
    assert g.collected == [3, 0] and g.num_piles == 0
    assert env.agent_selection == "player_1" and g.new_pile
    assert g.hands[0][num(3)] == 1, "the player drew back up"


def test_quiet_answers_an_eleven_and_the_elevens_player_takes_the_pile() -> None:
    hands = [[E, num(1), num(1)], [num(2), num(2), num(2)], [Q, num(3), num(3)], [Q, num(4), num(4)]]
    env = setup(hands, [[num(5)]], [num(6), num(7), num(8)])
    play(env, E, 0)
    g = env.unwrapped.game
    assert g.phase == rules.ANSWER and env.agent_selection == "player_1", "asking starts left of the Eleven's player"
    pass_, quiet = rules.pass_action(12), rules.quiet_action(12)
    assert set(np.flatnonzero(env.observe("player_1")["action_mask"])) == {pass_}, "no Quiet!: can only pass"
    env.step(pass_)
    assert env.agent_selection == "player_2"
    assert set(np.flatnonzero(env.observe("player_2")["action_mask"])) == {pass_, quiet}
    env.step(quiet)
    assert g.collected == [3, 0, 0, 0], "5, Eleven and Quiet! go to the Eleven's player"
    assert g.hands[2][Q] == 0 and g.hand_size[2] == 3 and g.hands[2][num(7)] == 1, "the answerer drew back up"
    assert env.agent_selection == "player_1", "the answer does not move the turn"
    assert g.played[Q] == 1 and g.played[E] == 1


def test_first_answer_wins_and_unanswered_eleven_is_given_away() -> None:
    hands = [[E, E, num(1)], [Q, num(2), num(2)], [Q, num(3), num(3)]]
    env = setup(hands, [[num(5)], [num(7)]], [num(9)] * 6)
    g = env.unwrapped.game
    play(env, E, 0)
    env.step(rules.quiet_action(12))  # player_1 is asked first and answers
    assert g.collected == [3, 0, 0] and g.hands[2][Q] == 1, "player_2 was never asked"
    assert env.agent_selection == "player_1"
    play(env, num(2), 1)  # 7 + 2 = 9
    assert legal_plays(env) == {("Quiet!", 1)}, "player_2's 3s would go over; its Quiet! does not"
    play(env, Q, 1)
    # player_0's second Eleven: nobody answers (player_1 passes, player_2 has no Quiet! left): it gives it away.
    play(env, E, 1)
    env.step(rules.pass_action(12))
    assert set(np.flatnonzero(env.observe("player_2")["action_mask"])) == {rules.pass_action(12)}
    env.step(rules.pass_action(12))
    assert g.phase == rules.GIVE and env.agent_selection == "player_0"
    give(env, 1)
    assert g.collected == [3, 4, 0], "7, 2, Quiet! and Eleven went to player_1"
    assert env.agent_selection == "player_1"


def test_quiet_on_a_normal_turn_resets_the_pile() -> None:
    env = setup([[Q, num(1), num(1)], [num(9), num(1), num(1)]], [[num(5), num(4)]], [num(1)] * 4)
    play(env, Q, 0)
    g = env.unwrapped.game
    assert (g.pile_value[0], g.pile_top[0], g.pile_size[0]) == (0, Q, 3)
    assert ("9", 0) in legal_plays(env), "play on the reset pile goes on"
    play(env, num(9), 0)
    assert g.pile_value[0] == 9


def test_quiet_starting_a_new_pile_starts_at_zero_and_eleven_may_start_one() -> None:
    env = setup([[Q, E, num(1)], [num(2)] * 3, [num(3)] * 3], [], [num(4)] * 4)
    play(env, Q, NEW)
    g = env.unwrapped.game
    assert (g.pile_value[0], g.pile_top[0], g.pile_size[0]) == (0, Q, 1)
    env = setup([[E, num(1), num(1)], [num(2)] * 3], [], [num(4)] * 4)
    play(env, E, NEW)
    assert env.unwrapped.game.phase == rules.ANSWER and env.unwrapped.game.pile_value[0] == 11
    env.step(rules.pass_action(12))
    assert env.unwrapped.game.phase == rules.GIVE


def test_empty_hands_are_skipped_and_the_game_ends_with_ties_sharing_the_win() -> None:
    # Draw pile out: player_1 has no cards and is skipped; the last card ends the game.
    env = setup(
        [[num(1)], [], [num(2)]],
        [[num(3)]],
        collected=[2, 4, 2],
        current=0,
    )
    play(env, num(1), 0)
    assert env.agent_selection == "player_2", "player_1 has no cards and is skipped"
    play(env, num(2), 0)
    g = env.unwrapped.game
    assert g.is_terminal()
    rewards = {a: env._cumulative_rewards[a] for a in env.possible_agents}
    assert rewards == {"player_0": 1.0, "player_1": -1.0, "player_2": 1.0}, "a tie for fewest cards shares the win"
    outcome = env.infos["player_0"]["outcome"]
    assert outcome["winners"] == [0, 2] and outcome["collected"] == [2, 4, 2]
    assert outcome["piles_left"][0]["size"] == 3, "piles left on the table are not counted"


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("cards", [-0.3, 0.0, 0.0]), ("margin", [-0.3, 0.15, 0.15])],
)
def test_dense_rewards(mode: str, expected: list[float]) -> None:
    env = setup([[num(9), num(8), num(7)], [num(1)] * 3, [num(1)] * 3], [[num(5), num(2)]], [num(3)] * 3, reward=mode)
    play(env, num(8), 0)  # over 11: player_0 collects 3 cards
    assert [env.rewards[a] for a in env.possible_agents] == pytest.approx(expected)


def test_pick_on_me_the_holder_takes_the_pile_and_passes_the_pick() -> None:
    hands = [[num(6), num(1), num(1)], [num(2)] * 3, [num(3)] * 3]
    env = setup(hands, [[num(5)]], [num(9)] * 6, pick_on_me=True)
    g = env.unwrapped.game
    assert g.pick == 0, "the pick starts with the first player"
    play(env, num(6), 0)  # 5 + 6 = 11
    assert g.collected == [2, 0, 0] and g.pick == 1, "the holder (here the player) takes it and passes the pick left"
    assert env.agent_selection == "player_1"


def test_pick_on_me_answered_eleven_goes_to_its_player_and_the_pick_stays() -> None:
    hands = [[num(1)] * 3, [E, num(2), num(2)], [Q, num(3), num(3)]]
    env = setup(hands, [[num(5)]], [num(9)] * 6, pick_on_me=True, current=1)
    g = env.unwrapped.game
    g.pick = 0
    env.unwrapped._on_new_state()
    play(env, E, 0)
    assert env.agent_selection == "player_2"
    env.step(rules.quiet_action(12))
    assert g.collected == [0, 3, 0] and g.pick == 0
    # Unanswered Eleven: the pick's holder takes it.
    env2 = setup(
        [[num(1)] * 3, [E, num(2), num(2)], [num(3)] * 3], [[num(5)]], [num(9)] * 6, pick_on_me=True, current=1
    )
    play(env2, E, 0)
    env2.step(rules.pass_action(12))
    env2.step(rules.pass_action(12))
    assert env2.unwrapped.game.collected == [2, 0, 0] and env2.unwrapped.game.pick == 1


def test_setup_covers_special_cards_until_a_number_is_on_top() -> None:
    buried = 0
    for seed in range(300):
        g = rules.deal(rules.Options(), np.random.default_rng(seed))
        top, size, value = g.pile_top[0], g.pile_size[0], g.pile_value[0]
        assert top < rules.NUM_NUMBERS and value == top + 1, "a number is on top and buried specials count 0"
        assert sum(g.played) == size and g.played[top] >= 1
        assert sum(g.played[rules.NUM_NUMBERS :]) == size - 1, "every card under the top one is a special card"
        assert len(g.draw) == 72 - 4 * 3 - size and g.hand_size == [3, 3, 3, 3]
        buried += size > 1
    assert buried > 10, "some deals bury special cards (the case is exercised)"


def test_over_at_the_limit_with_the_same_number_collects() -> None:
    env = setup([[num(4)] * 3, [num(1)] * 3], [[num(5), num(4)]], [num(1)] * 4, max_piles=1)
    play(env, num(4), 0)
    assert env.unwrapped.game.collected == [3, 0]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_players": 7}, "num_players=7 is out of range"),
        ({"max_piles": 0}, "max_piles=0 is out of range"),
        ({"deck": (7,) * 10}, "deck=(7, 7, 7, 7, 7, 7, 7, 7, 7, 7) is not valid"),
        ({"deck": (0,) * 9 + (36, 36)}, "at least one number card"),
        ({"deck": (1,) * 11, "num_players": 6}, "at least 19 cards"),
        ({"reward": "points"}, "reward='points' is not valid: expected one of ['win', 'cards', 'margin']"),
        ({"pick_on_me": "yes"}, "pick_on_me='yes' is not valid"),
        ({"start_seat": 4}, "start_seat=4 is out of range"),
        ({"piles": 3}, "unknown keyword(s) ['piles']"),
    ],
)
def test_bad_keywords_raise_with_the_valid_range(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=None) as err:
        goes_to_eleven_v0.env(**kwargs)
    assert message in str(err.value)


@pytest.mark.parametrize(
    ("hands", "piles", "draw", "message"),
    [
        ([[0, 0], [0, 0, 0]], [[1]], [2], "hands hold 3 while cards remain"),
        ([[0, 0, 0], [0, 0, 0]], [[5, 5]], [], "worth 12"),
        ([[0, 0, 0]], [[1]], [], "expected 2 hands"),
    ],
)
def test_position_refuses_impossible_states(
    hands: list[list[int]], piles: list[list[int]], draw: list[int], message: str
) -> None:
    opts = rules.Options(num_players=2, deck=deck_for(hands, piles, draw) if len(hands) == 2 else rules.DEFAULT_DECK)
    with pytest.raises(ValueError) as err:
        rules.position(opts, hands, piles, draw)
    assert message in str(err.value)


@pytest.mark.parametrize("start_seat", [1, 2, 3])
def test_the_deal_goes_round_from_seat_0_whatever_the_first_player(start_seat: int) -> None:
    """Ruling: ``start_seat`` says who plays first, not where the deal starts."""
    first = rules.deal(rules.Options(), np.random.default_rng(11))
    other = rules.deal(rules.Options(start_seat=start_seat), np.random.default_rng(11))
    assert other.hands == first.hands and other.draw == first.draw and other.pile_top == first.pile_top
    assert (first.current, other.current) == (0, start_seat)


@pytest.mark.parametrize("special", [rules.ELEVEN, rules.QUIET])
def test_a_special_no_number_can_cover_starts_the_pile_at_0(special: int) -> None:
    """Ruling: when every number card of a custom deck went into the hands, the special turned up stays on top
    and the pile starts at 0 (as a Quiet! starts one); play goes on, on that pile."""
    deck = [0] * rules.NUM_KINDS
    deck[0], deck[special] = 6, 1  # six 1s for two hands of three, one special
    opts = rules.Options(num_players=2, deck=tuple(deck))
    seed = next(s for s in range(100) if rules.deal(opts, np.random.default_rng(s)).pile_top[0] == special)
    g = rules.deal(opts, np.random.default_rng(seed))
    assert (g.pile_value[0], g.pile_size[0], g.draw) == (0, 1, [])
    assert g.hands == [[3] + [0] * (rules.NUM_KINDS - 1)] * 2
    g.apply(0 * rules.NUM_KINDS + 0)  # player 0 plays a 1 on the pile
    assert (g.pile_value[0], g.pile_top[0], g.current) == (1, 0, 1)
