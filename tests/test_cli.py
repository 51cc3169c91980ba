"""The ``parlour`` command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from parlour.envs import ENVIRONMENTS
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
        (["match", "chess_v0"], f"unknown environment 'chess_v0'; available: {sorted(ENVIRONMENTS)}"),
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


def test_bench_prints_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--seconds", "0.05", "--players", "3"]) == 0
    out = capsys.readouterr().out
    assert "| six_suspects_v0 | 3 | env() |" in out and "| six_suspects_v0 | 3 | rules |" in out
    assert "leduc_holdem_v4" in out
