"""Elevenses through the AEC API: PettingZoo's checks, the foundation's checks, views, docs, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from parlour.envs import checks, elevenses_v0
from parlour.envs.elevenses import rules
from parlour.envs.elevenses.env import observation_layout

PLAYER_COUNTS = [2, 3, 4, 5]


def test_a_full_box_of_cubes_stays_inside_the_observation_space() -> None:
    # Two players may share all 30 cubes of the box: plates and bowl are scaled by the box (the fuzz checks every
    # observation against its space).
    assert checks.fuzz(lambda: elevenses_v0.env(num_players=2, cubes_per_player=15), games=15, seed=4).games == 15


def test_turn_cap_passes_the_checks_and_truncates() -> None:
    def factory() -> Any:
        return elevenses_v0.env(num_players=3, max_turns=4)

    assert checks.fuzz(factory, games=20, seed=1).truncated == 20
    env = factory()
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    while not env.unwrapped.game_over:
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    assert all(env.truncations.values()) and not any(env.terminations.values())
    assert all(env._cumulative_rewards[a] == 0 for a in env.agents)


def test_observation_shows_own_hand_and_backs_only() -> None:
    env = elevenses_v0.env(num_players=4)
    env.reset(seed=5)
    g = env.unwrapped.game
    for s in range(4):
        d = env.unwrapped.observation_dict(f"player_{s}")
        in_hand = d["known_in_hand"]  # back × number × hand
        assert in_hand[:, :, 0].sum() == 3 and in_hand.sum() == 3, "only its own hand is known at the start"
        for c in g.hands[s]:
            assert in_hand[(rules.owner(c) - s) % 4, c % rules.NUMBERS, 0] == 1
        assert d["own_guest"].argmax() == g.guests[s]
        assert d["guilt_known"][0, g.guilt[s]] == 1 and d["guilt_known"].sum() == 1
        assert np.allclose(d["hand_backs"][np.arange(4), np.arange(4)], 0.75), "each hand holds 3 own-back cards"
        assert d["down_backs"][:4].sum() == 32 and d["to_act"].argmax() == (0 - s) % 4
        assert np.isclose(d["plates"][(0 - s) % 4] * 30, 3) and np.isclose(d["plates"][5] * 30, 1)


def test_what_a_look_and_a_swap_show() -> None:
    # Seat 0 plays Hors d'Oeuvres on seat 1's Guilt card, claims, then seat 1 swaps cards with Cucumber Sandwiches.
    hands = [
        [rules.card(0, 5), rules.card(0, 1), rules.card(0, 11)],
        [rules.card(1, 10), rules.card(1, 1), rules.card(1, 11)],
    ]
    hands += [[rules.card(s, 1), rules.card(s, 10), rules.card(s, 11)] for s in (2,)]
    env = elevenses_v0.env(num_players=3)
    env.reset(seed=0)
    env.unwrapped.set_state(rules.position(rules.Options(num_players=3), hands, guilt=[0, 1, 0, 0]))
    env.step(rules.card_action(rules.card(0, 5), 0, 3))
    env.step(rules.GUILT_BASE + 1)
    env.step(rules.CLAIM_MURDERER)
    d0, d2 = (env.unwrapped.observation_dict(a) for a in ("player_0", "player_2"))
    assert d0["guilt_known"][1, 1] == 1 and d2["guilt_known"][2].sum() == 0
    assert d2["claims"][1, 2, 1] == 1, "player_2 sees player_0 (one seat to its left) claim 'Murderer' about seat 1"
    env.step(rules.card_action(rules.card(1, 10), 1, 3))  # seat 1: Cucumber Sandwiches, its card with Mrs Lansdowne's
    env.step(rules.GUILT_BASE + 0)
    env.step(rules.GUILT_BASE + rules.MRS)
    d0 = env.unwrapped.observation_dict("player_0")
    assert d0["guilt_known"][5, 1] == 1 and d0["guilt_known"][1].sum() == 0, "the knowledge follows the card"
    assert d0["claims"][0, 5, 1] == 1, "so does the claim"
    # Who swapped which card is public: seat 1 (two places left of player_2) moved its own card (now with Mrs
    # Lansdowne) and hers (now at seat 1).
    d2 = env.unwrapped.observation_dict("player_2")
    assert d2["swapped"][2, 5].tolist() == [0, 1] and d2["swapped"][2, 2].tolist() == [1, 0]
    assert d2["swapped"].sum() == 2


def test_spaces_decode_render_and_docs() -> None:
    env = elevenses_v0.env(num_players=3, render_mode="ansi")
    env.reset(seed=0)
    assert env.action_space("player_0").n == rules.NUM_ACTIONS == 85
    assert env.state().shape == env.state_space.shape
    assert env.decode_action(4) == "card 5 Hors d'Oeuvres with the back of the seat 0 places left"
    assert env.decode_action(55) == "face-down slot 2" and env.decode_action(68) == "plate of Mrs Lansdowne"
    assert env.decode_action(70) == "Guilt card of the seat 1 places left"
    assert env.decode_action(75) == "the player 1 places left" and env.decode_action(84).startswith("pass the turn")
    with pytest.raises(ValueError, match=r"expected an integer in \[0, 84\]"):
        env.decode_action(85)
    g = env.unwrapped.game
    umpire, mine = env.render(), env.render_text("player_0")
    assert "Murderer" in umpire and mine.count("?") > umpire.count("?")
    other = g.hands[1][0]
    assert f"{rules.number(other)}/p1" in umpire.split("\n")[2] and "?/p1" in mine.split("\n")[2]
    doc = elevenses_v0.__doc__ or ""
    assert observation_layout().markdown_table() in doc and f"({observation_layout().size},)" in doc
    assert "Discrete(85)" in doc and "| 79 | re-arrange |" in doc


def test_illegal_actions_are_refused_by_name() -> None:
    env = elevenses_v0.env(num_players=3)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="re-arrange"):
        env.step(rules.CLAIM_MURDERER)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_players": 6}, "num_players=6 is out of range: expected an integer in [2, 5]"),
        ({"max_turns": 0}, "max_turns=0 is out of range"),
        ({"cubes_per_player": 99}, "cubes_per_player=99 is out of range"),
        ({"cubes_per_player": 8}, "cubes_per_player=8 is out of range: expected an integer in [2, 7]"),
        ({"murderers": 2}, "unknown keyword(s) ['murderers']"),
    ],
)
def test_bad_keywords_raise_with_the_valid_range(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as err:
        elevenses_v0.env(**kwargs)
    assert message in str(err.value)


def test_state_holds_everything_hidden() -> None:
    env = elevenses_v0.env(num_players=4)
    env.reset(seed=2)
    g = env.unwrapped.game
    d = env.unwrapped.state_layout.decode(env.state())
    assert d["num_players"].argmax() == 2
    assert d["guilt"].tolist() == g.guilt[:4] + [0.0, float(g.guilt[4])], "seats, then Mrs Lansdowne at index 5"
    assert [int(r.argmax()) for r in d["guests"][:4]] == g.guests
    for s in range(4):
        assert {(int(o), int(k)) for o, k in zip(*np.nonzero(d["hands"][s]), strict=True)} == {
            (rules.owner(c), c % rules.NUMBERS) for c in g.hands[s]
        }
        assert [int(r.argmax()) for r in d["face_down"][s]] == [c % rules.NUMBERS for c in g.slots[s]]
    # Every seat's private knowledge is in the state too (the source's per-seat blocks).
    assert d["known_in_hand"].sum() == 12 and d["own_guest"].sum() == 4
