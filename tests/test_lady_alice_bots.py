"""Lady Alice's bots: legal, observation-only, logical, and ordered in fixed-seed matches."""

from __future__ import annotations

from itertools import product
from typing import Any

import numpy as np
import pytest

from parlour.baselines import available, make
from parlour.baselines.lady_alice import LadyAliceExpert, decode, solution_probabilities
from parlour.baselines.search import DeterminizedSearch
from parlour.envs import lady_alice_v1
from parlour.envs import make as make_env
from parlour.envs.lady_alice import rules
from parlour.training.evaluation.games import play_game
from parlour.training.evaluation.match import run_match

BOTS = ["random", "lady_alice_heuristic", "lady_alice_expert"]
NAMES = {rules.clue_name(c): c for c in range(rules.NUM_CLUES)}


def test_registry() -> None:
    assert set(BOTS) | {"search"} <= set(available("lady_alice_v1"))


@pytest.mark.parametrize("variant", [{}, {"no_notes": True}, {"max_rounds": 3}])
@pytest.mark.parametrize("n", [3, 4, 5])
def test_bots_are_always_legal(n: int, variant: dict[str, Any]) -> None:
    env = make_env("lady_alice_v1", num_players=n, **variant)
    pool = [make(b) for b in BOTS]
    rng = np.random.default_rng(n)
    for g in range(3):
        seats = [pool[(s + g) % len(pool)] for s in range(n)]
        result = play_game(env, seats, seed=g, rng=rng)  # an illegal choice raises the env's ValueError
        assert result["outcome"]["winners"]


def test_search_is_legal_in_lady_alice() -> None:
    env = make_env("lady_alice_v1", num_players=3, max_rounds=2)
    result = play_game(
        env,
        [DeterminizedSearch(worlds=1, rollouts=1), make("random"), make("random")],
        seed=1,
        rng=np.random.default_rng(0),
    )
    assert result["outcome"]["winners"]


def play_suspicion(env: Any, names: list[str]) -> None:
    for name in names:
        env.step(NAMES[name])


def test_expert_knows_the_probabilities_and_accuses_when_sure() -> None:
    evidence = [NAMES["Mary Kingsley"], NAMES["Waterloo Station"], NAMES["7:00"], NAMES["compass"]]
    env = lady_alice_v1.env(num_players=4)
    env.unwrapped.set_state(rules.position(env.unwrapped.rules_options, evidence, holder=3))
    view = decode(env.observe("player_0")["observation"])
    worlds, prob = solution_probabilities(view)
    assert len(worlds) == 8**3 and prob[NAMES["Mary Kingsley"]] == 1.0 and prob[NAMES["Tippu Tip"]] == 0.0
    assert prob[NAMES["compass"]] == pytest.approx(1 / 8)
    # A full verdict on the exact solution: every consistent world agrees, so the expert accuses and wins.
    play_suspicion(env, ["Mary Kingsley", "Waterloo Station", "7:00", "compass"])
    expert = LadyAliceExpert()
    rng = np.random.default_rng(0)
    for _ in range(5):
        obs = env.observe(env.agent_selection)
        env.step(expert.act(obs["observation"], obs["action_mask"], rng))
    g = env.unwrapped.game
    assert g.is_terminal() and g.accuser == 0 and g.winners == [0]


def test_expert_does_not_accuse_when_unsure() -> None:
    evidence = [NAMES["Mary Kingsley"], NAMES["Waterloo Station"], NAMES["7:00"], NAMES["compass"]]
    env = lady_alice_v1.env(num_players=4)
    env.unwrapped.set_state(rules.position(env.unwrapped.rules_options, evidence, holder=3))
    play_suspicion(env, ["Mary Kingsley", "Waterloo Station", "7:00", "Object 3"])  # 3 smiles
    obs = env.observe("player_0")
    action = LadyAliceExpert().act(obs["observation"], obs["action_mask"], np.random.default_rng(0))
    assert action != rules.ACCUSE


def expected_log_size(
    n: int, own: int, verdicts: list[tuple[tuple[int, ...], int]], suspicion: tuple[int, ...]
) -> float:
    """Expected log-size of the suspecting seat's consistent set after the verdict on ``suspicion``."""
    member = rules.membership(n)[rules.consistent_mask(n, own, verdicts)]
    smiles = member[:, list(suspicion)].sum(axis=1)
    counts = np.bincount(smiles)
    counts = counts[counts > 0]
    return float((counts / counts.sum() * np.log(counts)).sum())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_expert_suspects_the_most_informative_combination(seed: int) -> None:
    """After two random suspicions, the expert's own suspicion minimises the expected size of its consistent set
    (equivalently maximises the entropy of the verdict) over all 4,096 combinations."""
    env = lady_alice_v1.env(num_players=4)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    g = env.unwrapped.game
    while g.rounds < 2 or g.phase != rules.SUSPECT:
        obs = env.observe(env.agent_selection)
        env.step(rules.PASS if g.phase == rules.DEDUCE else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    expert, holder = LadyAliceExpert(), g.holder
    for _ in range(4):
        obs = env.observe(env.agent_selection)
        env.step(expert.act(obs["observation"], obs["action_mask"], rng))
    assert g.rounds == 3 and g.history[-1].seat == holder
    chosen = g.history[-1].clues
    before = g.verdicts()[:-1]
    own = g.evidence[holder]
    best = min(
        expected_log_size(4, own, before, tuple(k * 8 + i for k, i in enumerate(pick)))
        for pick in product(range(8), repeat=4)
        if tuple(k * 8 + i for k, i in enumerate(pick)) != g.history[-2].clues
    )
    assert expected_log_size(4, own, before, chosen) == pytest.approx(best)


def test_ladder_is_ordered_in_fixed_seed_matches() -> None:
    low = {
        r["bot"]: r
        for r in run_match("lady_alice_v1", ["random", "lady_alice_heuristic"], num_players=4, games=60, seed=2)
    }
    high = {
        r["bot"]: r
        for r in run_match(
            "lady_alice_v1", ["lady_alice_heuristic", "lady_alice_expert"], num_players=4, games=60, seed=3
        )
    }
    for rows, lower, higher in (
        (low, "random", "lady_alice_heuristic"),
        (high, "lady_alice_heuristic", "lady_alice_expert"),
    ):
        assert rows[higher]["win_ci"][0] > rows[lower]["win_ci"][1], (lower, higher, rows)
        assert rows[higher]["win_rate"] >= rows[lower]["win_rate"] + 0.2
