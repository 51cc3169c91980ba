"""Longer runs of the same checks (``pytest -m slow``): more games, every player count, matches."""

from __future__ import annotations

import pytest

from parlour.baselines.match import run_match
from parlour.envs import checks, elevenses_v0, goes_to_eleven_v0, lady_alice_v0, six_suspects_v0

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("n", range(2, 9))
def test_long_audit(n: int) -> None:
    checks.hidden_information_audit(
        lambda: six_suspects_v0.env(num_players=n, num_games=3), games=4, samples=2, every=2, seed=100 + n
    )


@pytest.mark.parametrize("n", range(2, 9))
def test_long_fuzz(n: int) -> None:
    report = checks.fuzz(lambda: six_suspects_v0.env(num_players=n, num_games=3), games=300, seed=200 + n)
    assert report.games == 300


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


@pytest.mark.parametrize("variant", [{}, {"pick_on_me": True}])
@pytest.mark.parametrize("n", range(2, 7))
def test_goes_to_eleven_long_audit_and_fuzz(n: int, variant: dict[str, bool]) -> None:
    def factory() -> goes_to_eleven_v0.raw_env:
        return goes_to_eleven_v0.env(num_players=n, **variant)

    checks.hidden_information_audit(factory, games=4, every=2, seed=300 + n)
    assert checks.fuzz(factory, games=200, seed=400 + n).games == 200


def test_goes_to_eleven_ladder_with_search() -> None:
    order = ["random", "goes_to_eleven_heuristic", "goes_to_eleven_expert", "search"]
    rows = {r["bot"]: r for r in run_match("goes_to_eleven_v0", order, num_players=4, games=480, seed=8)}
    for better in ("goes_to_eleven_expert", "search"):
        assert rows[better]["win_ci"][0] > rows["goes_to_eleven_heuristic"]["win_ci"][1], (better, rows)
    assert rows["goes_to_eleven_heuristic"]["win_ci"][0] > rows["random"]["win_ci"][1], rows


@pytest.mark.parametrize("variant", [{}, {"no_notes": True}])
@pytest.mark.parametrize("n", [3, 4, 5])
def test_lady_alice_long_audit_and_fuzz(n: int, variant: dict[str, bool]) -> None:
    def factory() -> lady_alice_v0.raw_env:
        return lady_alice_v0.env(num_players=n, **variant)

    checks.hidden_information_audit(factory, games=3, every=3, seed=500 + n)
    assert checks.fuzz(factory, games=150, seed=600 + n).games == 150


def test_lady_alice_ladder_with_search() -> None:
    rows = {
        r["bot"]: r
        for r in run_match(
            "lady_alice_v0", ["random", "lady_alice_heuristic", "search"], num_players=3, games=45, seed=9
        )
    }
    assert rows["search"]["win_ci"][0] > rows["random"]["win_ci"][1], rows
    assert rows["lady_alice_heuristic"]["win_ci"][0] > rows["random"]["win_ci"][1], rows


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_elevenses_long_audit_and_fuzz(n: int) -> None:
    def factory() -> elevenses_v0.raw_env:
        return elevenses_v0.env(num_players=n)

    checks.hidden_information_audit(factory, games=6, every=2, seed=700 + n)
    assert checks.fuzz(factory, games=200, seed=800 + n).games == 200


def test_elevenses_search_beats_random() -> None:
    # Head to head (two seats each): the search bot's margin over random play; the heuristic and expert rungs are
    # in the default tier.
    rows = {r["bot"]: r for r in run_match("elevenses_v0", ["random", "search"], num_players=4, games=40, seed=10)}
    assert rows["search"]["win_ci"][0] > rows["random"]["win_ci"][1], rows
