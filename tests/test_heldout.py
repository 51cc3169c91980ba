"""The held-out mixed table (issue 38, item 4): a table of several bots, seat-rotated, and its part of BASELINES.md."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from parlour.baselines import UnknownPolicyError, resolve
from parlour.baselines.base import MixedTable, RandomPolicy

ENV = "goes_to_eleven_v0"
MEMBERS = ["random", "goes_to_eleven_heuristic", "goes_to_eleven_expert"]


class Named(RandomPolicy):
    """A uniform player under its own name (a bot's spec keeps the bot's name)."""

    def __init__(self, name: str) -> None:
        self.name = name  # type: ignore[misc]


def test_a_mixed_spec_resolves_to_a_table_of_its_members() -> None:
    mixed = resolve("mixed:" + "+".join(MEMBERS), ENV, 4)
    assert isinstance(mixed, MixedTable)
    assert [m.name for m in mixed.members] == MEMBERS
    assert mixed.name == "mixed(random+goes_to_eleven_heuristic+goes_to_eleven_expert)"
    with pytest.raises(TypeError, match="table of players"):
        mixed.act(np.zeros(3), np.ones(3, np.int8), np.random.default_rng(0))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("mixed:random", "two or more policy specs"),
        ("mixed:random+", "two or more policy specs"),
        ("mixed:random+no_such_bot", "no_such_bot"),
        ("mixed:random+six_suspects_heuristic", "not available for goes_to_eleven_v0"),
    ],
)
def test_a_broken_mixed_spec_is_refused_naming_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(UnknownPolicyError, match=message):
        resolve(spec, ENV, 4)


@pytest.mark.parametrize("num_players", [3, 4, 5])
def test_over_a_deal_cycle_every_member_sits_in_every_position_equally_often(num_players: int) -> None:
    from parlour.training.evaluation.matchups import _seat_rotation

    me = Named("me")
    mixed = resolve("mixed:" + "+".join(MEMBERS), ENV, num_players)
    assert isinstance(mixed, MixedTable)
    counts: dict[tuple[int, str], int] = {}
    for d in range(len(MEMBERS)):  # one cycle of the rotation
        for seat, game in enumerate(_seat_rotation(me, mixed, num_players, "v1", list(range(3)), None, False, d)):
            assert game.seats[seat] is me and sum(p is me for p in game.seats) == 1
            for k in range(1, num_players):  # the k-th seat clockwise from the evaluated one
                key = (k - 1, game.seats[(seat + k) % num_players].name)
                counts[key] = counts.get(key, 0) + 1
    # in every position, each member the same number of times (a seat and a deal each)
    for position in range(num_players - 1):
        assert {counts.get((position, m), 0) for m in MEMBERS} == {num_players}


def test_a_mixed_table_cannot_take_one_seat() -> None:
    from parlour.envs import make
    from parlour.training.evaluation.games import play_game

    env = make(ENV, num_players=4)
    mixed = resolve("mixed:random+goes_to_eleven_heuristic", ENV, 4)
    with pytest.raises(ValueError, match="table of several players"):
        play_game(env, [mixed, *[resolve("random", ENV, 4)] * 3], 0, np.random.default_rng(0))


@pytest.mark.parametrize("key", ["opponents", "pretrain.teacher", "eval.reference"])
def test_a_config_refuses_a_mixed_table_where_one_seat_is_filled(key: str) -> None:
    from parlour.training.config import ConfigError, load_config

    value = "[mixed:random+goes_to_eleven_heuristic]" if key != "pretrain.teacher" else "mixed:random+random"
    with pytest.raises(ConfigError, match=f"{key}: .*mixed table"):
        load_config(Path("configs/goes_to_eleven/rl.yaml"), [f"{key}={value}"])


def test_the_games_of_a_mixed_matchup_seat_the_members_the_rotation_says(tmp_path: Path) -> None:
    from parlour.training.evaluation.matchups import play_matchup

    me = Named("me")
    mixed = resolve("mixed:" + "+".join(MEMBERS), ENV, 4)
    assert isinstance(mixed, MixedTable)
    play_matchup(ENV, me, mixed, num_players=4, games=3, records=tmp_path)
    records = sorted(tmp_path.rglob("*.json"))
    assert len(records) == 12
    for path in records:
        d, seat = (int(x) for x in path.stem.removeprefix("deal").split("_seat"))
        players = json.loads(path.read_text())["players"]
        assert players[seat] == "me"
        assert [players[(seat + k) % 4] for k in (1, 2, 3)] == [mixed.seated(k - 1, d).name for k in (1, 2, 3)]


def _fake_heldout() -> dict[str, object]:
    """A stored held-out result in the evaluation's format, made by playing a few deals (two 'seeds' of a family)."""
    from parlour.training.evaluation.matchups import run_evaluation

    mixed = resolve("mixed:" + "+".join(MEMBERS), ENV, 4)
    players = [Named(f"ppo@seed{k}") for k in range(2)]
    bots = [resolve(b, ENV, 4) for b in MEMBERS]
    r = run_evaluation(ENV, [*players, *bots], [mixed], num_players=4, games=4)
    r |= {"scenario_set": "v1", "families": {"rl ppo": ["ppo@seed0", "ppo@seed1"]}, "bots": MEMBERS}
    r["table"] = mixed.name
    return r


def test_the_held_out_section_and_glance_row_read_the_mixed_table_and_its_parity() -> None:
    from parlour.training.publish.document import _glance_mixed
    from parlour.training.publish.heldout import parity, render
    from parlour.training.publish.results import seed_stats

    r = _fake_heldout()
    cells = {m["policy"]: m["win_rate"] for m in r["matchups"]}  # type: ignore[attr-defined]
    assert parity(r) == pytest.approx(np.mean([cells[b] for b in MEMBERS]))
    text = "\n".join(render(r))
    agg = seed_stats(r, ["ppo@seed0", "ppo@seed1"], [r["table"]])["per_table"][r["table"]]  # type: ignore[list-item]
    assert f"| **rl ppo**, mean over 2 seeds | {agg['value']:.3f} " in text
    assert "Parity: the mean of the table's bots' own win rates there" in text and f"{parity(r):.3f}" in text
    row = _glance_mixed(ENV, {"heldout": r}, ["ppo", "selfplay"], lambda a, n: f"{a['value']:.3f}/{n}", ["v1"])[0]
    cells_row = [c.strip() for c in row.strip("|").split("|")]
    assert cells_row[2] == "mixed (held out)"
    assert cells_row[3] == f"{agg['value']:.3f}/2" and cells_row[4] == "not evaluated yet"
    assert cells_row[-1] == f"{parity(r):.3f}"
