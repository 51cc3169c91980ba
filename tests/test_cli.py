"""The ``parlour`` command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from parlour.envs import ENVIRONMENTS, game_of
from parlour.envs.declaration import version_of
from parlour.training.cli import main


def test_match_prints_a_results_table(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_json = tmp_path / "rows.json"
    code = main(
        [
            "match",
            "six_suspects_v0",
            "--games",
            "6",
            "--players",
            "3",
            "--no-progress",
            "--json",
            str(out_json),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "| bot | games | win rate (95% CI) |" in out
    for bot in ("random", "six_suspects_heuristic", "six_suspects_expert"):
        assert f"| {bot} |" in out
    assert "oracle" not in out
    rows = json.loads(out_json.read_text())
    assert sum(r["games"] for r in rows) == 6 * 3


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["match", "--bots", "random,genius"],
            "unknown policy 'genius' for six_suspects_v0: expected one of ['random'",
        ),
        (["match", "--players", "9", "--no-progress"], "num_players=9 is out of range"),
    ],
)
def test_match_errors_are_clear(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["match", "chess_v0"],
        ["evaluate", "chess_v0", "--policies", "random"],
        ["benchmark", "chess_v0", "random"],
        ["play", "chess_v0"],
        ["list", "chess_v0"],
        ["baselines", "chess_v0"],
        ["baselines", "--game", "chess_v0"],
        ["bench", "six_suspects_v0", "chess_v0"],
    ],
)
def test_every_command_refuses_an_unknown_env_alike(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert f"unknown environment 'chess_v0'; available: {sorted(ENVIRONMENTS)}" in capsys.readouterr().err


def test_bench_and_baselines_take_env_ids_as_arguments() -> None:
    from parlour.training.cli import _chosen_envs, build_parser

    parse = build_parser().parse_args
    assert _chosen_envs(parse(["bench", "lady_alice_v0", "elevenses_v0"])) == ["lady_alice_v0", "elevenses_v0"]
    assert _chosen_envs(parse(["baselines", "--game", "lady_alice_v0", "--jobs", "1"])) == ["lady_alice_v0"]
    assert _chosen_envs(parse(["baselines"])) is None


def test_bench_prints_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--seconds", "0.05", "--players", "3"]) == 0
    out = capsys.readouterr().out
    assert "| six_suspects_v0 | 3 | env() |" in out and "| six_suspects_v0 | 3 | rules |" in out
    assert "leduc_holdem_v4" in out


def test_bench_observer_sets_the_incremental_observations_beside_writing_each_from_scratch(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import numpy as np

    from parlour.envs import make
    from parlour.training import bench

    assert main(["bench", "--observer", "goes_to_eleven_v0", "lady_alice_v2", "--seconds", "0.06"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| goes_to_eleven_v0 | 4 |")]
    assert len(rows) == 1 and rows[0].endswith("% |") and "| lady_alice_v2 | 4 |" in out
    # the from-scratch env keeps no incremental source: its source stays as the reset wrote it
    env = bench.from_scratch(make("goes_to_eleven_v0"))
    env.reset(seed=1)
    dealt = env.unwrapped.src.vector.copy()
    for _ in range(5):
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    assert np.array_equal(env.unwrapped.src.vector, dealt)
    # ... and its observations are still the shipped env's (else the bench would compare different work)
    assert bench._same_observations("goes_to_eleven_v0", {}) > 0

    def blank(self: Any, seat: int) -> np.ndarray:  # a from-scratch writer that got it wrong
        return np.zeros(self.observation_space(self.possible_agents[seat])["observation"].shape, np.float32)

    monkeypatch.setattr(type(make("goes_to_eleven_v0").unwrapped), "_reference_observation", blank)
    with pytest.raises(RuntimeError, match="goes_to_eleven_v0: the from-scratch observation differs at step 0"):
        bench._same_observations("goes_to_eleven_v0", {})
    assert main(["bench", "--observer", "--jax"]) == 2
    assert "--jax and --observer are different benches: give one of them" in capsys.readouterr().err


def test_version_and_list(capsys: pytest.CaptureFixture[str]) -> None:
    from parlour.envs.core import package_version

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out.strip() == f"parlour {package_version()}"
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in ENVIRONMENTS:
        assert f"{name}  (version {version_of(game_of(name), name).number};" in out
    assert (
        "  bots: random, six_suspects_heuristic, six_suspects_expert, six_suspects_oracle, six_suspects_readout, search"
        in out
    )
    # the shipped policy says what it is made of (it imitates the expert and reads its inference)
    assert (
        "  trained: lady_alice_distilled (4 players; distilled: imitates lady_alice_expert and reads lady_alice_belief, "
        "lady_alice_inquiry; "
    ) in out
    assert main(["list", "lady_alice_v0"]) == 0
    assert "3-5 players, default 4" in capsys.readouterr().out


@pytest.mark.parametrize(
    "command", [["match", "six_suspects_v0"], ["evaluate", "six_suspects_v0", "--policies", "random"]]
)
def test_games_must_be_at_least_one(capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([*command, "--games", "0"])
    assert info.value.code == 2
    assert "argument --games: 0 is out of range: expected an integer >= 1" in capsys.readouterr().err


def test_records_of_match_and_evaluate_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from parlour.envs import replay

    policy = Path(__file__).resolve().parents[1] / "docs" / "archive" / "seeds" / "six_suspects_v0_distilled_seed0.json"
    assert main(["match", "six_suspects_v0", "--bots", f"random,{policy}", "--games", "3", "--no-progress",
                 "--records", str(tmp_path / "m")]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "| six_suspects_v0_distilled_seed0 | 6 |" in out and str(policy) not in out  # labelled by name, not path
    files = sorted((tmp_path / "m").glob("game_*.json"))
    assert [f.name for f in files] == ["game_00000.json", "game_00001.json", "game_00002.json"]
    for f in files:
        record = json.loads(f.read_text())
        replay(record)  # reproduces
        assert sorted(set(record["players"])) == ["random", "six_suspects_v0_distilled_seed0"]
    assert main(["evaluate", "six_suspects_v0", "--policies", str(policy), "--opponents", "random", "--games", "2",
                 "--no-progress", "--records", str(tmp_path / "e")]) == 0  # fmt: skip
    assert "| six_suspects_v0_distilled_seed0 | random |" in capsys.readouterr().out
    seats = sorted((tmp_path / "e" / "six_suspects_v0_distilled_seed0_vs_random").glob("*.json"))
    assert len(seats) == 2 * 4 and seats[0].name == "deal0000_seat0.json"
    first = json.loads(seats[0].read_text())
    replay(first)
    assert first["players"] == ["six_suspects_v0_distilled_seed0", "random", "random", "random"]


def test_bench_says_why_the_leduc_column_is_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from parlour.training.bench import format_bench, run_bench

    monkeypatch.setitem(sys.modules, "pettingzoo.classic", None)  # as if PettingZoo's classic games were absent
    text = format_bench(run_bench(["six_suspects_v0"], None, 0.02))
    assert "leduc_holdem_v4 (PettingZoo) |" not in text
    assert text.splitlines()[-1].startswith("× leduc_holdem_v4: not measured: PettingZoo's classic games are not")
    assert "`pip install 'pettingzoo[classic]'` (or the project's dev extra) adds them" in text


@pytest.mark.parametrize(
    ("config", "features", "says"),
    [
        ({"track": "rl"}, [], "rl: learned from the environment alone"),
        ({"track": "distilled", "pretrain": {"teacher": "x_expert"}}, [], "distilled: imitates x_expert"),
        ({"pretrain": {"teacher": ""}}, ["f"], "distilled: reads f"),  # a file from before tracks were recorded
        ({}, [], "no track recorded"),
    ],
)
def test_a_policy_files_track_is_told_in_words(config: dict, features: list, says: str) -> None:
    from parlour.baselines.policy_file import track_of

    assert track_of({"training": {"config": config}, "network": {"features": features}}) == says
