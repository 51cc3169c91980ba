"""Golden traces (``tests/golden/<env>.json``, made by ``python -m parlour.envs.golden --write tests/golden``): every
env, player count and traced variant plays its fixed-seed game exactly as when the traces were committed."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from parlour.envs import ENVIRONMENTS, golden

FOLDER = Path(__file__).parent / "golden"


def stored(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FOLDER / f"{name}.json").read_text())
    return data


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_env_plays_its_golden_traces(name: str) -> None:
    expected = stored(name)
    assert expected["format"] == golden.FORMAT
    assert [g["kwargs"] for g in expected["games"]] == golden.cases(name), "regenerate: the traced cases changed"
    assert golden.differences(expected, golden.traces(name)) == []


def test_every_player_count_is_traced() -> None:
    from parlour.envs import make

    for name in ENVIRONMENTS:
        env = make(name)
        counts = {g["kwargs"].get("num_players", env.num_players) for g in stored(name)["games"]}
        assert counts == set(range(env.min_players, env.max_players + 1)), name


@pytest.mark.parametrize(
    ("column", "what"),
    [(2, "observations"), (3, "masks"), (4, "state+infos"), (5, "cumulative rewards"), (1, "action")],
)
def test_a_changed_step_is_reported_with_what_changed(column: int, what: str) -> None:
    expected = stored("lady_alice_v0")
    actual = copy.deepcopy(expected)
    actual["games"][1]["steps"][5][column] = "changed"
    (message,) = golden.differences(expected, actual)
    assert "step 5" in message and what in message and "'num_players': 4" in message


def test_a_changed_outcome_or_length_is_reported() -> None:
    expected = stored("goes_to_eleven_v0")
    longer = copy.deepcopy(expected)
    longer["games"][0]["steps"].append(["player_0", 0, "", "", "", 0])
    assert "steps stored" in golden.differences(expected, longer)[0]
    other = copy.deepcopy(expected)
    other["games"][2]["outcome"]["winners"] = [9]
    assert golden.differences(expected, other) == [
        f"goes_to_eleven_v0 {other['games'][2]['kwargs']}: the outcome differs"
    ]


def test_the_command_checks_and_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert golden.main(["--write", str(tmp_path), "six_suspects_v0"]) == 0
    assert json.loads((tmp_path / "six_suspects_v0.json").read_text()) == stored("six_suspects_v0")
    assert golden.main(["--check", str(tmp_path), "six_suspects_v0"]) == 0
    assert golden.main(["--check", str(tmp_path), "lady_alice_v0"]) == 1
    assert "is missing" in capsys.readouterr().out
