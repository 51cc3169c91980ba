"""This Game Goes to Eleven through the AEC API: PettingZoo's checks, the foundation's checks, views, docs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from parlour.envs import checks, goes_to_eleven_v0, make
from parlour.envs.goes_to_eleven import rules
from parlour.envs.goes_to_eleven.env import observation_layout

PLAYER_COUNTS = list(range(2, 7))
VARIANTS: list[dict[str, Any]] = [{}, {"pick_on_me": True}]


def eleven(num_players: int = 4, seed: int = 0, **kwargs: Any) -> Any:
    env = make("goes_to_eleven_v0", num_players=num_players, **kwargs)
    env.reset(seed=seed)
    return env


def random_steps(env: Any, count: int, rng: np.random.Generator) -> None:
    for _ in range(count):
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))


def test_small_pile_limit_and_dense_rewards_pass_the_checks() -> None:
    for kwargs in ({"max_piles": 1}, {"max_piles": 2, "reward": "margin"}, {"reward": "cards", "num_players": 3}):
        checks.fuzz(lambda kw=kwargs: goes_to_eleven_v0.env(**kw), games=20, seed=3)  # type: ignore[misc]
        checks.hidden_information_audit(lambda kw=kwargs: goes_to_eleven_v0.env(**kw), games=1, every=5)  # type: ignore[misc]


def test_same_seed_same_deal_different_seed_different_deal() -> None:
    assert eleven(seed=7).game.draw == eleven(seed=7).game.draw
    assert eleven(seed=7).game.draw != eleven(seed=8).game.draw


def test_spaces_grow_with_max_piles() -> None:
    small, large = goes_to_eleven_v0.env(max_piles=3), goes_to_eleven_v0.env(max_piles=20)
    assert small.action_space("player_0").n == 11 * 4 + 7 and large.action_space("player_0").n == 11 * 21 + 7
    assert small.observation_space("player_0")["observation"].shape == (observation_layout(3).size,)
    assert large.observation_space("player_0")["observation"].shape == (observation_layout(20).size,)
    env = goes_to_eleven_v0.env()
    env.reset(seed=0)
    assert env.state().shape == env.state_space.shape and env.state_space.contains(env.state())


def test_observation_dict_shows_own_hand_and_public_fields_only() -> None:
    env = eleven(3, seed=5)
    g = env.unwrapped.game
    for agent in env.possible_agents:
        seat = env.unwrapped._seat[agent]
        d = env.unwrapped.observation_dict(agent)
        assert d["num_players"].argmax() == 1
        assert np.allclose(d["hand"] * 3, g.hands[seat])
        assert d["pile_present"][0] == 1 and d["pile_value"][0].argmax() == g.pile_value[0]
        assert d["pile_top"][0].argmax() == g.pile_top[0] and d["new_pile"][0] == 0
        assert d["to_act"].argmax() == (0 - seat) % 3, "seats are relative to the observer"
        assert np.allclose(d["played"] * np.array(rules.DEFAULT_DECK), g.played)
        assert d["draw_size"][0] * 72 == pytest.approx(len(g.draw))


def test_decode_action_and_render() -> None:
    env = eleven(3, seed=2, render_mode="ansi")
    assert env.decode_action(0) == "play 1 on pile 0"
    assert env.decode_action(12 * 11 + rules.QUIET) == "play Quiet! to start a new pile"
    assert env.decode_action(143) == "give the pile to the player 1 seat to the left"
    assert env.decode_action(145) == "give the pile to the player 3 seats to the left"
    assert (
        env.decode_action(148) == "let the Eleven stand" and env.decode_action(149) == "answer the Eleven with Quiet!"
    )
    with pytest.raises(ValueError, match=r"expected an integer in \[0, 149\]"):
        env.decode_action(150)
    g = env.unwrapped.game
    umpire = env.render()
    mine = env.render_text("player_0")
    theirs = env.render_text("player_1")
    own = " ".join(rules.KIND_NAMES[k] for k in range(rules.NUM_KINDS) for _ in range(g.hands[0][k]))
    assert umpire == env.render_text(None) and "3 cards" not in umpire
    assert f"player_0: collected 0; hand: {own}" in mine
    assert "player_0: collected 0; hand: 3 cards" in theirs and mine.count("3 cards") == 2


def test_illegal_action_raises_with_the_legal_actions() -> None:
    env = eleven(2, seed=0)
    legal = env.unwrapped.legal_actions()
    bad = next(a for a in range(150) if a not in legal)
    with pytest.raises(ValueError) as err:
        env.step(bad)
    assert f"illegal action {bad}" in str(err.value) and env.decode_action(legal[0]) in str(err.value)


def test_docs_observation_and_action_tables() -> None:
    doc = goes_to_eleven_v0.__doc__ or ""
    assert observation_layout().markdown_table() in doc
    env = goes_to_eleven_v0.env()
    assert f"Discrete({env.num_actions})" in doc and f"({observation_layout().size},)" in doc
    gb = rules.give_base(rules.DEFAULT_MAX_PILES)
    assert f"| {gb - 11}–{gb - 1} (``11 × max_piles + k``) |" in doc and f"| {gb}–{gb + 4} |" in doc
    assert f"| {rules.pass_action(12)} | let the Eleven stand |" in doc
    assert f"| {rules.quiet_action(12)} | answer the Eleven with a Quiet! |" in doc
    assert "(7, 7, 7, 7, 7, 7, 6, 6, 6, 6, 6)" in doc and rules.DEFAULT_DECK == (7, 7, 7, 7, 7, 7, 6, 6, 6, 6, 6)


def test_resample_keeps_own_hand_and_public_cards_and_redraws_the_rest() -> None:
    env = eleven(4, seed=9)
    random_steps(env, 30, np.random.default_rng(1))
    g = env.unwrapped.game
    agent = "player_1"
    copies = [env.unwrapped.resample_hidden(agent, np.random.default_rng(s)).game for s in range(20)]
    for c in copies:
        assert c.hands[1] == g.hands[1] and c.played == g.played and c.hand_size == g.hand_size
        assert sorted(c.draw + [k for s in (0, 2, 3) for k in range(11) for _ in range(c.hands[s][k])]) == sorted(
            g.draw + [k for s in (0, 2, 3) for k in range(11) for _ in range(g.hands[s][k])]
        ), "the unseen cards are the same multiset"
    assert len({repr((c.hands, c.draw)) for c in copies}) > 15


@pytest.mark.parametrize("n", [2, 4, 6])
def test_every_game_ends_within_the_rulebook_bound(n: int) -> None:
    from parlour.envs import checks

    report = checks.fuzz(lambda: goes_to_eleven_v0.env(num_players=n), games=15, seed=n)
    # Every play spends a card (72), every pile that leaves needs at most n - 1 answers and one gift, then n dead
    # steps: far below this bound; the fuzz proves each game ends.
    assert report.games == 15 and report.longest <= 72 * (n + 1) + n
