"""How every game end is signalled (RULINGS.md, general): a cap that *scores* the game is part of it and ends the
episode as a PettingZoo **termination**; a cap that leaves it unscored (every reward 0) is a **truncation** -- the
rules' own (Elevenses' turn cap) or the driver's ``max_turns``. A trainer bootstraps a value at a truncation, so a
scored end signalled as one biases every value target (issue 38).

Checked for every registered env: random games at the default rules, at each game's own cap shortened so that it
ends many of them, and at a short driver cap. ``lady_alice_v0``/``v1`` were published before the ruling and keep
their scored truncation (their policies were trained with it): that is pinned too, so it cannot spread.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from parlour import envs
from parlour.envs import ENVIRONMENTS, make

#: Env ids whose scored cap is (still) a truncation: published before the ruling, kept for their policies.
LEGACY_SCORED_TRUNCATION = {"lady_alice_v0", "lady_alice_v1"}
#: Per game: the rule keyword that shortens its own cap, so that random games reach it (none: the rules end every
#: game by themselves).
OWN_CAP: dict[str, dict[str, Any]] = {
    "six_suspects": {},
    "goes_to_eleven": {},
    "lady_alice": {"max_rounds": 1},
    # Elevenses' rules cap (200 turns) shares its keyword's name with the driver's ``max_turns``, which takes it:
    # a shorter cap is the driver's, unscored as the rules' is (the "driver cap" case).
    "elevenses": {},
}
#: Per game: whether its own cap scores the game (the rulebooks' rulings: Lady Alice scores without the accusation
#: bonus; Elevenses' turn cap gives every seat 0).
CAP_SCORES = {"six_suspects": False, "goes_to_eleven": False, "lady_alice": True, "elevenses": False}
GAMES = 24


def game_name(name: str) -> str:
    return envs.game_of(name).name


def play(name: str, kwargs: dict[str, Any], seed: int) -> dict[str, Any]:
    """One random game: how it ended (the flags every seat got), each seat's return, whether the rules' cap ended it."""
    env = make(name, **kwargs)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    returns: dict[str, float] = {}
    flags: set[tuple[bool, bool]] = set()
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        returns[agent] = returns.get(agent, 0.0) + reward
        if terminated or truncated:
            flags.add((terminated, truncated))
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert len(flags) == 1, f"{name}: seats got different end flags {flags}"
    outcome = env.final_outcome
    assert outcome is not None
    (terminated, truncated) = flags.pop()
    return {
        "terminated": terminated,
        "truncated": truncated,
        "scored": any(r != 0 for r in returns.values()),
        "capped": bool(getattr(env.game, "truncated", False)),
        "outcome": outcome,
    }


CASES = [
    (name, kind, kwargs)
    for name in ENVIRONMENTS
    for kind, kwargs in (("default", {}), ("own cap", OWN_CAP[game_name(name)]), ("driver cap", {"max_turns": 2}))
    if not (kind == "own cap" and not kwargs)
]


@pytest.mark.parametrize(("name", "kind", "kwargs"), CASES, ids=[f"{n}-{k}" for n, k, _ in CASES])
def test_a_scored_end_is_a_termination_and_an_unscored_one_a_truncation(
    name: str, kind: str, kwargs: dict[str, Any]
) -> None:
    ends = [play(name, kwargs, seed) for seed in range(GAMES)]
    for end in ends:
        # exactly one flag, and the outcome (which the interop bridges read) says the same
        assert end["terminated"] != end["truncated"]
        assert bool(end["outcome"]["truncated"]) == end["truncated"]
        legacy = name in LEGACY_SCORED_TRUNCATION and end["capped"]
        if legacy:
            assert end["truncated"] and end["scored"], "v0/v1 keep their scored truncation at the round cap"
        else:
            # the default reward pays every seat +-1 at a scored end: a truncation pays nothing, a termination pays
            assert end["scored"] == end["terminated"], (name, kwargs, end)
        if end["capped"]:
            assert end["scored"] == CAP_SCORES[game_name(name)]
    if kind == "own cap":
        assert any(e["capped"] for e in ends), "no game reached the shortened cap: the case checks nothing"
    if kind == "driver cap":
        assert any(e["truncated"] and not e["capped"] for e in ends), "no game reached the driver's cap"


def test_lady_alice_v2_says_in_its_outcome_that_the_round_cap_ended_the_game() -> None:
    ends = [play("lady_alice_v2", {"max_rounds": 1}, seed) for seed in range(GAMES)]
    capped = [e for e in ends if e["capped"]]
    assert capped and all(e["outcome"]["capped"] and e["terminated"] for e in capped)
    assert all(not e["outcome"]["capped"] for e in ends if not e["capped"])


@pytest.mark.parametrize(("name", "terminated"), [("lady_alice_v2", True), ("lady_alice_v1", False)])
def test_the_single_agent_view_sb3_trains_on_passes_the_flags_on(name: str, terminated: bool) -> None:
    """SB3 bootstraps where Gymnasium says ``truncated`` (its vec envs set ``TimeLimit.truncated`` from it)."""
    from parlour.baselines import make as make_bot
    from parlour.training.single_agent import SingleAgentEnv

    env = SingleAgentEnv(name, [make_bot("random")], env_kwargs={"max_rounds": 1}, learner_seat=0, seed=0)
    rng = np.random.default_rng(0)
    seen = 0
    for _ in range(GAMES):
        env.reset()
        done = False
        while not done:
            _, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            done = term or trunc
        if env.aec.game.truncated:  # the round cap ended it
            seen += 1
            assert (term, trunc) == (terminated, not terminated)
    assert seen


def test_the_tianshou_bridge_passes_the_flags_on() -> None:
    ts = pytest.importorskip("parlour.envs.interop.tianshou")
    pytest.importorskip("tianshou")
    env = ts.TianshouEnv(make("lady_alice_v2", max_rounds=1))
    rng = np.random.default_rng(2)
    seen = 0
    for seed in range(GAMES):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            obs, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(obs["mask"]))))
            done = term or trunc
        if env.parlour.game.truncated:
            seen += 1
            assert term and not trunc
    assert seen


@pytest.mark.parametrize("name", list(ENVIRONMENTS))
def test_a_game_cut_by_the_driver_cap_replays_from_its_record(name: str) -> None:
    """The record's options recreate the cap that cut the game: Elevenses' rules have a ``max_turns`` of their own
    (200), which used to overwrite the driver's in the record, so a cut game replayed to a different end."""
    from parlour.envs import replay

    env = make(name, max_turns=2)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for _agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    record = env.record()
    assert record["options"]["max_turns"] == 2
    replay(record)  # raises if the replayed game ends otherwise
