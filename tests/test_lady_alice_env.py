"""Lady Alice through the AEC API: PettingZoo's checks, the foundation's checks, views, docs, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from parlour.envs import checks, lady_alice_v1
from parlour.envs.lady_alice import rules
from parlour.envs.lady_alice.env import observation_layout

PLAYER_COUNTS = [3, 4, 5]


def test_turn_cap_passes_the_checks() -> None:
    def factory() -> Any:
        return lady_alice_v1.env(num_players=3, max_rounds=2)

    report = checks.fuzz(factory, games=30, seed=1)
    assert report.games == 30
    checks.replay_check(factory, seed=2)


def test_no_notes_hides_the_history_but_not_the_last_verdict() -> None:
    for no_notes in (False, True):
        env = lady_alice_v1.env(no_notes=no_notes)
        env.reset(seed=1)
        for _ in range(4):
            env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
        d = env.unwrapped.observation_dict("player_2")
        assert d["previous"].sum() == 4 and d["previous_smiles"].sum() == 1
        assert bool(d["suspicions"].sum() == 0) == no_notes


def test_consistent_solutions_shrink_and_keep_the_truth() -> None:
    env = lady_alice_v1.env(num_players=4)
    env.reset(seed=3)
    g = env.unwrapped.game
    sizes = [len(env.unwrapped.consistent_solutions("player_0"))]
    assert sizes[0] == 8**3, "holding one clue leaves the other three categories open"
    rng = np.random.default_rng(0)
    while g.rounds < 5 and not g.is_terminal():
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(rules.PASS if g.phase == rules.DEDUCE else int(rng.choice(np.flatnonzero(mask))))
        sizes.append(len(env.unwrapped.consistent_solutions("player_0")))
    assert all(a >= b for a, b in zip(sizes, sizes[1:], strict=False)) and sizes[-1] < sizes[0]
    assert any((row == np.array(g.solution)).all() for row in env.unwrapped.consistent_solutions("player_0"))


def test_observation_dict_shows_own_card_and_counters_only() -> None:
    env = lady_alice_v1.env(num_players=4)
    env.reset(seed=5)
    g = env.unwrapped.game
    for s in range(4):
        d = env.unwrapped.observation_dict(f"player_{s}")
        assert d["own_evidence"].argmax() == g.evidence[s] and d["own_evidence"].sum() == 1
        assert np.allclose(d["counters_left"], 1.0) and d["to_act"].argmax() == (0 - s) % 4
        assert d["num_players"].argmax() == 1 and d["phase"].argmax() == rules.SUSPECT


def test_spaces_decode_render_and_docs() -> None:
    env = lady_alice_v1.env(num_players=3, render_mode="ansi")
    env.reset(seed=0)
    assert env.action_space("player_0").n == 41 and env.state().shape == env.state_space.shape
    assert env.decode_action(2) == "clue Mary Kingsley (Suspect)"
    assert env.decode_action(33) == "counter value 1" and env.decode_action(35) == "pass"
    assert env.decode_action(36) == "accuse" and env.decode_action(40) == "accusation leaves out the Object category"
    with pytest.raises(ValueError, match=r"expected an integer in \[0, 40\]"):
        env.decode_action(41)
    g = env.unwrapped.game
    umpire, mine = env.render(), env.render_text("player_0")
    assert "solution:" in umpire and "solution:" not in mine
    assert f"player_0: evidence {rules.clue_name(g.evidence[0])}" in mine and "player_1: evidence ?" in mine
    doc = lady_alice_v1.__doc__ or ""
    assert observation_layout().markdown_table() in doc and f"({observation_layout().size},)" in doc
    assert "Discrete(41)" in doc and "| 35 | pass |" in doc
    assert lady_alice_v1.env(max_rounds=5).observation_space("player_0")["observation"].shape == (
        observation_layout(5).size,
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_players": 6}, "num_players=6 is out of range: expected an integer in [3, 5]"),
        ({"max_rounds": 0}, "max_rounds=0 is out of range"),
        ({"reward": "points"}, "reward='points' is not valid: expected one of ['win', 'score']"),
        ({"no_notes": 1}, "no_notes=1 is not valid"),
        ({"notes": False}, "unknown keyword(s) ['notes']"),
    ],
)
def test_bad_keywords_raise_with_the_valid_range(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as err:
        lady_alice_v1.env(**kwargs)
    assert message in str(err.value)


def test_position_refuses_a_wrong_evidence_set() -> None:
    with pytest.raises(ValueError, match="is not a 4-player solution"):
        rules.position(rules.Options(), [0, 1, 16, 24])  # two suspects with four players
