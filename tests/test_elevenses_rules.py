"""Elevenses: The Guilty Party -- the pure rules, scenario by scenario from the rulebook text."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from parlour.envs.elevenses import rules
from parlour.envs.elevenses.rules import card

OPTS = {n: rules.Options(num_players=n) for n in range(2, 6)}


def act_card(g: rules.ElevensesState, c: int) -> int:
    """The card action for ``c`` from the deciding seat's point of view."""
    return rules.card_action(c, g.current, g.n)


def plate(g: rules.ElevensesState, pos: int) -> int:
    return rules.PLATE_BASE + g.rel_of(pos, g.current)


def guilt(g: rules.ElevensesState, pos: int) -> int:
    return rules.GUILT_BASE + g.rel_of(pos, g.current)


def step(g: rules.ElevensesState, action: int) -> list[float] | None:
    assert g.legal_mask()[action], f"{action} should be legal in {rules.PHASE_NAMES[g.phase]}: {g.legal_actions()}"
    return g.apply(action)


def own(seat: int, *numbers: int) -> list[int]:
    return [card(seat, k) for k in numbers]


def simple(n: int = 3, hands: dict[int, list[int]] | None = None, **kw: Any) -> rules.ElevensesState:
    """Every seat holds its own 1, 10 and 11 (so 2–9 lie face down in order) unless ``hands`` says otherwise."""
    hands = hands or {}
    return rules.position(OPTS[n], [hands.get(s, own(s, 1, 10, 11)) for s in range(n)], **kw)


# ----------------------------------------------------------------------------------------------- set-up
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_setup(n: int) -> None:
    for seed in range(30):
        g = rules.deal(OPTS[n], np.random.default_rng(seed))
        assert all(len(h) == rules.HAND_SIZE for h in g.hands)
        assert all(all(c >= 0 and rules.owner(c) == s for c in g.slots[s]) for s in range(n))
        assert all(rules.owner(c) == s for s in range(n) for c in g.hands[s])
        assert len(set(g.guests)) == n
        murderers = 2 if n == 5 else 1
        assert g.mrs == (n < 5) and len(g.guilt) == n + (n < 5) and sum(g.guilt) == murderers
        cubes = [3, 2] + [1] * (n - 2)
        assert g.plates == cubes + ([1] if n < 5 else [])
        assert g.bowl == 6 * n - sum(g.plates)
        for s in range(n):  # each player has seen only their own Guilt card, and only their own hand
            assert [p for p in range(g.positions) if g.guilt_known[s][p]] == [s]
            assert {c for c in range(n * rules.NUMBERS) if g.knows(s, c)} == set(g.hands[s])
        assert g.current == 0 and g.phase == rules.TURN


def test_start_seat_places_the_start_cubes() -> None:
    g = rules.deal(rules.Options(num_players=4, start_seat=2), np.random.default_rng(0))
    assert g.plates == [1, 1, 3, 2, 1] and g.current == 2


# ----------------------------------------------------------------------------------------------- playing
@pytest.mark.parametrize(
    ("hand", "up", "card_", "legal", "why"),
    [
        (own(0, 5, 10, 11), [], card(0, 5), True, "a number 2–9 to its empty position"),
        (own(0, 5, 10, 11), own(0, 6), card(0, 5), True, "any position still face down"),
        (own(0, 1, 10, 11), own(0, 5), card(0, 1), True, "the 1 to the left of the spread"),
        (own(0, 10, 11) + [card(1, 5)], own(0, 5), card(1, 5), False, "another copy of 5 is already face up"),
        (own(0, 10, 11) + [card(1, 5)], [], card(1, 5), True, "another player's card may be played"),
        (own(0, 11, 10), own(0, 1, 2, 3, 4, 5), card(0, 11), False, "the 11 needs six face-up cards"),
        (own(0, 11, 10), own(0, 1, 2, 3, 4, 5, 6), card(0, 11), True, "six face-up cards: the 11 may be played"),
    ],
)
def test_which_cards_may_be_played(hand: list[int], up: list[int], card_: int, legal: bool, why: str) -> None:
    # When seat 0 holds seat 1's 5, seat 1 holds seat 0's 1 (every card is somewhere).
    hand_1 = [card(0, 1), *own(1, 10, 11)] if card(1, 5) in hand else own(1, 1, 10, 11)
    g = simple(3, hands={0: hand, 1: hand_1}, up=[up, [], []])
    assert bool(g.legal_mask()[act_card(g, card_)]) == legal, why


def test_playing_a_card_draws_the_face_down_card_at_its_position() -> None:
    g = simple(3, hands={0: own(0, 5, 10, 11)})
    drawn = g.slots[0][5 - 2]
    step(g, act_card(g, card(0, 5)))
    assert g.face_up[0][4] == card(0, 5) and g.slots[0][3] == -1
    assert drawn in g.hands[0] and len(g.hands[0]) == 3
    assert g.knows(0, drawn) and not g.knows(1, drawn), "only the player sees the card drawn"
    assert all(g.knows(s, card(0, 5)) for s in range(3)), "a face-up card is known to all"


@pytest.mark.parametrize("number", [1, 10])
def test_ones_and_tens_shrink_the_hand(number: int) -> None:
    g = simple(3)
    step(g, act_card(g, card(0, number)))
    if number == 10:  # Cucumber Sandwiches: swap two Guilt cards first
        step(g, guilt(g, 1))
        step(g, guilt(g, 2))
    else:  # Scones: two cubes
        step(g, plate(g, 1))
        step(g, plate(g, 1))
    assert len(g.hands[0]) == 2


def test_the_eleven_may_be_rearranged_else_a_player_with_nothing_to_do_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    # Only the 11 in hand, two cards face up: it cannot be played; by the ruling it may be re-arranged.
    def start() -> rules.ElevensesState:
        return rules.position(OPTS[3], [own(0, 11), own(1, 1, 10, 11), own(2, 1, 10, 11)], [own(0, 1, 10), [], []])

    assert start().legal_actions() == [rules.REARRANGE]
    monkeypatch.setattr(rules, "REARRANGE_ELEVENSES", False)  # the other reading: then the turn is passed
    g = start()
    assert g.legal_actions() == [rules.PASS_TURN]
    step(g, rules.PASS_TURN)
    assert g.current == 1 and g.turns == 1


# ----------------------------------------------------------------------------------------------- re-arranging
def test_rearrangements() -> None:
    g = simple(3, hands={0: own(0, 5, 10, 11)})
    down = g.slots[0][0]  # position 2
    step(g, rules.REARRANGE)
    assert rules.STOP not in g.legal_actions(), "at least one re-arrangement once chosen"
    step(g, act_card(g, card(0, 5)))
    step(g, rules.SLOT_BASE + 0)
    assert g.slots[0][0] == card(0, 5) and down in g.hands[0]
    assert g.knows(0, card(0, 5)), "the player knows what they put face down"
    assert not g.knows(1, down)
    # A second re-arrangement may put the card just picked up back.
    step(g, act_card(g, down))
    step(g, rules.SLOT_BASE + 0)
    assert g.slots[0][0] == down and g.current == 1, "two re-arrangements end the turn"


def test_rearranging_another_players_card_is_tracked_by_its_back() -> None:
    # Seat 0 holds seat 1's 5 (seat 1 knows it is there: it was passed); re-arranged, its back shows where it went.
    g = simple(3, hands={0: [*own(0, 10, 11), card(1, 5)], 1: [card(0, 1), *own(1, 10, 11)]})
    g.knowers[card(1, 5)] |= 1 << 1
    step(g, rules.REARRANGE)
    step(g, act_card(g, card(1, 5)))
    step(g, rules.SLOT_BASE + 3)
    assert g.slots[0][3] == card(1, 5)
    assert g.knows(1, card(1, 5)), "the only card with that back left the hand: seat 1 still knows where it is"
    step(g, rules.STOP)


def test_an_ambiguous_move_loses_track() -> None:
    g = simple(3, hands={0: own(0, 10, 11, 1)})
    g.knowers[card(0, 1)] |= 1 << 1  # seat 1 knows seat 0 holds its 1 (say, from Ham Sandwiches)
    step(g, rules.REARRANGE)
    step(g, act_card(g, card(0, 10)))
    step(g, rules.SLOT_BASE + 0)
    assert not g.knows(1, card(0, 1)), "three cards of the same back: seat 1 cannot tell which one left"


# ----------------------------------------------------------------------------------------------- guests
def test_guest_reveal_and_plate_swap() -> None:
    # Guest 0 wants 1, 6, 9; 1 and 6 are face up, the 9 is played.
    g = simple(3, hands={0: own(0, 9, 11)}, up=[own(0, 1, 6), [], []], guests=[0, 1, 2])
    tea_before = g.tea(0)
    step(g, act_card(g, card(0, 9)))
    assert g.revealed[0] and g.tea(0) == tea_before + rules.TEASPOONS[8] + rules.GUEST_BONUS
    assert g.phase == rules.SWAP_1 and rules.STOP in g.legal_actions(), "the plate swap is optional"
    before = g.plates[:]
    step(g, plate(g, 0))
    step(g, plate(g, 3))  # Mrs Lansdowne's plate
    assert g.plates[0] == before[3] and g.plates[3] == before[0], "plates keep their cubes"
    assert g.phase == rules.CAKES_TARGET, "then the card's special action"


def test_declining_the_plate_swap() -> None:
    g = simple(3, hands={0: own(0, 9, 11)}, up=[own(0, 1, 6), [], []], guests=[0, 1, 2])
    step(g, act_card(g, card(0, 9)))
    before = g.plates[:]
    step(g, rules.STOP)
    assert g.plates == before and g.phase == rules.CAKES_TARGET


# ----------------------------------------------------------------------------------------------- specials
def test_scones_two_cubes_on_one_or_two_plates_including_mrs_lansdowne() -> None:
    for targets in ([1, 1], [1, 3], [3, 3]):
        g = simple(3)
        plates, bowl = g.plates[:], g.bowl
        step(g, act_card(g, card(0, 1)))
        for t in targets:
            step(g, plate(g, t))
        for t in set(targets):
            assert g.plates[t] == plates[t] + targets.count(t)
        assert g.bowl == bowl - 2 and g.current == 1


def test_canapes_one_cube_and_an_empty_bowl_adds_nothing() -> None:
    g = simple(3, hands={0: own(0, 2, 10, 11)})
    step(g, act_card(g, card(0, 2)))
    step(g, plate(g, 2))
    assert g.plates[2] == 2 and g.current == 1
    g = simple(3, hands={0: own(0, 2, 10, 11)})
    g.bowl = 0
    step(g, act_card(g, card(0, 2)))
    assert g.phase == rules.TURN and g.current == 1, "no cube to add: the action does nothing"


def test_biscuits_move_up_to_two_cubes() -> None:
    g = simple(3, hands={0: own(0, 3, 10, 11)})  # plates 3, 2, 1 and Mrs Lansdowne 1
    step(g, act_card(g, card(0, 3)))
    assert rules.STOP in g.legal_actions(), "up to two: the player may move none"
    step(g, plate(g, 0))
    assert plate(g, 0) not in g.legal_actions(), "to a different plate"
    step(g, plate(g, 3))
    step(g, plate(g, 0))
    step(g, plate(g, 1))
    assert g.plates == [1, 3, 1, 2] and g.current == 1
    assert g.took[0][0] == 2 and g.put[0][3] == 1 and g.put[0][1] == 1


def test_tarts_must_move_one_cube() -> None:
    g = simple(3, hands={0: own(0, 4, 10, 11)})
    step(g, act_card(g, card(0, 4)))
    assert rules.STOP not in g.legal_actions()
    step(g, plate(g, 1))
    step(g, plate(g, 2))
    assert g.plates == [3, 1, 2, 1] and g.current == 1


def test_empty_plates_cannot_give_a_cube() -> None:
    g = simple(3, hands={0: own(0, 4, 10, 11)}, plates=[0, 2, 0, 0])
    step(g, act_card(g, card(0, 4)))
    assert g.legal_actions() == [plate(g, 1)]


@pytest.mark.parametrize("claim", [rules.CLAIM_MURDERER, rules.CLAIM_INNOCENT, rules.SILENT])
def test_hors_doeuvres_look_and_claim(claim: int) -> None:
    g = simple(3, hands={0: own(0, 5, 10, 11)}, guilt=[0, 1, 0, 0])
    step(g, act_card(g, card(0, 5)))
    assert guilt(g, 0) not in g.legal_actions(), "another player's card (or Mrs Lansdowne's), not one's own"
    assert guilt(g, 3) in g.legal_actions()
    step(g, guilt(g, 1))
    assert g.guilt_known[0][1] and not g.guilt_known[2][1]
    step(g, claim)
    expected = {
        rules.CLAIM_MURDERER: rules.SAID_MURDERER,
        rules.CLAIM_INNOCENT: rules.SAID_INNOCENT,
        rules.SILENT: rules.LOOKED_SILENT,
    }
    assert g.claims[0][1] == expected[claim] and g.current == 1


@pytest.mark.parametrize(("number", "direction"), [(6, 1), (7, -1)])
def test_tartlets_and_macaroons_pass_left_and_right(number: int, direction: int) -> None:
    g = simple(4, hands={0: own(0, number, 10, 11)})
    step(g, act_card(g, card(0, number)))
    assert g.phase == rules.PASS and g.passers == [0, 1, 2, 3]
    assert act_card(g, card(0, 11)) not in g.legal_actions(), "never the 11"
    chosen = {}
    for s in range(4):
        assert g.current == s
        c = g.hands[s][0] if rules.number(g.hands[s][0]) != 11 else g.hands[s][1]
        chosen[s] = c
        step(g, act_card(g, c))
        if s < 3:
            assert c in g.hands[s], "nothing moves until everyone has chosen"
    for s, c in chosen.items():
        to = (s + direction) % 4
        assert c in g.hands[to] and g.knows(to, c) and g.knows(s, c)
        assert not g.knows((s + 2) % 4, c), "the others see only the back"
    assert g.current == 1 and g.phase == rules.TURN


def test_a_player_holding_only_the_eleven_slides_the_card_on() -> None:
    # Seat 1 holds only its 11: it says so (everyone learns it) and the card from seat 0 slides to seat 2.
    up = [[], own(1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10), []]
    g = rules.position(OPTS[3], [own(0, 6, 10, 11), own(1, 11), own(2, 1, 10, 11)], up)
    step(g, act_card(g, card(0, 6)))
    assert g.passers == [0, 2] and all(g.knows(s, card(1, 11)) for s in range(3))
    give0 = g.hands[0][0] if rules.number(g.hands[0][0]) != 11 else g.hands[0][1]
    step(g, act_card(g, give0))
    step(g, act_card(g, card(2, 1)))
    assert give0 in g.hands[2] and card(2, 1) in g.hands[0] and g.hands[1] == [card(1, 11)]
    assert not g.knows(1, give0), "the sliding player does not look"


def test_ham_sandwiches_see_take_and_give() -> None:
    g = simple(3, hands={0: own(0, 8, 10, 11)})
    step(g, act_card(g, card(0, 8)))
    step(g, rules.SEAT_BASE + 0)  # the player on the left
    assert all(g.knows(0, c) for c in g.hands[1]) and not any(g.knows(2, c) for c in own(1, 1, 10))
    assert act_card(g, card(1, 11)) not in g.legal_actions(), "the 11 may not be taken"
    step(g, act_card(g, card(1, 1)))
    assert act_card(g, card(1, 1)) not in g.legal_actions(), "give a different card"
    give = next(c for c in g.hands[0] if rules.number(c) not in (11,) and c != card(1, 1))
    step(g, act_card(g, give))
    assert card(1, 1) in g.hands[0] and give in g.hands[1] and len(g.hands[1]) == 3
    assert g.knows(1, give) and not g.knows(2, give) and g.current == 1
    assert g.viewed == [[0, 1, 0], [0, 0, 0], [0, 0, 0]], "who saw whose hand is public"


def test_ham_sandwiches_may_take_nothing() -> None:
    g = simple(3, hands={0: own(0, 8, 10, 11)})
    step(g, act_card(g, card(0, 8)))
    step(g, rules.SEAT_BASE + 1)
    step(g, rules.STOP)
    assert g.current == 1 and g.hands[2] == own(2, 1, 10, 11)


def test_ham_sandwiches_on_a_hand_of_only_the_eleven_still_asks() -> None:
    # Nothing may be taken, but the actor still decides ("take nothing"): ending the action at once would tell the
    # table that seat 1 holds only its 11.
    up = [[], own(1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10), []]
    g = rules.position(OPTS[3], [own(0, 8, 10, 11), own(1, 11), own(2, 1, 10, 11)], up)
    step(g, act_card(g, card(0, 8)))
    step(g, rules.SEAT_BASE + 0)
    assert g.phase == rules.HAM_TAKE and g.legal_actions() == [rules.STOP]
    step(g, rules.STOP)
    assert g.current == 1 and g.hands[1] == own(1, 11)


def test_cakes_the_other_player_sees_takes_and_gives() -> None:
    g = simple(3, hands={0: own(0, 9, 10, 11)})
    step(g, act_card(g, card(0, 9)))
    step(g, rules.SEAT_BASE + 1)  # two places left: seat 2
    assert g.current == 2, "the other player makes the choice"
    assert all(g.knows(2, c) for c in g.hands[0])
    step(g, act_card(g, card(0, 10)))
    step(g, act_card(g, card(2, 1)))
    assert card(0, 10) in g.hands[2] and card(2, 1) in g.hands[0] and g.current == 1
    assert g.viewed[2][0] == 1 and sum(map(sum, g.viewed)) == 1


def test_cucumber_sandwiches_swap_guilt_cards_unseen() -> None:
    g = simple(3, guilt=[1, 0, 0, 0])
    step(g, act_card(g, card(0, 10)))
    step(g, guilt(g, 0))
    assert guilt(g, 0) not in g.legal_actions(), "two different Guilt cards"
    step(g, guilt(g, 3))  # with Mrs Lansdowne's
    assert g.guilt == [0, 0, 0, 1]
    assert g.guilt_known[0][3] and not g.guilt_known[0][0], (
        "the player knows where their old card went, not what they hold now"
    )
    assert g.moved[0] == [rules.MOVED, 0, 0, rules.MOVED_OWN], "public: its own card went to Mrs Lansdowne's place"
    assert g.current == 1


# ----------------------------------------------------------------------------------------------- the end
def ending(n: int, plates: list[int], guilt_: list[int], e: int = 0, bowl: int = 0) -> rules.ElevensesState:
    """Seat ``e`` holds its 11 with six cards (1–6) face up; the others have nothing face up."""
    hands = [own(s, 11, 7) if s == e else own(s, 1, 10, 11) for s in range(n)]
    up = [own(s, 1, 2, 3, 4, 5, 6) if s == e else [] for s in range(n)]
    # Keep the Sugar Bowl small so late suspicion does not move the cubes unless a test wants it.
    g = rules.position(OPTS[n], hands, up, guests=[2, 1, 0, 4, 3][:n], guilt=guilt_, plates=plates, current=e)
    g.bowl = bowl
    return g


def test_the_rulebook_three_player_scoring_example() -> None:
    # 8 teaspoons for the Elevenses player, 13 and 8 for the others: 3 cubes to the 13, 1 to the Elevenses player
    # (it breaks the tie for second), 0 to the other 8; late suspicion starts with the Elevenses player.
    hands = [own(0, 11, 10), own(1, 1, 11), own(2, 1, 10, 11)]
    up = [own(0, 1, 2, 3, 4, 5, 6, 7), own(1, 2, 3, 6, 7, 8, 9, 10), own(2, 2, 3, 6, 7, 8)]
    g = rules.position(OPTS[3], hands, up, guests=[0, 3, 4])
    assert [g.tea(s) for s in range(3)] == [8, 13, 8]
    step(g, act_card(g, card(0, 11)))
    assert g.earned == [1, 3, 0] and g.late == [0, 1, 1, 1]
    assert g.phase == rules.LATE and g.current == 0
    step(g, plate(g, 3))
    assert g.current == 1
    for _ in range(3):
        step(g, plate(g, 2))
    assert g.phase == rules.OVER and g.plates[2] == 1 + 3 and g.plates[3] == 2


@pytest.mark.parametrize(
    ("teas", "e", "order"),
    [
        ([5, 5, 5, 5], 2, [2, 3, 0, 1]),  # every tie: the Elevenses player, then clockwise from their left
        ([5, 7, 5, 5], 2, [1, 2, 3, 0]),
        ([5, 7, 5, 5], 1, [1, 2, 3, 0]),
        ([3, 1, 3, 1], 3, [0, 2, 3, 1]),
    ],
)
def test_tea_tie_breaks_order_every_place(teas: list[int], e: int, order: list[int]) -> None:
    g = simple(4)
    g.tea = lambda s: teas[s]  # type: ignore[method-assign]
    assert g.ranking(e) == order


def test_a_short_sugar_bowl_serves_the_higher_place_first() -> None:
    g = ending(4, [3, 2, 1, 1, 1], [0, 1, 0, 0, 0], e=0, bowl=4)
    g.tea = lambda s: [1, 9, 5, 0][s]  # type: ignore[method-assign]
    step(g, act_card(g, card(0, 11)))
    assert g.earned == [0, 3, 1, 0] and g.bowl == 0


@pytest.mark.parametrize(
    ("n", "plates", "guilt_", "e", "winners", "mrs_wins", "arrested", "why"),
    [
        (3, [1, 5, 2, 3], [0, 1, 0, 0], 0, [0], False, [1], "murderer arrested: the least suspicious innocent"),
        (3, [1, 5, 2, 0], [0, 1, 0, 0], 0, [], True, [1], "Mrs Lansdowne can be the least suspicious"),
        (3, [2, 5, 2, 3], [0, 1, 0, 0], 0, [0], False, [1], "a tie for least: the Elevenses player"),
        (3, [2, 5, 2, 3], [0, 1, 0, 0], 1, [2], False, [1], "a tie for least: closest left of the 11's player"),
        (3, [3, 5, 1, 1], [0, 1, 0, 0], 0, [2], False, [1], "Mrs Lansdowne loses a tie to a seated player"),
        (3, [1, 5, 5, 3], [0, 0, 1, 0], 0, [0], False, [1, 2], "a tie for most arrests all"),
        (3, [1, 5, 2, 3], [0, 0, 1, 0], 0, [2], False, [1], "murderer not arrested: the murderer wins"),
        (3, [1, 2, 2, 5], [0, 0, 0, 1], 0, [0], False, [3], "Mrs Lansdowne arrested as the murderer"),
        (3, [5, 2, 2, 1], [0, 0, 0, 1], 0, [], True, [0], "Mrs Lansdowne, the murderer, escapes"),
        (3, [2, 2, 2, 2], [0, 1, 0, 0], 0, [], False, [0, 1, 2, 3], "everyone arrested: no innocent left"),
        (5, [1, 5, 1, 1, 1], [0, 1, 1, 0, 0], 0, [0], False, [1], "five players: one murderer arrested suffices"),
        (5, [5, 1, 1, 2, 2], [0, 1, 1, 0, 0], 0, [1, 2], False, [0], "five players: both murderers share"),
        (2, [4, 1, 2], [0, 1, 0], 1, [1], False, [0], "two players: the murderer escapes"),
        (2, [1, 4, 2], [0, 1, 0], 0, [0], False, [1], "two players: the innocent wins"),
    ],
)
def test_arrest_and_winner(
    n: int,
    plates: list[int],
    guilt_: list[int],
    e: int,
    winners: list[int],
    mrs_wins: bool,
    arrested: list[int],
    why: str,
) -> None:
    g = ending(n, plates, guilt_, e=e)
    rewards = step(g, act_card(g, card(e, 11)))
    assert g.phase == rules.OVER, why
    assert g.arrested == arrested and g.winners == winners and g.mrs_wins == mrs_wins, why
    assert rewards == [1.0 if s in winners else -1.0 for s in range(n)]
    out = g.outcome()
    assert out["winners"] == winners and out["elevenses_player"] == e and out["arrested"] == arrested


def test_turn_cap_truncates() -> None:
    g = rules.deal(rules.Options(num_players=3, max_turns=5), np.random.default_rng(0))
    rng = np.random.default_rng(1)
    rewards = None
    while not g.is_terminal():
        rewards = g.apply(int(rng.choice(g.legal_actions())))
    assert g.truncated and g.turns == 5 and rewards == [0.0, 0.0, 0.0] and g.winners == []


# ----------------------------------------------------------------------------------------------- checks
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_players": 6}, r"num_players.*\[2, 5\]"),
        ({"num_players": 1}, r"num_players"),
        ({"max_turns": 0}, r"max_turns"),
        ({"start_seat": 4, "num_players": 4}, r"start_seat.*\[0, 3\]"),
        ({"cubes_per_player": 1}, r"cubes_per_player"),
    ],
)
def test_bad_keywords(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        rules.Options(**kwargs)


def test_impossible_positions_are_refused() -> None:
    with pytest.raises(ValueError, match="hands"):
        rules.position(OPTS[3], [own(0, 1, 10, 11)])
    with pytest.raises(ValueError, match="face-down"):
        rules.position(OPTS[3], [own(0, 1), own(1, 1, 10, 11), own(2, 1, 10, 11)])
    with pytest.raises(ValueError, match="Murderer"):
        simple(3, guilt=[1, 1, 0, 0])


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_resampling_keeps_what_the_seat_knows_and_the_pending_choices_possible(n: int) -> None:
    rng = np.random.default_rng(n)
    for seed in range(40):
        g = rules.deal(OPTS[n], np.random.default_rng(seed))
        while not g.is_terminal():
            seat = int(rng.integers(n))
            h = rules.resample(g, seat, rng)
            for c in range(n * rules.NUMBERS):
                if g.knows(seat, c):
                    assert h.location[c] == g.location[c]
                # backs are public: the owner of the card at each place is unchanged
            assert [sorted(rules.owner(c) for c in x) for x in h.hands] == [
                sorted(rules.owner(c) for c in x) for x in g.hands
            ]
            assert [[rules.owner(c) if c >= 0 else -1 for c in x] for x in h.slots] == [
                [rules.owner(c) if c >= 0 else -1 for c in x] for x in g.slots
            ]
            assert all(h.guilt[p] == g.guilt[p] for p in range(g.positions) if g.guilt_known[seat][p])
            assert sum(h.guilt) == sum(g.guilt) and h.guests[seat] == g.guests[seat]
            assert any(h.legal_mask()) or h.is_terminal()
            g = h  # play on in the redrawn world: it must stay a legal game
            g.apply(int(rng.choice(g.legal_actions())))


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_the_shape_of_the_game_reveals_nothing_hidden(n: int) -> None:
    # Who decides next and what kind of decision it is may depend on hidden cards only through what the rules make
    # public (a guest revealed, a slider announcing their 11): the same action in the true world and in a world
    # redrawn for an onlooker must lead to the same decision point.
    rng = np.random.default_rng(10 + n)
    checked = 0
    for seed in range(25):
        g = rules.deal(OPTS[n], np.random.default_rng(seed))
        while not g.is_terminal():
            action = int(rng.choice(g.legal_actions()))
            onlooker = (g.current + 1 + int(rng.integers(n - 1))) % n
            h = rules.resample(g, onlooker, rng)
            if h.legal_mask()[action]:
                a, b = g.clone(), h.clone()
                a.apply(action)
                b.apply(action)
                if a.revealed == b.revealed and a.passers == b.passers:  # else a public reveal or announcement
                    assert (a.phase, a.current_player) == (b.phase, b.current_player), rules.PHASE_NAMES[g.phase]
                    checked += 1
            g.apply(action)
    assert checked > 500
