"""Regeneration is exact (issue 38, item 6): a stored result is a function of the configs, the seeds and the code,
so once its wall-clock measurements are set aside (``TIMING_KEYS``) a regeneration reproduces it exactly. Checked
here on the committed results: every cell against its own per-deal wins (default tier), and a few cells replayed
from fresh play on the scenario's deals (slow tier)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from parlour.training.publish.exploit import TRAINED_LABEL
from parlour.training.publish.results import TIMING_KEYS, without_timings
from parlour.training.scenarios import cell_ci

ROOT = Path(__file__).resolve().parents[1]
RESULTS = sorted((ROOT / "baselines" / "checkpoints").glob("*_results.json"))


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def test_setting_the_timings_aside_keeps_every_result_and_drops_every_measurement() -> None:
    stored = {
        "evaluation_seconds": 12.5,
        "matchups": [{"policy": "a", "win_rate": 0.5, "deal_wins": [1, 3]}],
        "seeds": [{"seed": 0, "train_wall_seconds": 3600.0, "evaluations": [{"timesteps": 0, "time": 1.7e9, "x": 1}]}],
        "targets": [{"train_hours": 0.2, "best": 0.9}],
    }
    again = json.loads(json.dumps(stored))
    again["evaluation_seconds"], again["seeds"][0]["evaluations"][0]["time"] = 99.0, 1.8e9
    assert without_timings(again) == without_timings(stored)
    again["matchups"][0]["deal_wins"] = [2, 2]  # a result, not a measurement: the comparison sees it
    assert without_timings(again) != without_timings(stored)
    flat = json.dumps(without_timings(stored))
    assert not any(f'"{key}"' in flat for key in TIMING_KEYS)


@pytest.mark.parametrize("path", RESULTS, ids=[p.name for p in RESULTS])
def test_every_stored_cell_is_its_own_per_deal_wins(path: Path) -> None:
    """A cell's win rate and interval are what its per-deal wins give: nothing in a cell is stored that its raw data
    does not reproduce."""
    r = load(path)
    matchups = r.get("matchups", [])
    if not matchups:
        pytest.skip(f"{path.name} stores no cells")
    for m in matchups:
        wins = m["deal_wins"]
        assert sum(wins) / m["games"] == pytest.approx(m["win_rate"], abs=1e-12), (m["policy"], m["opponent"])
        assert m["games"] % len(wins) == 0
        assert list(cell_ci(m)) == pytest.approx(m["win_ci"]), (m["policy"], m["opponent"])


#: Fields a cell gained after some results were stored (``mean_decisions``: the rl track's budget in games).
ADDED_SINCE = {"mean_decisions"}
#: Cells replayed from fresh play in the slow tier: (results file, policy, opponent). Scripted bots and a shipped
#: network, at tables that play quickly; each is the scenario's whole deal set, every seat.
REPLAYED = [
    ("six_suspects_v0_results.json", "six_suspects_heuristic", "random"),
    ("goes_to_eleven_v0_rl_results.json", "goes_to_eleven_heuristic", "goes_to_eleven_expert"),
    ("goes_to_eleven_v0_rl_results.json", "ppo@seed0", "goes_to_eleven_heuristic"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("file", "policy", "opponent"), REPLAYED, ids=[f"{p}-vs-{o}" for _, p, o in REPLAYED])
def test_a_stored_cell_is_replayed_exactly_from_fresh_play(file: str, policy: str, opponent: str) -> None:
    from parlour.baselines import make as make_bot
    from parlour.baselines.policy_file import PolicyFile, table_for
    from parlour.training.evaluation.matchups import run_evaluation
    from parlour.training.publish.rl import seed_file
    from parlour.training.scenarios import scenario

    r = load(ROOT / "baselines" / "checkpoints" / file)
    stored = next(m for m in r["matchups"] if m["policy"] == policy and m["opponent"] == opponent)
    sc = scenario(r["env"], r["scenario_set"])
    if "@seed" in policy:
        family, seed = policy.split("@seed")
        table = table_for(r["env"], sc.num_players, sc.options)
        player: Any = PolicyFile(seed_file(r["env"], family, int(seed)), table, label=policy)
    else:
        player = make_bot(policy, r["env"])
    fresh = run_evaluation(
        r["env"],
        [player],
        [make_bot(opponent, r["env"])],
        num_players=sc.num_players,
        games=sc.deals,
        seed_set=sc.deal_set,
        env_kwargs=sc.options,
    )
    (cell,) = fresh["matchups"]
    assert cell["deal_wins"] == stored["deal_wins"] and cell["games"] == stored["games"]
    # every field the stored cell has: rate, intervals, rewards, seats (a cell stored before a field existed lacks it)
    assert set(cell) - set(stored) <= ADDED_SINCE
    assert without_timings({k: cell[k] for k in stored}) == without_timings(stored)


EXPLOIT_RESULTS = sorted((ROOT / "baselines" / "checkpoints").glob("*_exploit_results.json"))


@pytest.mark.parametrize("path", EXPLOIT_RESULTS, ids=[p.name for p in EXPLOIT_RESULTS])
def test_every_stored_bound_is_the_best_response_we_have_on_its_choosing_deals(path: Path) -> None:
    """Issue 38's bound as published: at each target's table the response reported is the best, on the choosing
    deals, of every published policy and bot and of every trained best response; its gain over the target's own
    rate is measured on the other (fresh) deal set and is never negative."""
    targets = [t for t in load(path)["targets"] if "bound" in t]
    if not targets:
        pytest.skip(f"{path.name} stores no bounds")
    for t in targets:
        b = t["bound"]
        assert b["choose_set"] != b["report_set"], t["policy"]  # no winner's curse
        rates = b["chosen_on"]
        trained = {k: v for k, v in rates.items() if k.startswith(TRAINED_LABEL)}
        known = {k: v for k, v in rates.items() if k not in trained}
        assert len(trained) == len(t["seeds"]) and known, t["policy"]
        assert b["known"]["choose_win_rate"] == max(known.values()) == known[b["known"]["policy"]]
        assert b["trained"]["choose_win_rate"] == max(trained.values()) == trained[b["trained"]["policy"]]
        assert b["bound"]["choose_win_rate"] == max(b["known"]["choose_win_rate"], b["trained"]["choose_win_rate"])
        for pick in (b["known"], b["trained"], b["bound"]):
            assert pick["difference"] == pytest.approx(pick["win_rate"] - b["own"]["win_rate"], abs=1e-9)
            assert pick["gain"] == pytest.approx(max(0.0, pick["difference"]), abs=1e-9)
            assert 0.0 <= pick["gain_ci"][0] <= pick["gain"] <= pick["gain_ci"][1], (t["policy"], pick["policy"])
