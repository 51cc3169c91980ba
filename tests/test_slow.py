"""Longer runs of the same checks (``pytest -m slow``): heavier audits and fuzz of every conformance case, matches."""

from __future__ import annotations

from typing import Any

import pytest

from parlour.envs import ENVIRONMENTS, checks, golden, make
from parlour.envs.core import ParlourEnv
from parlour.training.evaluation.match import run_match

pytestmark = pytest.mark.slow

CASES = [(name, kwargs) for name in ENVIRONMENTS for kwargs in golden.cases(name)]


@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_long_audit_and_fuzz(name: str, kwargs: dict[str, Any]) -> None:
    def factory() -> ParlourEnv[Any]:
        return make(name, **kwargs)

    checks.hidden_information_audit(factory, games=4, every=2, seed=100)
    assert checks.fuzz(factory, games=200, seed=200).games == 200


def test_long_ladder() -> None:
    rows = {
        r["bot"]: r
        for r in run_match(
            "six_suspects_v0",
            ["random", "six_suspects_heuristic", "six_suspects_expert", "six_suspects_oracle"],
            num_players=4,
            games=400,
            seed=7,
        )
    }
    order = ["random", "six_suspects_heuristic", "six_suspects_expert", "six_suspects_oracle"]
    for lower, higher in zip(order, order[1:], strict=False):
        assert rows[higher]["win_ci"][0] > rows[lower]["win_ci"][1], (lower, higher)


def test_goes_to_eleven_ladder_with_search() -> None:
    order = ["random", "goes_to_eleven_heuristic", "goes_to_eleven_expert", "search"]
    rows = {r["bot"]: r for r in run_match("goes_to_eleven_v0", order, num_players=4, games=480, seed=8)}
    for better in ("goes_to_eleven_expert", "search"):
        assert rows[better]["win_ci"][0] > rows["goes_to_eleven_heuristic"]["win_ci"][1], (better, rows)
    assert rows["goes_to_eleven_heuristic"]["win_ci"][0] > rows["random"]["win_ci"][1], rows


def test_lady_alice_ladder_with_search() -> None:
    rows = {
        r["bot"]: r
        for r in run_match(
            "lady_alice_v0", ["random", "lady_alice_heuristic", "search"], num_players=3, games=45, seed=9
        )
    }
    assert rows["search"]["win_ci"][0] > rows["random"]["win_ci"][1], rows
    assert rows["lady_alice_heuristic"]["win_ci"][0] > rows["random"]["win_ci"][1], rows


def test_elevenses_search_beats_random() -> None:
    # Head to head (two seats each): the search bot's margin over random play; the heuristic and expert rungs are
    # in the default tier.
    rows = {r["bot"]: r for r in run_match("elevenses_v0", ["random", "search"], num_players=4, games=40, seed=10)}
    assert rows["search"]["win_ci"][0] > rows["random"]["win_ci"][1], rows
