"""``parlour baselines --track rl`` and ``--track exploit``: families × seeds trained from the environment alone,
their learning curves, AUC and steps to the heuristic's level recomputed from the runs' own evaluations, the cross-play
table, the shipped ``<game>_rl``, and the exploitability table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from parlour.baselines.policy_file import read_spec  # noqa: E402
from parlour.training import scenarios  # noqa: E402
from parlour.training.cli import main  # noqa: E402
from parlour.training.config import ConfigError, load_config, to_yaml  # noqa: E402
from parlour.training.learning_curves import area_under_curve  # noqa: E402
from parlour.training.publish import (
    exploit,  # noqa: E402
    tracks,  # noqa: E402
)
from parlour.training.publish import rl as rl_track  # noqa: E402
from parlour.training.run import evaluations  # noqa: E402
from parlour.training.stats import iqm  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ENV = "six_suspects_v0"


@pytest.fixture
def rl_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_run: tuple[str, ...]) -> Path:
    """A project root whose 6 Suspects spec has an rl block of two tiny families, two seeds each, and a two-deal
    scenario of random and heuristic tables."""
    folder = tmp_path / "configs" / "six_suspects"
    folder.mkdir(parents=True)
    for family, source, extra in (
        ("ppo", "rl.yaml", ["opponents=[random]"]),
        ("selfplay", "rl_selfplay.yaml", ["self_play.snapshot_every=128"]),
    ):
        overrides = [*tiny_run, "eval.opponents=[random,six_suspects_heuristic]", *extra]
        cfg = load_config(ROOT / "configs" / "six_suspects" / source, overrides)
        (folder / f"{family}.yaml").write_text(to_yaml(cfg))
    (folder / "baselines.yaml").write_text(
        f"env: {ENV}\nconfig: configs/six_suspects/ppo.yaml\nscenarios: test\nseeds: [0]\n"
        "skip_bots: [search, six_suspects_oracle]\n"
        "rl:\n  algorithms: {ppo: configs/six_suspects/ppo.yaml, selfplay: configs/six_suspects/selfplay.yaml}\n"
        "  seeds: [0, 1]\n  shipped_algorithm: ppo\n  shipped_seed: 1\n  cross_play_deals: 1\n"
        "  sweep: {family: ppo, grid: {ppo.ent_coef: ['0.05']}, seeds: [100], steps: 256}\n"
        "  ablation: {family: ppo, ladder: {'less entropy': [ppo.ent_coef=0.0], 'as published': []}, seeds: [101], "
        "steps: 256}\n"
        "exploit:\n  targets: [random]\n  steps: 128\n  seeds: [0]\n  games: 1\n"
    )
    sc = scenarios.Scenario(ENV, 4, ("random", "six_suspects_heuristic"), deals=2)
    monkeypatch.setitem(scenarios.SCENARIO_SETS, "test", {ENV: sc})
    return tmp_path


def test_the_rl_track_trains_every_family_and_seed_and_publishes_curves_cross_play_and_the_shipped_policy(
    rl_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, figures, runs = rl_project / "checkpoints", rl_project / "figures", rl_project / "docs" / "archive" / "runs"
    kwargs = {"progress": False, "jobs": 2, "root": rl_project, "folder": folder, "figures": figures}
    tracks.regenerate("rl", None, train_models=True, **kwargs)  # type: ignore[arg-type]
    assert "training 4 rl run(s) (2 at a time)" in capsys.readouterr().out
    r = json.loads(rl_track.results_path(ENV, folder).read_text())
    assert set(r["families"]) == {"ppo", "selfplay"}
    assert all(f["seeds"] == [0, 1] and f["stats"]["seeds"] == 2 for f in r["families"].values())

    # The curves are the runs' own periodic evaluations: IQM over seeds at each point, and its AUC over the budget.
    for family, c in r["curves"]["families"].items():
        assert set(c["tables"]) == {"random", "six_suspects_heuristic"}
        for table, t in c["tables"].items():
            per_seed = [
                [row[table]["win_rate"] for row in evaluations(runs / "six_suspects" / f"{family}-seed{k}")]
                for k in (0, 1)
            ]
            assert t["steps"] == [0, 128, 256]  # the untrained policy's point, then every 128 steps
            assert np.allclose(t["iqm"], iqm(np.asarray(per_seed), axis=0))
            assert t["auc"] == pytest.approx(
                area_under_curve(np.asarray([0.0, 128.0, 256.0]), np.asarray(t["iqm"]), 256)
            )
            level = r["levels"]["heuristic"][table]
            # the first point at the level whose next point is at it too
            pairs = zip(t["steps"], t["iqm"], t["iqm"][1:], strict=False)
            assert t["steps_to_level"] == next((s for s, v, w in pairs if v >= level and w >= level), None)

    # The cross-play table: every seed of both families at a table of every seed.
    labels = [f"{f}@seed{k}" for f in ("ppo", "selfplay") for k in (0, 1)]
    assert list(r["cross_play"]["rates"]) == labels
    cells = {(m["policy"], m["opponent"]): m["win_rate"] for m in r["cross_play"]["matchups"]}
    assert all(r["cross_play"]["rates"][a][b] == cells[(a, b)] for a in labels for b in labels)

    # The budget in games: the budget over the decisions a game the seeds take at their training bots' tables.
    for f in r["families"].values():
        met = [o for o in ("random", "six_suspects_heuristic") if o in f["opponents"]]
        assert f["decisions_tables"] == met
        taken = [m["mean_decisions"] for m in r["matchups"] if m["policy"] in f["labels"] and m["opponent"] in met]
        assert len(taken) == 2 * len(met) and f["decisions_per_game"] == pytest.approx(np.mean(taken))
        assert 1 <= f["decisions_per_game"] < 100  # a 6 Suspects seat decides a few dozen times a game at most

    shipped = read_spec(folder / f"{ENV}_rl.json")
    assert shipped["training"]["shipped"] == {"family": "ppo", "seed": 1}
    # the shipped policy's own copy of the shipped seed's weights
    assert shipped["weights"]["file"] == f"{ENV}_rl.safetensors"
    assert (folder / f"{ENV}_rl.safetensors").read_bytes() == (folder / f"{ENV}_rl_ppo_seed1.safetensors").read_bytes()
    assert shipped["training"]["config"]["track"] == "rl"
    assert (figures / f"{ENV}_rl_learning_curves.png").stat().st_size > 0
    text = (rl_project / "BASELINES.md").read_text()
    for words in (
        "### rl track: learned from the environment alone",
        "| **ppo**, mean over 2 seeds |",
        "**Where RL stands**",
        "| ppo seed 1 (ships as six_suspects_rl) |",
        "**Sample efficiency**",
        "**Cross-play**",
        "`parlour baselines --track rl six_suspects_v0`",
        "games a seed (its seeds take",
    ):
        assert words in text

    # The sweep: the published config and each setting alone, on its own seeds, scored from its runs' curves.
    tracks.regenerate("sweep", None, train_models=True, jobs=2, root=rl_project, folder=folder)
    sweep = json.loads((folder / f"{ENV}_sweep_results.json").read_text())
    assert [row["setting"] for row in sweep["rows"]] == ["as published", "ppo.ent_coef=0.05"]
    changed = load_config(runs / "six_suspects" / "sweep" / "ppo.ent_coef_0.05-seed100" / "config.yaml")
    assert changed.ppo.ent_coef == 0.05 and changed.seed == 100 and changed.train.total_timesteps == 256
    for row in sweep["rows"]:
        assert len(row["tables"]["six_suspects_heuristic"]["steps"]) == 11  # step 0 and ten points of its budget
    text = (rl_project / "BASELINES.md").read_text()
    assert "**Tuning sweep** (family `ppo`" in text and "| ppo.ent_coef=0.05 |" in text
    # the noise line: the half-widths of the stored last points' intervals, as stored
    halves = [(hi - lo) / 2 for row in sweep["rows"] for cis in row["last_ci"].values() for lo, hi in cis]
    assert f"are ±{sum(halves) / len(halves):.3f} on average" in text

    # The ablation: its rungs in order, each with exactly its overrides, in a folder of its own.
    tracks.regenerate("ablation", None, train_models=True, jobs=2, root=rl_project, folder=folder)
    ablation = json.loads((folder / f"{ENV}_ablation_results.json").read_text())
    assert [row["setting"] for row in ablation["rows"]] == ["less entropy", "as published"]
    rung = load_config(runs / "six_suspects" / "ablation" / "less_entropy-seed101" / "config.yaml")
    assert rung.ppo.ent_coef == 0.0 and rung.seed == 101
    text = (rl_project / "BASELINES.md").read_text()
    assert "**Ablation** (family `ppo`" in text and "| less entropy |" in text and "**Tuning sweep**" in text

    # Finished runs are kept: nothing trains again, and the evaluation gives the same table.
    tracks.regenerate("rl", None, train_models=True, **kwargs)  # type: ignore[arg-type]
    assert "every rl run has finished its budget; nothing to train" in capsys.readouterr().out
    again = json.loads(rl_track.results_path(ENV, folder).read_text())
    assert again["matchups"] == r["matchups"] and again["curves"] == r["curves"]

    # A committed run record keeps no weights (git ignores them; they ship as the exported seed file): it is still
    # evaluated from that file, and an exported file of another run is refused.
    run = runs / "six_suspects" / "ppo-seed0"
    for path in run.glob("policy.*"):
        path.unlink()
    tracks.regenerate("rl", None, train_models=True, **kwargs)  # type: ignore[arg-type]
    assert json.loads(rl_track.results_path(ENV, folder).read_text())["matchups"] == r["matchups"]
    exported = rl_track.seed_file(ENV, "ppo", 0, folder)
    spec = json.loads(exported.read_text())
    spec["training"]["timesteps"] = 128
    exported.write_text(json.dumps(spec))
    with pytest.raises(ValueError, match="not the same run"):
        tracks.regenerate("rl", None, train_models=False, **kwargs)  # type: ignore[arg-type]
    exported.unlink()
    with pytest.raises(FileNotFoundError, match="holds no policy.json"):
        tracks.regenerate("rl", None, train_models=False, **kwargs)  # type: ignore[arg-type]


def test_the_rl_track_refuses_a_family_that_is_not_rl(rl_project: Path) -> None:
    config = rl_project / "configs" / "six_suspects" / "ppo.yaml"
    config.write_text(config.read_text().replace("track: rl", "track: ''"))
    with pytest.raises(ConfigError, match=r"ppo.yaml: the rl track trains track: rl configs only"):
        rl_track.load_family(rl_project, "configs/six_suspects/ppo.yaml", 0)


@pytest.mark.parametrize(
    ("edit", "replacement", "message"),
    [
        ("shipped_algorithm: ppo", "shipped_algorithm: dqn", "rl.shipped_algorithm='dqn' is not one of rl.algorithms="
         "['ppo', 'selfplay']"),
        ("shipped_seed: 1", "shipped_seed: 7", "rl.shipped_seed=7 is not one of rl.seeds=[0, 1]"),
        ("seeds: [100]", "seeds: [1, 100]", "rl.sweep.seeds=[1, 100] share [1] with rl.seeds=[0, 1]: a sweep runs on "
         "seeds kept apart from the published ones"),
        ("seeds: [101]", "seeds: [0, 101]", "rl.ablation.seeds=[0, 101] share [0] with rl.seeds=[0, 1]: an ablation"),
        ("ablation: {family: ppo, ladder:", "ablation: {family: ppo, grid: {ppo.ent_coef: ['0.1']}, ladder:",
         "rl.ablation takes a ladder (rung label -> overrides), no grid"),
        ("ablation: {family: ppo", "ablation: {family: dqn", "rl.ablation.family='dqn' is not one of rl.algorithms"),
    ],
)  # fmt: skip
def test_an_rl_spec_that_ships_what_it_does_not_train_is_refused(
    rl_project: Path,
    edit: str,
    replacement: str,
    message: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = rl_project / "configs" / "six_suspects" / "baselines.yaml"
    spec.write_text(spec.read_text().replace(edit, replacement))
    monkeypatch.chdir(rl_project)
    assert main(["baselines", "--track", "rl", "--skip-training", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("parlour baselines: ") and message in err
    assert len(err.strip().splitlines()) == 1


def test_the_exploitability_table_is_trained_stored_and_rendered(rl_project: Path) -> None:
    folder = rl_project / "checkpoints"
    runs = rl_project / "docs" / "archive" / "runs" / "exploit"
    tracks.regenerate("exploit", None, progress=False, train_models=False, root=rl_project, folder=folder)
    assert not runs.exists()  # nothing trained: the target is listed as such
    (pending,) = json.loads((folder / f"{ENV}_exploit_results.json").read_text())["targets"]
    assert pending == {"policy": "random", "missing": True}
    assert "| random | not trained yet (the command above trains it) |" in (rl_project / "BASELINES.md").read_text()
    tracks.regenerate("exploit", None, progress=False, root=rl_project, folder=folder)
    r = json.loads((folder / f"{ENV}_exploit_results.json").read_text())
    (target,) = r["targets"]
    assert target["policy"] == "random" and target["steps"] == 128 and target["chance"] == 0.25
    run = rl_project / "docs" / "archive" / "runs" / "exploit" / "six_suspects" / "random" / "seed0"
    final = json.loads((run / "metrics.json").read_text())["final_eval"]
    assert target["best_response_win_rates"] == [final["ppo"]["win_rate"]]
    text = (rl_project / "BASELINES.md").read_text()
    assert "### Approximate exploitability (a lower bound)" in text
    assert f"| random | {target['best_response']['iqm']['value']:.3f}" in text


def test_the_bound_of_bots_alone_is_chosen_on_the_benchmark_deals_and_reported_on_fresh_ones() -> None:
    from parlour.baselines import make as make_bot

    b = exploit.exploitability_bound(
        ENV,
        make_bot("random", ENV),
        [make_bot("six_suspects_heuristic", ENV), make_bot("six_suspects_expert", ENV)],
        games=6,
        num_players=4,
    )
    assert b["trained"] is None and b["bound"] == b["known"]
    assert b["bound"]["policy"] == max(b["chosen_on"], key=b["chosen_on"].get)
    assert b["bound"]["gain"] > 0.2  # the expert at a table of random bots
    with pytest.raises(ValueError, match="distinct names"):
        exploit.exploitability_bound(ENV, make_bot("random", ENV), [make_bot("random", ENV)], games=1, num_players=4)


def test_the_known_responses_are_every_fieldable_bot_and_every_published_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound tries every bot a player could field (no oracle: it reads the hidden state; no search bot: seconds a
    move) and every published training seed of both tracks, never the target itself."""
    from parlour.training.publish.heldout import published

    CHECKPOINTS = ROOT / "baselines" / "checkpoints"  # the clone's: the installed package ships no seed files

    seen: dict[str, list[str]] = {}

    def capture(env_name: str, target: object, known: list[object], trained: list[object], **_: object) -> dict:
        seen["target"] = [target.name]  # type: ignore[attr-defined]
        seen["known"] = [p.name for p in known]  # type: ignore[attr-defined]
        return {}

    monkeypatch.setattr(exploit, "exploitability_bound", capture)
    exploit.bound_for(ENV, "six_suspects_heuristic", [], 1, 4, {}, CHECKPOINTS)
    seeds = [label for family in published(ENV, CHECKPOINTS)[0].values() for label, _ in family]
    assert len(seeds) >= 13  # five seeds of each rl family, three distilled
    assert set(seeds) <= set(seen["known"])
    assert {"random", "six_suspects_expert", "six_suspects_readout", "six_suspects_rl"} <= set(seen["known"])
    assert not {"six_suspects_oracle", "search", "six_suspects_heuristic"} & set(seen["known"])
    assert seen["target"] == ["six_suspects_heuristic"]


def test_a_paired_gain_is_floored_at_0_and_refuses_cells_of_other_deals() -> None:
    own = {"deal_wins": [2, 2, 1, 3], "games": 16}
    worse = exploit.paired_gain({"deal_wins": [1, 1, 0, 2], "games": 16}, own)
    assert worse["difference"] == pytest.approx(-0.25) and worse["gain"] == 0.0 and worse["gain_ci"][1] >= 0.0
    better = exploit.paired_gain({"deal_wins": [4, 3, 3, 4], "games": 16}, own)
    assert better["gain"] == pytest.approx(1.5 / 4) and better["gain_ci"][0] > 0
    with pytest.raises(ValueError, match="same deals"):
        exploit.paired_gain({"deal_wins": [1, 1], "games": 8}, own)


@pytest.mark.slow
def test_the_exploitability_bound_is_the_best_response_we_have_chosen_and_reported_on_different_deals(
    rl_project: Path,
) -> None:
    """Issue 38: the bound takes the best of the trained responses (warm-started as a clone of the target, with a
    learning curve) and of every published policy and bot, chosen on the benchmark's deals and reported on a fresh
    deal set; it is never below the target's own rate (a gain of at least 0) and is one of the responses it names."""
    from parlour.training.evaluation.games import eval_deals

    spec = rl_project / "configs" / "six_suspects" / "baselines.yaml"
    spec.write_text(
        spec.read_text().replace(
            "exploit:\n  targets: [random]\n  steps: 128\n  seeds: [0]\n  games: 1\n",
            "exploit:\n  targets: [random]\n  steps: 256\n  seeds: [0, 1]\n  games: 2\n  warm_games: 2\n"
            "  eval_every: 128\n  bound: true\n",
        )
    )
    folder = rl_project / "checkpoints"
    tracks.regenerate("exploit", None, progress=False, root=rl_project, folder=folder)
    r = json.loads((folder / f"{ENV}_exploit_results.json").read_text())
    (target,) = r["targets"]
    b = target["bound"]
    assert b["choose_set"] != b["report_set"] and not set(eval_deals(b["choose_set"], 50)) & set(
        eval_deals(b["report_set"], 50)
    )
    # every bot and shipped policy of the game was tried (the target itself is the reference, not a response)
    assert {"six_suspects_heuristic", "six_suspects_expert", "best response seed0", "best response seed1"} <= set(
        b["chosen_on"]
    ) and "random" not in b["chosen_on"]
    assert b["bound"] in (b["known"], b["trained"])
    best_on_choose = max(b["chosen_on"].values())
    assert b["bound"]["choose_win_rate"] == best_on_choose  # chosen where it was best...
    for entry in (b["known"], b["trained"], b["bound"]):
        assert entry["gain"] == max(0.0, entry["difference"]) >= 0.0  # ...reported on fresh deals, floored at 0
        assert entry["gain"] == pytest.approx(max(0.0, entry["win_rate"] - b["own"]["win_rate"]))
    # the warm start imitated the target, and the runs kept a curve
    run = rl_project / "docs" / "archive" / "runs" / "exploit" / "six_suspects" / "random" / "seed0"
    saved = load_config(run / "config.yaml")
    assert saved.pretrain.teacher == "random" and saved.pretrain.games == 2 and saved.track == "distilled"
    trained = json.loads((run / "metrics.json").read_text())["timesteps"]  # a rollout overshoots the budget
    assert [[p[0] for p in c] for c in target["curves"]] == [list(range(0, trained + 1, 128))] * 2  # step 0 on
    text = (rl_project / "BASELINES.md").read_text()
    assert "### Exploitability bounds" in text and f"**+{b['bound']['gain']:.3f}**" in text
    assert r["figure"] and (rl_project / r["figure"]).is_file()
    # the committed records hold no weights: from them alone the stored bound is kept, never replaced by one
    # without its trained responses
    for seed in ("seed0", "seed1"):
        for name in ("policy.json", "policy.safetensors"):
            (run.parent / seed / name).unlink()
    tracks.regenerate("exploit", None, progress=False, train_models=False, root=rl_project, folder=folder)
    assert json.loads((folder / f"{ENV}_exploit_results.json").read_text())["targets"] == r["targets"]
    stored = json.loads((folder / f"{ENV}_exploit_results.json").read_text())
    stored["targets"][0]["target"] = {"policy": "random", "sha256": "0" * 64}  # answered another file then
    (folder / f"{ENV}_exploit_results.json").write_text(json.dumps(stored))
    tracks.regenerate("exploit", None, progress=False, train_models=False, root=rl_project, folder=folder)
    (again,) = json.loads((folder / f"{ENV}_exploit_results.json").read_text())["targets"]
    assert again["bound"]["trained"] is None and again["target"] == {"policy": "random"}  # computed afresh


def test_a_benchmark_compares_with_both_tracks_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`parlour benchmark` prints and pairs its rows with the distilled track's and the rl track's trained seeds."""
    from parlour.training.publish import benchmark

    def matchup(policy: str, wins: list[int]) -> dict[str, object]:
        return {"policy": policy, "opponent": "random", "win_rate": sum(wins) / 8, "win_ci": [0.0, 1.0],
                "deal_wins": wins}  # fmt: skip

    distilled = {"scenario_set": "v1", "matchups": [matchup("g_distilled@seed0", [1, 1]), matchup("random", [1, 0])],
                 "policies": {"g_distilled@seed0": {}, "random": {}}}  # fmt: skip
    rl = {"scenario_set": "v1", "families": {"ppo": {"labels": ["ppo@seed0"]}},
          "matchups": [matchup("ppo@seed0", [2, 1]), matchup("random", [1, 0])],
          "policies": {"ppo@seed0": {}, "random": {}}}  # fmt: skip
    (tmp_path / "g_v0_results.json").write_text(json.dumps(distilled))
    (tmp_path / "g_v0_rl_results.json").write_text(json.dumps(rl))
    monkeypatch.setattr(benchmark, "CHECKPOINT_DIR", tmp_path)
    merged = benchmark.published("g_v0")
    assert merged is not None and list(merged["policies"]) == ["g_distilled@seed0", "random", "rl/ppo@seed0"]
    ours = {"num_players": 4, "matchups": [matchup("mine", [0, 1])], "policies": {"mine": {}}}
    lines = benchmark.paired_rows(ours, merged, "BASELINES.md")
    row = next(x for x in lines if x.startswith("| mine − rl/ppo@seed0 |"))
    assert "-0.250" in row  # (0 - 2/4 + 1/4 - 1/4) / 2 deals


def test_a_game_without_the_part_asked_for_is_refused_naming_those_with_it(rl_project: Path) -> None:
    with pytest.raises(ValueError, match=r"no rl: block in configs/<game>/baselines.yaml for \['lady_alice_v1'\]; "
                       r"available: \['six_suspects_v0'\]"):  # fmt: skip
        tracks.regenerate("rl", ["lady_alice_v1"], train_models=False, progress=False, root=rl_project)
    with pytest.raises(ValueError, match=r"no exploit: block .* for \['elevenses_v0'\]"):
        tracks.regenerate("exploit", ["elevenses_v0"], progress=False, root=rl_project)


def test_the_old_game_flag_chooses_the_game_on_every_track(
    rl_project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(rl_project)
    assert main(["baselines", "--game", "lady_alice_v1", "--track", "rl", "--skip-training", "--no-progress"]) == 2
    assert "no rl: block in configs/<game>/baselines.yaml for ['lady_alice_v1']" in capsys.readouterr().err


def test_curves_only_recomputes_the_stored_curves_from_the_runs_evaluations(tmp_path: Path) -> None:
    """`parlour baselines --track rl --curves-only`: a step-0 point added to every run's evaluations (what
    `python -m parlour.training.publish.initial_point` writes) starts the stored curves at step 0 and changes their AUC;
    nothing else of the stored results moves."""
    import shutil

    env, game = "goes_to_eleven_v0", "goes_to_eleven"
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    shutil.copytree(ROOT / "docs" / "archive" / "runs" / game, tmp_path / "runs" / game)
    folder = tmp_path / "checkpoints"
    folder.mkdir()
    stored = ROOT / "baselines" / "checkpoints" / f"{env}_rl_results.json"
    shutil.copy(stored, folder)
    runs = sorted((tmp_path / "runs" / game).glob("*/evaluations.jsonl"))

    def refreshed() -> dict:
        tracks.refresh_curves([env], root=tmp_path, runs=tmp_path / "runs", folder=folder, figures=tmp_path / "f")
        return json.loads((folder / stored.name).read_text())

    for evals in runs:  # the runs as trained before step-0 points (whether or not the repository's have them yet)
        rows = [r for r in evals.read_text().splitlines() if json.loads(r)["timesteps"] != 0]
        evals.write_text("\n".join(rows) + "\n")
    before = refreshed()
    for evals in runs:
        first = json.loads(evals.read_text().splitlines()[0])
        zero = {k: ({**v, "win_rate": 0.0} if isinstance(v, dict) else v) for k, v in first.items()}
        evals.write_text(json.dumps({**zero, "timesteps": 0}) + "\n" + evals.read_text())
    after = refreshed()
    for family, curves in after["curves"]["families"].items():
        for table, c in curves["tables"].items():
            old = before["curves"]["families"][family]["tables"][table]
            assert old["steps"][0] > 0 and c["steps"] == [0, *old["steps"]] and c["iqm"][0] == 0.0
            assert c["auc"] < old["auc"]  # the curve no longer flat at its first point before it
    assert {k: v for k, v in after.items() if k not in ("curves", "figure")} == {
        k: v for k, v in json.loads(stored.read_text()).items() if k not in ("curves", "figure")
    }
    assert (tmp_path / "BASELINES.md").is_file()


def test_a_jitted_family_of_another_budget_is_rendered_with_its_budget_and_where_its_points_were_played(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_run: tuple[str, ...], jax_tiny: tuple[str, ...]
) -> None:
    """The rl track's third family (``trainer: jax``, ``train.eval_backend: jax``) beside an SB3 family: each family's
    own budget is said, its curve has only the tables its periodic evaluations played (no batched expert), and the
    page says its points were played on the JAX core's deals, not the deal set's."""
    pytest.importorskip("jax")
    folder = tmp_path / "configs" / "six_suspects"
    folder.mkdir(parents=True)
    three = "eval.opponents=[random,six_suspects_heuristic,six_suspects_expert]"
    sb3 = load_config(ROOT / "configs" / "six_suspects" / "rl.yaml", [*tiny_run, three, "opponents=[random]"])
    (folder / "ppo.yaml").write_text(to_yaml(sb3))
    jitted = load_config(
        ROOT / "configs" / "six_suspects" / "rl_jax.yaml",
        [*jax_tiny, "eval.opponents=[random,six_suspects_heuristic]", "train.eval_backend=jax"],
    )
    (folder / "jaxppo.yaml").write_text(to_yaml(jitted))
    (folder / "baselines.yaml").write_text(
        f"env: {ENV}\nconfig: configs/six_suspects/ppo.yaml\nscenarios: test\nseeds: [0]\n"
        "skip_bots: [search, six_suspects_oracle]\n"
        "rl:\n  algorithms: {ppo: configs/six_suspects/ppo.yaml, jaxppo: configs/six_suspects/jaxppo.yaml}\n"
        "  seeds: [0]\n  shipped_algorithm: ppo\n  shipped_seed: 0\n  cross_play_deals: 1\n"
    )
    sc = scenarios.Scenario(ENV, 4, ("random", "six_suspects_heuristic", "six_suspects_expert"), deals=2)
    monkeypatch.setitem(scenarios.SCENARIO_SETS, "test", {ENV: sc})
    folder_out = tmp_path / "checkpoints"
    tracks.regenerate(
        "rl", None, train_models=True, progress=False, jobs=1, root=tmp_path, folder=folder_out,
        figures=tmp_path / "figures",
    )  # fmt: skip
    r = json.loads(rl_track.results_path(ENV, folder_out).read_text())
    curves = r["curves"]["families"]
    assert curves["ppo"]["backend"] == "scalar" and curves["jaxppo"]["backend"] == "jax"
    assert set(curves["ppo"]["tables"]) == {"random", "six_suspects_heuristic", "six_suspects_expert"}
    assert set(curves["jaxppo"]["tables"]) == {"random", "six_suspects_heuristic"}
    assert curves["jaxppo"]["tables"]["random"]["steps"] == [0, 256, 512]
    text = (tmp_path / "BASELINES.md").read_text()
    assert "Budgets, in learner steps a seed: `ppo` 256, `jaxppo` 512." in text
    assert "The points of `jaxppo` were played inside the jitted trainer" in text
    assert "| jaxppo | six_suspects_expert |" not in text and "| ppo | six_suspects_expert |" in text
    assert "A 0.00256M-step budget a seed (ten times the smallest)" in text
    assert (tmp_path / "figures" / f"{ENV}_rl_learning_curves.png").stat().st_size > 0
