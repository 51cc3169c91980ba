"""The game contract every game's pure rules keep (``parlour.envs.contract``)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from parlour.envs import ENVIRONMENTS, make

RULES = [f"parlour.envs.{name.rsplit('_v', 1)[0]}.rules" for name in sorted(ENVIRONMENTS)]


def test_pure_rules_import_no_rl_library() -> None:
    code = "import sys\n" + "".join(f"import {m}\n" for m in RULES)
    code += "print(sorted({m.split('.')[0] for m in sys.modules} & {'gymnasium', 'pettingzoo', 'torch'}))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_apply_refuses_what_the_mask_forbids_and_plays_what_it_allows(name: str) -> None:
    env = make(name)
    env.reset(seed=3)
    state = env.game
    mask = state.legal_mask()
    illegal = int(np.flatnonzero(mask == 0)[0])
    for bad, message in ((illegal, "illegal action"), (len(mask), "not valid"), (-1, "not valid"), (1.0, "not valid")):
        with pytest.raises(ValueError, match=message):
            state.apply(bad)  # type: ignore[arg-type]
    legal = int(np.flatnonzero(mask)[0])
    a, b = state.clone(), state.clone()
    assert a.apply(legal) == b.play(legal)
    assert a.current_player == b.current_player and np.array_equal(a.legal_mask(), b.legal_mask())


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_a_finished_game_says_whether_it_was_truncated_and_who_won(name: str) -> None:
    env = make(name)
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    state = env.game
    assert state.truncated is False
    while state.current_player >= 0:
        state.apply(int(rng.choice(np.flatnonzero(state.legal_mask()))))
    assert state.is_terminal() and isinstance(state.truncated, bool)
    assert set(state.outcome()["winners"]) <= set(range(env.num_players))


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_phases_are_one_enum_named_and_encoded_whole(name: str) -> None:
    import importlib

    rules = importlib.import_module(f"parlour.envs.{name.rsplit('_v', 1)[0]}.rules")
    phases = list(rules.Phase)
    assert [int(p) for p in phases] == list(range(len(phases))) and len(rules.PHASE_NAMES) == len(phases)
    assert all(getattr(rules, p.name) == int(p) and type(getattr(rules, p.name)) is int for p in phases)
    env = make(name)
    assert env.observation_layout.field("phase").size == len(phases)
    env.reset(seed=0)
    assert rules.Phase(env.game.phase) is rules.Phase(0)
