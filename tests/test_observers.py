"""Each game's pure observer (``envs/<game>/observer.py``) against its env: at every step of seeded random games, every
seat's observation from the env (its incremental path) equals the observer's, written from the rules state alone, and
the observer leaves the state as it found it."""

from __future__ import annotations

import copy
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from parlour.envs import make
from parlour.envs.elevenses import observer as elevenses
from parlour.envs.goes_to_eleven import observer as goes_to_eleven
from parlour.envs.lady_alice import observer as lady_alice
from parlour.envs.six_suspects import observer as six_suspects

#: (env id, its game's observer, make() keywords): every game at its smallest and largest table, with the rule
#: keywords that change the encoding (a match of several games, pile slots, history rows and no notes).
CASES: list[tuple[str, ModuleType, dict[str, Any]]] = [
    ("six_suspects_v0", six_suspects, {"num_players": 2}),
    ("six_suspects_v0", six_suspects, {"num_players": 8, "num_games": 2, "table_announcement_turns": 6}),
    ("goes_to_eleven_v0", goes_to_eleven, {"num_players": 2, "pick_on_me": True}),
    ("goes_to_eleven_v0", goes_to_eleven, {"num_players": 6, "max_piles": 4}),
    ("lady_alice_v2", lady_alice, {"num_players": 3, "max_rounds": 3}),
    ("lady_alice_v2", lady_alice, {"num_players": 5, "no_notes": True}),
    ("lady_alice_v0", lady_alice, {"num_players": 4}),
    ("elevenses_v0", elevenses, {"num_players": 2}),
    ("elevenses_v0", elevenses, {"num_players": 5}),
]


def _same(a: Any, b: Any) -> bool:
    """``a`` and its deep copy ``b`` hold the same values, all the way down (arrays, generators and objects included)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, np.random.Generator):
        return bool(a.bit_generator.state == b.bit_generator.state)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if hasattr(a, "__dict__"):
        return _same(vars(a), vars(b))
    return bool(a == b)


@pytest.mark.parametrize(("env_id", "observer", "kwargs"), CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_the_env_hands_out_what_the_pure_observer_writes(env_id: str, observer: Any, kwargs: dict[str, Any]) -> None:
    env = make(env_id, **kwargs)
    params = observer.Params.from_options(env.unwrapped.rules_options)
    rng = np.random.default_rng(0)
    steps = 0
    for seed in range(2):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            state = env.unwrapped.game
            before = copy.deepcopy(state)
            for seat, name in enumerate(env.possible_agents):
                expected = env.observe(name)["observation"]
                written = observer.observe(state, seat, params)
                assert written.dtype == np.float32 and written.shape == expected.shape
                assert np.array_equal(written, expected), f"{env_id}: {name}'s observation at step {steps}"
            assert _same(state, before), f"{env_id}: the observer changed the state at step {steps}"
            _, _, term, trunc, _ = env.last()
            mask = env.observe(agent)["action_mask"]
            env.step(None if term or trunc else int(rng.choice(np.flatnonzero(mask))))
            steps += 1
    assert steps > 20
