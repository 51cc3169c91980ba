"""Scripted opponents: always legal, see only the observation, and ordered in a fixed-seed match."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from parlour.baselines import BOTS, available, make
from parlour.envs import ENVIRONMENTS
from parlour.envs import make as make_env
from parlour.envs.six_suspects import rules
from parlour.training.evaluation.games import deal_seeds, play_game
from parlour.training.evaluation.match import format_table, run_match
from parlour.training.stats import mean_interval, wilson_interval

SIX_BOTS = ["random", "six_suspects_heuristic", "six_suspects_expert", "six_suspects_oracle", "six_suspects_readout"]


def test_registry() -> None:
    assert set(SIX_BOTS) <= set(BOTS)
    assert available("six_suspects_v0")[: len(SIX_BOTS)] == SIX_BOTS
    # the generic search bot and the shipped trained policy
    assert set(available("six_suspects_v0")) <= {*SIX_BOTS, "search", "six_suspects_distilled", "six_suspects_rl"}
    with pytest.raises(ValueError, match=r"unknown bot 'clever'; available: \['random'"):
        make("clever")
    assert make("six_suspects_expert").name == "six_suspects_expert"


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_bots_are_always_legal(n: int) -> None:
    env = make_env("six_suspects_v0", num_players=n, num_games=2, illegal_action="raise")
    bots = [make(SIX_BOTS[s % len(SIX_BOTS)]) for s in range(n)]
    rng = np.random.default_rng(n)
    for g in range(3):
        # play_game raises ValueError (the env's illegal-action error) on any illegal choice
        result = play_game(env, bots, seed=g, rng=rng)
        assert len(result["outcome"]["games"]) >= 2
        # each seat's decisions are its actions in the game's record (what a learner in that seat counts as steps)
        seats = [step["seat"] for step in env.unwrapped.record()["actions"]]
        assert result["decisions"] == [seats.count(s) for s in range(n)]


def test_expert_votes_for_a_known_culprit_and_announces_when_sure() -> None:
    env = make_env("six_suspects_v0", num_players=2, table_announcement_turns=13)
    env.reset(seed=2)
    for p in range(12):  # player_0 looks at every card; player_1 keeps peeking at Albert's top card
        env.step(p)
        env.step(0)
    game = env.unwrapped.game
    culprits = rules.resolve(game.layout).culprits
    bot = make("six_suspects_expert")
    obs = env.observe("player_0")
    assert obs["action_mask"][rules.ANNOUNCE] == 1
    assert bot.act(obs["observation"], obs["action_mask"], np.random.default_rng(0)) == rules.ANNOUNCE
    vote_mask = np.zeros(rules.NUM_ACTIONS, np.int8)
    vote_mask[rules.VOTE_BASE :] = 1
    for s in range(5):
        vote = bot.act(obs["observation"], vote_mask, np.random.default_rng(s))
        assert vote - rules.VOTE_BASE in culprits


def test_expert_world_enumeration_is_exact_when_small() -> None:
    bot = make("six_suspects_expert")
    known = {p: c for p, c in zip(range(6), [0, 1, 2, 3, 4, 5], strict=False)}
    layouts, culprits = bot.worlds(known, np.random.default_rng(0))  # type: ignore[attr-defined]
    assert len(layouts) == 720 and len({tuple(x) for x in layouts}) == 720
    assert (layouts[:, :6] == np.arange(6)).all()


def test_oracle_needs_the_env() -> None:
    with pytest.raises(TypeError, match="act_with_env"):
        make("six_suspects_oracle").act(np.zeros(3), np.ones(19, np.int8), np.random.default_rng(0))


def test_ladder_is_ordered_in_a_fixed_seed_match() -> None:
    rows = run_match(
        "six_suspects_v0",
        ["random", "six_suspects_heuristic", "six_suspects_expert"],
        num_players=3,
        games=150,
        seed=11,
    )
    rate = {r["bot"]: r for r in rows}
    for lower, higher in (
        ("random", "six_suspects_heuristic"),
        ("six_suspects_heuristic", "six_suspects_expert"),
    ):
        # clear margins: the better bot's interval lies wholly above the other's mean, and by at least 0.1
        assert rate[higher]["win_rate"] >= rate[lower]["win_rate"] + 0.1, (lower, higher, rows)
        assert rate[higher]["win_ci"][0] > rate[lower]["win_rate"], (lower, higher, rows)
    assert all(r["games"] == 150 for r in rows)


def test_match_is_deterministic() -> None:
    def run() -> Any:
        return run_match("six_suspects_v0", ["random", "six_suspects_expert"], num_players=2, games=20, seed=4)

    assert run() == run()
    assert deal_seeds(4, 3) == deal_seeds(4, 3) and deal_seeds(4, 3) != deal_seeds(5, 3)


CI_CASES = [
    # (successes, trials, expected Wilson interval to 4 places) -- standard textbook values
    (0, 10, (0.0, 0.2775)),
    (10, 10, (0.7225, 1.0)),
    (5, 10, (0.2366, 0.7634)),
    (81, 263, (0.2553, 0.3662)),
]


@pytest.mark.parametrize(("k", "n", "expected"), CI_CASES)
def test_wilson_interval_known_cases(k: int, n: int, expected: tuple[float, float]) -> None:
    lo, hi = wilson_interval(k, n)
    assert (round(lo, 4), round(hi, 4)) == expected


def test_mean_interval_known_case() -> None:
    m, lo, hi = mean_interval([1.0, -1.0, 1.0, -1.0])
    # mean 0, sample sd 2/sqrt(3), half-width 1.96 * sd / 2
    assert m == 0.0 and hi == pytest.approx(1.959963984540054 * (2 / np.sqrt(3)) / 2) and lo == -hi
    assert mean_interval([]) == (0.0, 0.0, 0.0) and mean_interval([0.5]) == (0.5, 0.5, 0.5)


def test_format_table_has_every_bot() -> None:
    rows = run_match("six_suspects_v0", ["random"], num_players=2, games=4, seed=0)
    table = format_table(rows)
    assert "| random | 8 |" in table


@pytest.mark.parametrize(
    "bot",
    [
        "six_suspects_expert",
        "goes_to_eleven_expert",
        pytest.param("lady_alice_expert", marks=pytest.mark.slow),
        pytest.param("elevenses_expert", marks=pytest.mark.slow),
    ],
)
def test_a_bots_games_do_not_depend_on_what_it_played_before(bot: str) -> None:
    # Evaluations compose matchups in any order (a benchmark seats a bot alone, BASELINES beside others): a bot's
    # results on a deal must not depend on the games the same instance played earlier.
    from parlour.training.evaluation.matchups import play_matchup

    env_name = next(
        e for e in ("six_suspects_v0", "goes_to_eleven_v0", "lady_alice_v0", "elevenses_v0") if bot.startswith(e[:-3])
    )
    fresh = play_matchup(env_name, make(bot), make(bot), num_players=4, games=10)
    played, opponent = make(bot), make(bot)
    # the opponent instance first sits at the same deals beside other policies, as it does in BASELINES
    for other in ("random", bot.replace("expert", "heuristic"), bot):
        play_matchup(env_name, make(other), opponent, num_players=4, games=10)
    again = play_matchup(env_name, played, opponent, num_players=4, games=10)
    assert (again.wins, again.rewards) == (fresh.wins, fresh.rewards)


def test_shipped_policies_are_found_from_the_files_present(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import parlour.baselines as B

    monkeypatch.setitem(B.ENVIRONMENTS, "lady_alice_v1", "parlour.envs.lady_alice_v0")
    for stem in (
        "lady_alice_v0_distilled",
        "lady_alice_v1_distilled",
        "lady_alice_v1_rl",
        "lady_alice_v1_distilled_seed2",  # a seed's file, not a shipped name
        "lady_alice_v1_ppo",  # the old suffix is no longer a file name
        "elevenses_v0_rl",
        "chess_v0_rl",  # no such game
    ):
        (tmp_path / f"{stem}.json").write_text("{}")
    found = {name: env for name, (env, _) in B._shipped(tmp_path).items()}
    assert found == {
        "lady_alice_distilled": "lady_alice_v1",  # the newest version takes the game's name
        "lady_alice_v0_distilled": "lady_alice_v0",
        "lady_alice_rl": "lady_alice_v1",
        "elevenses_rl": "elevenses_v0",
    }
    assert B._shipped(tmp_path)["lady_alice_rl"][1] == tmp_path / "lady_alice_v1_rl.json"


def test_an_old_shipped_name_plays_the_renamed_policy_with_a_one_line_notice(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import parlour.baselines as B

    assert B.ALIASES["six_suspects_ppo"] == "six_suspects_distilled"
    monkeypatch.setattr(B, "_NOTICED", set())
    first = B.resolve("six_suspects_ppo", "six_suspects_v0")
    B.resolve("six_suspects_ppo", "six_suspects_v0")
    notice = capsys.readouterr().err.strip().splitlines()
    assert first.name == "six_suspects_distilled"  # tables say the new name
    assert notice == [notice[0]] and "'six_suspects_ppo' is now 'six_suspects_distilled'" in notice[0]
    assert "six_suspects_ppo" not in B.available("six_suspects_v0")  # old names are accepted, not listed


def test_every_game_declares_its_bots_beside_them() -> None:
    """One typed declaration per game, read from one registry: its bots, playouts, features and scenarios."""
    import importlib

    import parlour.baselines as B
    from parlour.baselines import search
    from parlour.baselines.spec import GameSpec
    from parlour.training.scenarios import SCENARIO_SETS

    assert set(B.GAME_SPECS) == {B.game_name(e) for e in ENVIRONMENTS}
    for name, spec in B.GAME_SPECS.items():
        assert isinstance(spec, GameSpec) and importlib.import_module(f"parlour.baselines.{name}").SPEC is spec
        assert set(spec.env_ids) <= set(ENVIRONMENTS)
        for cls in spec.bots:
            assert B.BOTS[cls.name] is cls and set(cls.games) == set(spec.env_ids)
        for env_name in spec.env_ids:
            assert B.game_spec(env_name) is spec
            policy, horizon = search.informed_playouts(env_name)
            assert policy is (spec.rollout_policy or search.random_rollout) and horizon is spec.rollout_horizon
            for version, table in spec.benchmark.items():
                assert SCENARIO_SETS[version][env_name].opponents == table.opponents
        for features in spec.features:
            assert set(features.games) == set(spec.env_ids)
    with pytest.raises(AttributeError):
        B.GAME_SPECS["six_suspects"].bots = ()  # type: ignore[misc]  # frozen


def test_an_analysis_registered_for_a_game_is_a_module_with_a_table_and_its_format() -> None:
    from parlour.envs import GAMES
    from parlour.training.analyses import ANALYSES, analysis, offering

    assert set(ANALYSES) <= set(GAMES)  # keyed by the games' declarations
    assert ANALYSES == {"lady_alice": {"accusations": "parlour.training.analyses.lady_alice_accusations"}}
    assert offering("accusations") == ["lady_alice_v0", "lady_alice_v1", "lady_alice_v2"]
    module = analysis("lady_alice_v1", "accusations")
    assert callable(module.table) and callable(module.format_table)
    with pytest.raises(ValueError, match=r"six_suspects_v0 has no accusations analysis: expected one of \['lady_alice"):
        analysis("six_suspects_v0", "accusations")


@pytest.mark.parametrize(
    ("name", "parsed"),
    [
        ("six_suspects_v0_results.json", ("six_suspects_v0", "distilled")),
        ("six_suspects_v0_rl_results.json", ("six_suspects_v0", "rl")),
        ("lady_alice_v12_ablation_results.json", ("lady_alice_v12", "ablation")),
        ("elevenses_v0_exploit_results.json", ("elevenses_v0", "exploit")),
        ("elevenses_v0_heldout_results.json", ("elevenses_v0", "heldout")),
        ("goes_to_eleven_v0_sweep_results.json", ("goes_to_eleven_v0", "sweep")),
        ("goes_to_eleven_v0_other_results.json", None),  # no track stores that
        ("goes_to_eleven_results.json", None),  # no version
        ("_v0_results.json", None),  # no game
        ("six_suspects_v0_results.txt", None),
    ],
)
def test_a_stored_results_file_name_says_its_env_and_track(name: str, parsed: tuple[str, str] | None) -> None:
    from parlour.baselines.tracks import TRACKS, parse_results_name

    assert parse_results_name(name) == parsed
    if parsed is not None:
        assert TRACKS[parsed[1]].results_name(parsed[0]) == name


@pytest.mark.parametrize(
    ("name", "parsed"),
    [
        ("six_suspects_v0_rl.json", ("six_suspects_v0", "rl")),
        ("lady_alice_v2_distilled.json", ("lady_alice_v2", "distilled")),
        ("lady_alice_v2_distilled_seed3.json", None),  # a seed's file, not a shipped policy
        ("lady_alice_v2_sweep.json", None),  # a track that ships nothing
        ("lady_alice_v2_rl_results.json", None),
    ],
)
def test_a_shipped_policy_file_name_says_its_env_and_track(name: str, parsed: tuple[str, str] | None) -> None:
    from parlour.baselines.tracks import parse_shipped_name

    assert parse_shipped_name(name) == parsed
