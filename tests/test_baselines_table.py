"""``parlour baselines`` and ``parlour benchmark``: several seeds trained in parallel, aggregated, published; any
policy benchmarked on the same scenario as the published rows."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("sb3_contrib")

from parlour.baselines.policy_file import read_spec  # noqa: E402
from parlour.training import scenarios  # noqa: E402
from parlour.training.cli import main  # noqa: E402
from parlour.training.config import load_config, to_yaml  # noqa: E402
from parlour.training.publish import tracks  # noqa: E402
from parlour.training.publish.reuse import is_current  # noqa: E402
from parlour.training.publish.schema import seed_path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def tiny_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_run: tuple[str, ...]) -> Path:
    """A project root with one tiny training config, a two-seed spec and a two-deal scenario set."""
    _tiny_game(tmp_path, monkeypatch, tiny_run, "six_suspects", "six_suspects_v0", "seeds: [0, 1]\nshipped_seed: 1\n"
               "skip_bots: [search, six_suspects_expert, six_suspects_oracle]\n")  # fmt: skip
    return tmp_path


def _tiny_game(
    root: Path, monkeypatch: pytest.MonkeyPatch, tiny_run: tuple[str, ...], game: str, env: str, spec: str
) -> None:
    """``configs/<game>/`` under ``root``: the game's quick config made tiny, a baselines spec (``spec`` adds its
    keys) and a two-deal scenario of random and heuristic tables in the scenario set ``test``."""
    base = (
        ROOT / "tests" / "data" / "six_suspects_base.yaml"
        if game == "six_suspects"
        else ROOT / "configs" / game / "quick.yaml"
    )
    cfg = load_config(base, [f"game.name={env}", *tiny_run, "eval.opponents=[random]", "opponents=[random]"])
    folder = root / "configs" / game
    folder.mkdir(parents=True)
    (folder / "tiny.yaml").write_text(to_yaml(cfg))
    (folder / "baselines.yaml").write_text(f"env: {env}\nconfig: configs/{game}/tiny.yaml\nscenarios: test\n{spec}")
    sc = scenarios.Scenario(env, 4, ("random", f"{game}_heuristic"), deals=2)
    monkeypatch.setitem(scenarios.SCENARIO_SETS, "test", {env: sc})


def test_seeds_are_trained_in_parallel_aggregated_and_published(
    tiny_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, figures = tiny_project / "checkpoints", tiny_project / "figures"
    kwargs = {"progress": False, "jobs": 2, "root": tiny_project, "folder": folder, "figures": figures}
    tracks.regenerate("distilled", None, train_models=True, **kwargs)  # type: ignore[arg-type]
    assert "training seeds [0, 1] (2 at a time)" in capsys.readouterr().out
    for k in (0, 1):
        spec = read_spec(seed_path("six_suspects_v0", k, folder))
        assert spec["training"]["seed"] == k and spec["training"]["evaluations"]
    shipped = read_spec(folder / "six_suspects_v0_distilled.json")
    # the shipped policy holds together without the seeds' files: its own copy of the shipped seed's weights
    assert (
        shipped["training"]["shipped_seed"] == 1
        and shipped["weights"]["file"] == "six_suspects_v0_distilled.safetensors"
    )
    assert (folder / "six_suspects_v0_distilled.safetensors").read_bytes() == (
        folder / "six_suspects_v0_distilled_seed1.safetensors"
    ).read_bytes()
    results = json.loads((folder / "six_suspects_v0_results.json").read_text())
    assert [s["seed"] for s in results["seeds"]] == [0, 1] and results["scenario_set"] == "test"
    agg = results["seed_aggregate"]
    assert set(agg["per_table"]) == {"random", "six_suspects_heuristic"} and agg["seeds"] == 2
    # the stored aggregate is the one the rendering derives from the matchups (seed_stats)
    rates = [[m["win_rate"] for m in results["matchups"] if m["policy"] == s["label"] and m["opponent"] == "random"]
             for s in results["seeds"]]  # fmt: skip
    assert agg["per_table"]["random"]["value"] == pytest.approx(np.mean(rates))
    assert (figures / "six_suspects_v0_learning_curves.png").stat().st_size > 0
    text = (tiny_project / "BASELINES.md").read_text()
    assert "**six_suspects_distilled**, mean over 2 seeds |" in text and "IQM over 2" not in text
    assert "six_suspects_distilled seed 1 (shipped)" in text
    assert "| six_suspects_heuristic |" in text and "Wilson intervals at the effective number of games" in text

    # Seeds already trained from this config are kept; evaluation gives the same table.
    tracks.regenerate("distilled", None, train_models=True, **kwargs)  # type: ignore[arg-type]
    assert "nothing to train" in capsys.readouterr().out
    again = json.loads((folder / "six_suspects_v0_results.json").read_text())
    for key in ("matchups", "seed_aggregate", "ratings"):
        assert again[key] == results[key]
    # A change that alters the trained weights makes a seed stale; one that only changes evaluation does not.
    config = tiny_project / "configs" / "six_suspects" / "tiny.yaml"
    assert is_current(seed_path("six_suspects_v0", 0, folder), load_config(config, ["eval.games=7"]))
    assert not is_current(seed_path("six_suspects_v0", 0, folder), load_config(config, ["ppo.n_epochs=2"]))


def test_a_spec_with_an_unlisted_shipped_seed_is_refused(tiny_project: Path) -> None:
    spec = tiny_project / "configs" / "six_suspects" / "baselines.yaml"
    spec.write_text(spec.read_text().replace("shipped_seed: 1", "shipped_seed: 5"))
    with pytest.raises(ValueError, match=r"shipped_seed=5 is not one of seeds=\[0, 1\]"):
        tracks.regenerate(
            "distilled", None, train_models=False, progress=False, root=tiny_project, folder=tiny_project / "c"
        )


def test_benchmark_reproduces_a_bots_published_row(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    results = json.loads((ROOT / "baselines" / "checkpoints" / "goes_to_eleven_v0_results.json").read_text())
    published = scenarios.rows(results, ["random"])[0]
    assert main(["benchmark", "goes_to_eleven_v0", "random", "--no-progress", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    mine = out.split("Published")[0]
    assert published in mine.splitlines()  # the same row, to the digit, as BASELINES.md's
    assert published in (ROOT / "BASELINES.md").read_text()
    saved = json.loads((tmp_path / "benchmark.json").read_text())
    assert saved["scenario_set"] == "v1"

    # another scenario set is not compared
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**saved, "scenario_set": "v0"}))
    code = main(["benchmark", "goes_to_eleven_v0", "random", "--compare", str(other), "--no-progress"])
    assert code == 2
    assert "results are comparable only on the same set" in capsys.readouterr().err
    assert main(["benchmark", "goes_to_eleven_v0", "random", "--scenarios", "v9"]) == 2
    assert "unknown scenario set 'v9'; available: ['v1', 'v2']" in capsys.readouterr().err
    assert main(["benchmark", "goes_to_eleven_v0", "random", "--scenarios", "v2"]) == 2  # a set without the game
    assert "scenario set v2 has no goes_to_eleven_v0; it has ['elevenses_v0']" in capsys.readouterr().err


@pytest.mark.parametrize("game", ["six_suspects", "goes_to_eleven", "lady_alice", "elevenses"])
def test_each_game_publishes_its_newest_scenario_set(game: str) -> None:
    """BASELINES.md, `parlour benchmark`'s default and the stored results all use the game's newest set."""
    spec = yaml.safe_load((ROOT / "configs" / game / "baselines.yaml").read_text())
    assert spec["scenarios"] == scenarios.current(spec["env"])
    results = json.loads((ROOT / "baselines" / "checkpoints" / f"{spec['env']}_results.json").read_text())
    assert results["scenario_set"] == spec["scenarios"]
    assert scenarios.scenario(spec["env"]) == scenarios.scenario(spec["env"], spec["scenarios"])


def test_elevenses_v2_is_its_v1_scenario_on_more_deals() -> None:
    v1, v2 = scenarios.scenario("elevenses_v0", "v1"), scenarios.scenario("elevenses_v0", "v2")
    assert (v2.num_players, v2.opponents, v2.deal_set, v2.options) == (
        v1.num_players,
        v1.opponents,
        v1.deal_set,
        v1.options,
    )
    assert (v1.deals, v2.deals) == (50, 200)
    assert scenarios.current("elevenses_v0") == "v2" and scenarios.current("six_suspects_v0") == "v1"


def test_every_committed_seed_is_current_for_its_spec_even_with_keys_added_to_the_schema_since() -> None:
    # Their stored configs predate keys such as `trainer` and `rllib`: a key a file lacks counts as its default, so
    # `parlour baselines` keeps them instead of retraining hours of seeds; a real change still makes them stale.
    from parlour.training.cli.baselines import published_folders
    from parlour.training.publish.schema import specs

    root = Path(__file__).resolve().parents[1]
    folder, _ = published_folders(root)  # the repository's: the wheel does not carry every seed
    checked = 0
    for env_name, (_, spec) in specs(root).items():
        for k in spec.seeds:
            path = seed_path(env_name, k, folder)
            if path.is_file():
                cfg = load_config(root / spec.config, [f"seed={k}"])
                assert is_current(path, cfg), (env_name, k)
                changed = [f"seed={k}", f"ppo.n_epochs={cfg.ppo.n_epochs + 1}"]  # a change to the trained weights
                assert not is_current(path, load_config(root / spec.config, changed))
                checked += 1
    assert checked >= 4


def _results(deal_wins: dict[tuple[str, str], list[int]], rates: dict[tuple[str, str], tuple[float, float]]) -> dict:
    """A stored results dict with the fields the goal check reads (4 players, so a deal's wins are 0-4)."""
    matchups = [
        {
            "policy": p,
            "opponent": o,
            "deal_wins": w,
            "games": 4 * len(w),
            "win_rate": sum(w) / (4 * len(w)),
            "win_ci": list(rates[(p, o)]),
        }  # fmt: skip
        for (p, o), w in deal_wins.items()
    ]
    opponents = list(dict.fromkeys(o for _, o in deal_wins))
    policies = list(dict.fromkeys(p for p, _ in deal_wins))
    return {
        "num_players": 4,
        "matchups": matchups,
        "policies": [p for p in policies if "@" not in p],
        "seeds": [{"label": p} for p in policies if "@" in p],
        "seed_aggregate": {"per_table": {o: {} for o in opponents}},
    }


@pytest.mark.parametrize(
    ("seed_wins", "apart", "gap"),
    [
        # the seeds win 3 of 4 games of every deal; the heuristic 1, the expert 3: the whole gap closed, apart
        ([3] * 20, True, 1.0),
        # the seeds level with the heuristic: nothing closed, not apart
        ([1] * 20, False, 0.0),
        # halfway, alternate deals 1 and 3 wins: half the gap
        ([1, 3] * 10, True, 0.5),
    ],
)
def test_goal_check_pools_seeds_per_deal_and_measures_the_gap(seed_wins: list[int], apart: bool, gap: float) -> None:
    from parlour.training.publish.distilled import goal_comparison
    from parlour.training.publish.distilled import render_goal as _render_goal

    heuristic, expert = [1] * 20, [3] * 20
    wins = {("g_ppo@seed0", "g_heuristic"): seed_wins, ("g_ppo@seed1", "g_heuristic"): seed_wins}
    wins |= {("g_heuristic", "g_heuristic"): heuristic, ("g_expert", "g_heuristic"): expert}
    rates = {k: (sum(w) / 80 - 0.1, sum(w) / 80 + 0.1) for k, w in wins.items()}
    goal = goal_comparison(_results(wins, rates))
    assert goal is not None and goal["seeds"] == 2
    table = goal["tables"]["g_heuristic"]
    assert table["seeds_win_rate"] == pytest.approx(sum(seed_wins) / 80)
    assert table["gap_closed"] == pytest.approx(gap)
    assert table["difference"] == pytest.approx(sum(seed_wins) / 80 - 0.25)
    assert table["apart"] is apart
    assert table["seeds_ci"][0] <= table["seeds_win_rate"] <= table["seeds_ci"][1]
    text = "\n".join(_render_goal(_results(wins, rates)))
    assert ("✓" in text) is (gap >= 0.5)


def test_goal_check_names_a_table_the_heuristic_cannot_be_beaten_at() -> None:
    from parlour.training.publish.distilled import render_goal as _render_goal

    wins = {("g_ppo@seed0", "random"): [4] * 10, ("g_heuristic", "random"): [4] * 10, ("g_expert", "random"): [4] * 10}
    text = "\n".join(_render_goal(_results(wins, dict.fromkeys(wins, (0.7, 1.0)))))
    assert "At the random table g_heuristic already wins every game" in text


def test_accusations_are_reported_for_lady_alice_and_refused_elsewhere(
    tiny_project: Path, monkeypatch: pytest.MonkeyPatch, tiny_run: tuple[str, ...]
) -> None:
    from parlour.training.config import ConfigError

    spec = tiny_project / "configs" / "six_suspects" / "baselines.yaml"
    spec.write_text(spec.read_text() + "accusations: true\n")
    with pytest.raises(
        ConfigError,
        match=r"accusations: true is for the games that offer the analysis \(\['lady_alice_v0', 'lady_alice_v1', 'lady_alice_v2'\]",
    ):
        tracks.regenerate(
            "distilled", None, train_models=False, progress=False, root=tiny_project, folder=tiny_project / "c"
        )
    spec.unlink()

    _tiny_game(tiny_project, monkeypatch, tiny_run, "lady_alice", "lady_alice_v1", "seeds: [0]\nshipped_seed: 0\n"
               "skip_bots: [search]\naccusations: true\n")  # fmt: skip
    out = tiny_project / "c"
    tracks.regenerate(
        "distilled", None, train_models=True, progress=False, jobs=1, root=tiny_project, folder=out, figures=out
    )
    rows = json.loads((out / "lady_alice_v1_results.json").read_text())["accusations"]
    # every seed and the two reference bots, at each table (the seed is labelled by its shipped name, if any)
    seed = next(r["policy"] for r in rows if r["policy"].endswith("@seed0"))
    assert {(r["policy"], r["opponent"]) for r in rows} == {
        (p, o) for p in (seed, "lady_alice_heuristic", "lady_alice_expert") for o in ("random", "lady_alice_heuristic")
    }
    expert = [r for r in rows if r["policy"] == "lady_alice_expert"]
    assert all(r["accusations"] > 0 and r["right"] == 1.0 and r["unsure"] == 0.0 for r in expert)  # sure, so right
    text = (tiny_project / "BASELINES.md").read_text()
    assert "**Accusations**" in text and "| lady_alice_expert | random | 8 |" in text


def test_a_plain_function_in_a_file_anywhere_benchmarks_as_a_labelled_partial_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's "Benchmark your agent": five lines in a file outside the repository, from another folder."""
    (tmp_path / "my_agent.py").write_text(
        "import numpy as np\n\n\ndef act(observation, action_mask, rng):\n"
        "    return int(rng.choice(np.flatnonzero(action_mask)))\n"
    )
    monkeypatch.chdir(tmp_path)
    argv = ["benchmark", "six_suspects_v0", "./my_agent.py:act", "--deals", "5", "--no-progress", "--out", "bm"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "PARTIAL RUN: the first 5 of the scenario's 200 deals (--deals)" in out
    saved = json.loads((tmp_path / "bm" / "benchmark.json").read_text())
    assert saved["scenario"]["deals"] == 5 and saved["scenario"]["partial"] is True
    assert saved["scenario_set"] == "v1" and saved["env_version"] == 0 and saved["package_version"]
    source = saved["provenance"]["my_agent.py:act"]
    assert source["sha256"] == hashlib.sha256((tmp_path / "my_agent.py").read_bytes()).hexdigest()
    assert all(len(m["deal_wins"]) == 5 for m in saved["matchups"])
    # It plays as the random bot does (the same seeded draws), so its paired difference from the published random
    # row, on the same five deals, is exactly zero at every table.
    row = next(x for x in out.splitlines() if x.startswith("| my_agent.py:act − random |"))
    assert row == "| my_agent.py:act − random | " + " | ".join(["+0.000"] * 3) + " |"
    # Five deals are too few for an interval that holds its coverage: none is printed, and the run says why (before,
    # a +0.200 (+0.050–+0.400) "difference" over six_suspects_rl excluded zero on these five deals).
    assert "No intervals: 5 deals are too few for a deal-clustered interval to hold its 95% coverage" in out
    ours = next(x for x in out.splitlines() if x.startswith("| my_agent.py:act |"))
    paired = [x for x in out.splitlines() if x.startswith("| my_agent.py:act − ")]
    cells = [c for x in [ours, *paired] for c in x.strip("|").split("|")[1:]]  # past each row's label
    assert paired and cells and not any("(" in c for c in cells)
    assert main(["benchmark", "six_suspects_v0", "random", "--deals", "201"]) == 2
    assert "--deals 201 is out of range: the scenario has 200 deals (1..200)" in capsys.readouterr().err


def test_the_clone_row_is_the_shipped_seeds_network_before_ppo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tiny_run: tuple[str, ...]
) -> None:
    """With a teacher, the spec's shipped seed is also cloned alone: the same network its PPO started from, a row of
    its own in the table."""
    from parlour.baselines.policy_file import read_weights

    _tiny_game(tmp_path, monkeypatch, tiny_run, "six_suspects", "six_suspects_v0", "seeds: [1]\nshipped_seed: 1\n"
               "skip_bots: [search, six_suspects_expert, six_suspects_oracle, six_suspects_readout]\n")  # fmt: skip
    config = tmp_path / "configs" / "six_suspects" / "tiny.yaml"
    cfg = load_config(config, ["pretrain.teacher=six_suspects_heuristic", "pretrain.games=3", "pretrain.epochs=1"])
    config.write_text(to_yaml(cfg))
    folder = tmp_path / "checkpoints"
    tracks.regenerate(
        "distilled",
        None,
        train_models=True,
        progress=False,
        jobs=1,
        root=tmp_path,
        folder=folder,
        figures=tmp_path / "f",
    )
    assert "behaviour cloning alone for seed 1 (the clone row)" in capsys.readouterr().out
    clone = folder / "six_suspects_v0_distilled_clone.json"
    started_from = tmp_path / "runs" / "baselines" / "six_suspects_v0" / "seed1" / "clone.json"
    mine, theirs = read_weights(clone, read_spec(clone)), read_weights(started_from, read_spec(started_from))
    assert mine.keys() == theirs.keys() and all((mine[k] == theirs[k]).all() for k in mine)
    assert read_spec(clone)["training"]["timesteps"] == 0 and read_spec(clone)["training"]["pretrain"]["games"] == 3
    text = (tmp_path / "BASELINES.md").read_text()
    assert "| six_suspects_distilled clone (seed 1, before PPO) |" in text
    assert "**Teacher** `six_suspects_heuristic`" in text and "its inputs are the observation alone" in text
    # a clone already current is kept
    tracks.regenerate(
        "distilled",
        None,
        train_models=True,
        progress=False,
        jobs=1,
        root=tmp_path,
        folder=folder,
        figures=tmp_path / "f",
    )
    assert "behaviour cloning alone" not in capsys.readouterr().out


@pytest.mark.parametrize(("n", "rows"), [(1, []), (3, ["| **p**, mean over 3 seeds | 0.500 (0.400–0.600) |"])])
def test_the_seed_aggregate_row_is_the_mean_over_seeds_with_its_interval(n: int, rows: list[str]) -> None:
    from parlour.training.publish.results import aggregate_rows

    stats = {"seeds": n, "per_table": {"t": {"value": 0.5, "ci": [0.4, 0.6]}}}
    assert aggregate_rows("p", stats, ["t"]) == rows


@pytest.mark.parametrize(
    ("seconds", "printed"),
    [(None, "?"), (0.4, "0 s"), (25.0, "25 s"), (59.4, "59 s"), (59.6, "1 min"), (90.0, "2 min"), (725.0, "12 min")],
)
def test_wall_times_print_seconds_under_a_minute_never_zero_minutes(seconds: float | None, printed: str) -> None:
    from parlour.training.publish.results import minutes

    assert minutes(seconds) == printed


def test_the_at_a_glance_table_headlines_the_held_out_table_and_reads_each_against_its_parity() -> None:
    from parlour.training.publish.document import at_a_glance
    from parlour.training.publish.results import stored_results as _results

    CHECKPOINTS = ROOT / "baselines" / "checkpoints"  # the clone's, as `parlour baselines` reads them

    results = {k: v for k, v in _results(CHECKPOINTS).items() if k == "six_suspects_v0"}
    rl = results["six_suspects_v0"]["rl"]
    distilled = results["six_suspects_v0"]["distilled"]
    rows = [line for line in at_a_glance(results) if line.startswith("| six_suspects_v0 |")]
    # the held-out tables come first: the mixed table (where its results are stored; tests/test_heldout.py reads it)
    # and the expert's, which neither rl family trained at; then the heuristic's, a training table
    if "heldout" in results["six_suspects_v0"]:
        assert rows.pop(0).split("|")[3].strip() == "mixed (held out)"
    assert [r.split("|")[3].strip() for r in rows] == [
        "expert's (held out from the rl track)",
        "heuristic's (training)",
    ]
    rates = {(m["policy"], m["opponent"]): m["win_rate"] for m in rl["matchups"]}

    def mean_t(x: list[float]) -> str:  # the mean over seeds and its Student-t 95% interval, within [0, 1]
        from scipy.stats import t

        half = t.ppf(0.975, len(x) - 1) * np.std(x, ddof=1) / np.sqrt(len(x))
        m = float(np.mean(x))
        return f"{m:.3f} ({max(0.0, m - half):.3f}–{min(1.0, m + half):.3f}), {len(x)} seeds"

    d_rates = {(m["policy"], m["opponent"]): m["win_rate"] for m in distilled["matchups"]}
    for row, table in zip(rows, ("six_suspects_expert", "six_suspects_heuristic"), strict=True):
        cells = [c.strip() for c in row.strip("|").split("|")]
        for i, family in enumerate(rl["families"]):
            x = [rates[(label, table)] for label in rl["families"][family]["labels"]]
            assert len(x) == 5 and cells[3 + i] == mean_t(x)
        assert cells[-4] == mean_t([d_rates[(s["label"], table)] for s in distilled["seeds"]])
        assert cells[-3].startswith(f"{rates[('six_suspects_heuristic', table)]:.3f}")
        assert cells[-2].startswith(f"{rates[('six_suspects_expert', table)]:.3f}")
        # parity: a copy of the table's own bot at its table (not chance: 6 Suspects shares its wins)
        assert cells[-1] == f"{rates[(table, table)]:.3f}" != "0.250"
    # a game whose rl track is not stored yet says so rather than leaving a number out silently
    only_distilled = {
        "six_suspects_v0": {"distilled": distilled},
        "goes_to_eleven_v0": _results(CHECKPOINTS)["goes_to_eleven_v0"],
    }
    row = next(line for line in at_a_glance(only_distilled) if line.startswith("| six_suspects_v0 |"))
    columns = only_distilled["goes_to_eleven_v0"]["rl"]["families"]  # one column per family any game stores
    assert len(columns) >= 2 and row.count("not trained yet") == len(columns)


def test_baselines_md_is_what_the_stored_results_render(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every figure in BASELINES.md comes from the committed results (`parlour baselines --render-only`)."""
    from parlour.training.publish.tracks import render

    monkeypatch.chdir(ROOT)  # the notes are read from the repository's specs
    assert render(ROOT / "baselines" / "checkpoints") == (ROOT / "BASELINES.md").read_text()
