"""What every Parlour env promises, checked for every registered env, player count and declared variant (the cases
of ``parlour.envs.golden.cases``: every player count with default rules, then the variants the game declares).

PettingZoo's own API and seed tests, the hidden-information audit, the seeded fuzz of invariants, record replay,
copies, the generated docs, and that scripted bots see only what their seat sees. A new game is covered by being
registered. Heavier budgets of the same checks run in the slow tier (``pytest -m slow``).
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from parlour.baselines import BOTS
from parlour.envs import ENVIRONMENTS, checks, golden, make

#: Previous versions kept for the policies trained on them: the same code as their successor but for a flag or a
#: keyword default, pinned by their own default-tier tests (tests/test_game_ends.py, the rules' tests) and golden
#: traces; the whole suite runs on them in the slow tier, keeping the default run lean.
PREVIOUS_VERSIONS = {"lady_alice_v0", "lady_alice_v1"}
CASES = [
    pytest.param(name, kwargs, marks=[pytest.mark.slow] if name in PREVIOUS_VERSIONS else [])
    for name in ENVIRONMENTS
    for kwargs in golden.cases(name)
]
IDS = [f"{c.values[0]}-" + "-".join(f"{k}={v}" for k, v in c.values[1].items()) for c in CASES]


def factory(name: str, kwargs: dict[str, Any]) -> checks.EnvFactory:
    return lambda: make(name, **kwargs)


@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=IDS)
def test_pettingzoo_api_and_seed_tests(name: str, kwargs: dict[str, Any]) -> None:
    api_test(make(name, **kwargs), num_cycles=300)
    seed_test(factory(name, kwargs), num_cycles=200)


@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=IDS)
def test_hidden_information_audit(name: str, kwargs: dict[str, Any]) -> None:
    report = checks.hidden_information_audit(factory(name, kwargs), games=2, every=4, seed=len(IDS))
    assert report.hidden_change_share > 0.8 and report.visible_changes_checked > 0


@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=IDS)
def test_fuzz_replay_and_copies(name: str, kwargs: dict[str, Any]) -> None:
    assert checks.fuzz(factory(name, kwargs), games=12, seed=3).games == 12
    record = checks.replay_check(factory(name, kwargs), seed=5)
    assert record["env"] == name and all(step["text"] for step in record["actions"])
    assert checks.copy_check(factory(name, kwargs), seed=7, steps=20) > 0


@pytest.mark.parametrize("name", ENVIRONMENTS)
def test_docs_are_generated_from_the_env(name: str) -> None:
    module = importlib.import_module(ENVIRONMENTS[name])
    env = make(name)
    doc = module.__doc__ or ""
    assert env.observation_layout.markdown_table() in doc
    assert f"Box(0, 1, ({env.observation_layout.size},), float32)" in doc and f"Discrete({env.num_actions})" in doc
    for heading in ("Observation", "Actions", "Rewards", "Rulings", "Version history"):
        assert f"\n{heading}\n" in doc, heading
    assert f"v{env.env_version}:" in doc.split("Version history")[1]


@pytest.mark.parametrize("name", ENVIRONMENTS)
def test_bots_see_only_what_their_seat_sees(name: str) -> None:
    """At decisions of a random game, every bot that plays from its observation chooses the same in every world
    consistent with what its seat knows: even handed the env (``act_with_env``), it reads nothing hidden."""
    bots = [cls() for cls in BOTS.values() if (cls.games is None or name in cls.games) and not cls.needs_env]
    assert len(bots) >= 3, bots  # random, heuristic, expert
    env = make(name)
    rng = np.random.default_rng(1)
    for i, point in enumerate(checks.random_decision_points(env, rng, seed=11)):
        agent = point.agent_selection
        if i % 5 or point.terminations[agent] or point.truncations[agent]:
            continue
        for bot in bots:
            worlds = [point] + [point.resample_hidden(agent, np.random.default_rng(s)) for s in range(3)]
            choices = {bot.act_with_env(w, agent, np.random.default_rng(0)) for w in worlds}
            assert len(choices) == 1, f"{bot.name} in {name}, decision {i}: {choices}"


@pytest.mark.parametrize("name", ENVIRONMENTS)
def test_a_clone_shares_no_state_with_its_original(name: str) -> None:
    """A copy (``clone()``, which shares the env's fixed parts and copies generators by state) goes its own way:
    playing it on to the end leaves the original's observation, history and record as they were, and both draw
    the same next deal from their seeders."""
    env = make(name)
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    for _ in range(6):
        env.step(int(rng.choice(np.flatnonzero(env.last()[0]["action_mask"]))))
    before = (env.observe(env.agent_selection)["observation"].copy(), env.record(), list(env.agents))
    twin = env.clone()
    for agent in twin.agent_iter():
        done = twin.terminations[agent] or twin.truncations[agent]
        twin.step(None if done else int(rng.choice(np.flatnonzero(twin.last()[0]["action_mask"]))))
    after = (env.observe(env.agent_selection)["observation"], env.record(), env.agents)
    assert np.array_equal(before[0], after[0]) and before[1] == after[1] and before[2] == after[2]
    twin, other = env.clone(), env.clone()
    twin.reset()
    other.reset()
    assert twin.game_seed == other.game_seed and twin.record() == other.record()
    env.reset()
    assert env.game_seed == twin.game_seed
