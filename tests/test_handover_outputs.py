"""Issue 37: no command deletes or misreports what it did not make.

``parlour baselines`` deletes a seed's run folder only through ``delete_run`` (a run folder Parlour made, not held by
a live process); ``parlour exploit`` and the rl track reuse a finished run only if it was trained from the config
asked for; ``match``/``evaluate``/``export``/``benchmark`` refuse to replace an output unless ``--overwrite``;
``BASELINES.md`` is never written through a link; a malformed results file is one line naming it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sb3_contrib")

from parlour.envs.fileio import FolderLock  # noqa: E402
from parlour.training.cli import main  # noqa: E402
from parlour.training.config import load_config  # noqa: E402
from parlour.training.publish import distilled, exploit, results, reuse  # noqa: E402
from parlour.training.publish import rl as rl_track
from parlour.training.run import RUN_MARKER, RunError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ENV = "six_suspects_v0"
BASE = ROOT / "tests" / "data" / "six_suspects_base.yaml"


def one_line(text: str) -> str:
    assert text.count("\n") == 1 and "Traceback" not in text, text
    return text.strip()


# ------------------------------------------------------------------------------- parlour baselines: its run folders
def _fake_train(calls: list[dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """A stand-in for ``train``: records how it was called and writes the run as a finished one would."""

    def fake(cfg: Any, run: Path, *, resume: bool = False, **kw: Any) -> dict[str, Any]:
        calls.append({"run": run, "resume": resume, "seed": cfg.seed})
        return {"timesteps": cfg.train.total_timesteps, "train_wall_seconds": 1.0}

    return fake


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda run: (run / ".git").mkdir(), "it is not a run folder Parlour made (no .parlour-run.json)"),
        (lambda run: (run / "thesis.tex").write_text("keep"), "it is not a run folder Parlour made"),
    ],
    ids=["git", "own-file"],
)
def test_baselines_never_deletes_a_seed_folder_it_did_not_make(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setup: Callable[[Path], object], message: str
) -> None:
    import parlour.training.train as train_module

    run = tmp_path / "runs" / "baselines" / ENV / "seed0"
    run.mkdir(parents=True)
    setup(run)
    before = sorted(p.name for p in run.iterdir())
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(train_module, "train", _fake_train(calls))
    with pytest.raises(RunError, match=re.escape(message)):
        distilled._train_seed((ENV, str(BASE), 0, str(tmp_path), str(tmp_path / "ck")))
    assert sorted(p.name for p in run.iterdir()) == before and not calls


def _started_run(run: Path, cfg: Any, *, finished: bool = False) -> None:
    """A run folder as ``parlour train`` leaves it: its marker and config (and, if ``finished``, its metrics)."""
    from parlour.training.config import to_yaml

    run.mkdir(parents=True, exist_ok=True)
    (run / RUN_MARKER).write_text(json.dumps({"format": "parlour-run/1", "run_id": "x"}))
    (run / "config.yaml").write_text(to_yaml(cfg))
    if finished:
        metrics = {"finished": True, "timesteps": cfg.train.total_timesteps, "train_wall_seconds": 1.0}
        (run / "metrics.json").write_text(json.dumps(metrics))


def test_baselines_refuses_to_delete_a_seed_folder_a_live_run_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import parlour.training.train as train_module

    run = tmp_path / "runs" / "baselines" / ENV / "seed0"
    _started_run(run, load_config(BASE, ["seed=0", "ppo.n_epochs=7"]))  # another config: it would be retrained
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(train_module, "train", _fake_train(calls))
    with FolderLock(run, "run folder"), pytest.raises(RunError, match="is in use by another process"):
        distilled._train_seed((ENV, str(BASE), 0, str(tmp_path), str(tmp_path / "ck")))
    assert (run / "config.yaml").is_file() and not calls


def test_baselines_retrains_a_seed_folder_of_another_config_and_resumes_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The distilled track's run folders are its working copies: another config's run is deleted (it is Parlour's)
    and trained afresh, never resumed under the new config; a stopped run of the same config is resumed."""
    import parlour.training.train as train_module

    monkeypatch.setattr(distilled, "save_policy", lambda *a: None)
    monkeypatch.setattr(distilled, "read_spec", lambda p: {})
    monkeypatch.setattr(distilled, "read_weights", lambda p, s: {})
    run = tmp_path / "runs" / "baselines" / ENV / "seed0"
    _started_run(run, load_config(BASE, ["seed=0", "ppo.n_epochs=7"]))
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(train_module, "train", _fake_train(calls))
    job = (ENV, str(BASE), 0, str(tmp_path), str(tmp_path / "ck"))
    distilled._train_seed(job)
    assert calls == [{"run": run, "resume": False, "seed": 0}] and not run.exists()
    assert "was started from another config (ppo.n_epochs: 7 in the run, " in capsys.readouterr().out
    _started_run(run, load_config(BASE, ["seed=0"]))
    distilled._train_seed(job)
    assert calls[-1] == {"run": run, "resume": True, "seed": 0}


# --------------------------------------------------------------------------------------- reuse only what matches
@pytest.mark.parametrize(
    ("run_overrides", "finished", "state", "keys"),
    [
        ([], True, "finished", []),
        ([], False, "resume", []),
        (["train.total_timesteps=128"], True, "resume", []),  # a larger budget asked: continue it
        (["train.total_timesteps=512"], True, "mismatch", ["train.total_timesteps"]),  # it trained more than asked
        (["train.checkpoint_every=64"], True, "finished", []),  # changes nothing it produced
        (["opponents=[six_suspects_heuristic]"], True, "mismatch", ["opponents"]),
        (
            ["opponents=[six_suspects_heuristic]", "train.total_timesteps=128"],
            False,
            "mismatch",
            ["opponents", "train.total_timesteps"],
        ),  # fmt: skip
    ],
)
def test_a_run_is_reused_only_for_the_config_it_was_trained_from(
    tmp_path: Path, run_overrides: list[str], finished: bool, state: str, keys: list[str]
) -> None:
    asked = load_config(BASE, ["train.total_timesteps=256", "opponents=[random]"])
    _started_run(
        tmp_path / "run",
        load_config(BASE, ["train.total_timesteps=256", "opponents=[random]", *run_overrides]),
        finished=finished,
    )
    got = reuse.reuse(tmp_path / "run", asked)
    assert (got.state, sorted(got.changes)) == (state, keys)
    assert reuse.reuse(tmp_path / "nothing", asked).state == "new"


def test_exploit_never_reports_another_targets_best_responses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exploit random, then the heuristic into the same --out: the second is refused naming what differs (it used to
    print random's best responses as the heuristic's exploitability); --overwrite retrains it."""
    out = tmp_path / "br"
    argv = ["exploit", ENV, "--steps", "128", "--seeds", "0", "--games", "1", "--out", str(out), "--no-progress"]
    assert main([argv[0], argv[1], "random", *argv[2:]]) == 0
    first = json.loads((out / "exploit.json").read_text())
    capsys.readouterr()
    assert main([argv[0], argv[1], "six_suspects_heuristic", *argv[2:]]) == 2
    err = one_line(capsys.readouterr().err)
    assert err.startswith(f"parlour exploit: {out / 'seed0'} holds a best response trained from another config (")
    assert "opponents: ['random'] in the run, ['six_suspects_heuristic'] asked" in err and "--overwrite" in err
    assert json.loads((out / "exploit.json").read_text()) == first  # nothing reported, nothing changed
    assert main([argv[0], argv[1], "six_suspects_heuristic", *argv[2:], "--overwrite"]) == 0
    second = json.loads((out / "exploit.json").read_text())
    cfg = json.loads((out / "seed0" / "policy.json").read_text())["training"]["config"]
    assert second["policy"] == "six_suspects_heuristic" and cfg["opponents"] == ["six_suspects_heuristic"]


def test_exploit_never_reuses_best_responses_to_another_file_under_the_targets_name(tmp_path: Path) -> None:
    """A shipped name or a policy file can come to hold another policy (a family retrained, another one shipped):
    best responses to the old file are refused in one line naming the digests, and --overwrite retrains them."""
    import shutil

    from parlour.baselines import shipped_path
    from parlour.baselines.policy_file import paths

    spec, weights = paths(shipped_path("six_suspects_rl"))
    target = tmp_path / spec.name
    shutil.copy(spec, target)
    shutil.copy(weights, tmp_path / weights.name)
    out = tmp_path / "br"
    assert exploit.best_responses(ENV, str(target), steps=128, seeds=[0], out=out, games=1) is not None
    record = json.loads((out / exploit.TARGET_FILE).read_text())
    assert record == exploit.target_identity(str(target)) and len(record["sha256"]) == 64
    assert exploit.best_responses(ENV, str(target), steps=128, seeds=[0], out=out, games=1) is not None  # reused
    changed = json.loads(target.read_text())
    changed["training"]["note"] = "retrained"  # another policy file under the same path
    target.write_text(json.dumps(changed))
    with pytest.raises(RunError, match=r"holds best responses trained against another policy under the name .*sha256"):
        exploit.best_responses(ENV, str(target), steps=128, seeds=[0], out=out, games=1)
    with pytest.raises(RunError, match=r"another policy under the name"):  # nor reported without training
        exploit.best_responses(ENV, str(target), steps=128, seeds=[0], out=out, games=1, train_missing=False)
    first_run = json.loads((out / "seed0" / RUN_MARKER).read_text())["run_id"]
    assert exploit.best_responses(ENV, str(target), steps=128, seeds=[0], out=out, games=1, overwrite=True)
    assert json.loads((out / "seed0" / RUN_MARKER).read_text())["run_id"] != first_run  # trained afresh
    assert json.loads((out / exploit.TARGET_FILE).read_text()) == exploit.target_identity(str(target))
    assert exploit.target_identity("random") == {"policy": "random"}


@pytest.mark.parametrize("env_name", ["goes_to_eleven_v0", "six_suspects_v0"])  # two games' bounds
def test_a_stored_exploit_row_for_another_file_under_the_targets_name_shows_no_figures(env_name: str) -> None:
    """BASELINES.md never prints a bound for a file that no longer ships under the target's name: each stored
    target keeps what its responses answered, and a row whose file has changed since says so instead of figures."""
    import copy

    from parlour.baselines import CHECKPOINT_DIR

    stored = json.loads((CHECKPOINT_DIR / f"{env_name}_exploit_results.json").read_text())
    shipped = next(t for t in stored["targets"] if t["policy"].endswith("_distilled"))
    assert shipped["target"] == exploit.target_identity(shipped["policy"])  # every stored target says what it answered

    def row(result: dict[str, Any]) -> str:
        return next(line for line in exploit.render(result) if line.startswith(f"| {shipped['policy']} |"))

    assert "0." in row(stored) and "not shown" not in row(stored)
    changed = copy.deepcopy(stored)
    entry = next(t for t in changed["targets"] if t["policy"] == shipped["policy"])
    entry["target"] = {**entry["target"], "sha256": "0" * 64}  # trained against another file under this name
    line = row(changed)
    assert "not shown: its responses answer an earlier file" in line and "000000000000…" in line
    assert not re.search(r"\d\.\d{3}", line) and f"--track exploit {env_name}" in line
    del entry["target"]  # stored before the record was kept: taken as it is
    assert row(changed) == row(stored)


def test_a_bound_is_kept_from_the_stored_results_only_where_it_cannot_be_played_again(tmp_path: Path) -> None:
    """Committed best-response runs are records without weights: regenerating from them keeps the stored bound of
    the same target file, budget and seeds, and computes afresh wherever any of those differs or the weights are
    there."""
    seeds = [tmp_path / "seed0", tmp_path / "seed1"]
    for run in seeds:
        run.mkdir()
    report = {
        "policy": "x_rl",
        "steps": 400,
        "seeds": [0, 1],
        "warm_games": 20,
        "target": {"policy": "x_rl", "sha256": "a"},
    }
    entry = {**report, "bound": {"bound": {"gain": 0.1}}, "curves": [[[0.0, 0.2]]]}
    stored = {"targets": [{"policy": "other", "bound": {}}, entry]}
    assert exploit._stored_bound(stored, report, seeds) == entry
    for key, value in (
        ("target", {"policy": "x_rl", "sha256": "b"}),
        ("steps", 800),
        ("seeds", [0]),
        ("warm_games", 0),
    ):
        assert exploit._stored_bound(stored, {**report, key: value}, seeds) is None, key
    assert exploit._stored_bound({"targets": [{k: v for k, v in entry.items() if k != "bound"}]}, report, seeds) is None
    assert exploit._stored_bound({}, report, seeds) is None
    for run in seeds:
        (run / "policy.json").write_text("{}")  # the weights are there: play them again
    assert exploit._stored_bound(stored, report, seeds) is None


def test_stored_trained_picks_join_the_published_responses_played_afresh_only_where_both_were_played_alike() -> None:
    def entry(name: str, choose: float) -> dict[str, Any]:
        return {"policy": name, "choose_win_rate": choose, "win_rate": choose - 0.01, "gain": 0.0}

    common = {"choose_set": "v1", "report_set": "report-v1", "games": 100, "own": {"win_rate": 0.3}}
    trained, old_known = entry("best response seed1", 0.40), entry("x_distilled", 0.35)
    stored = {**common, "chosen_on": {"best response seed0": 0.3, "best response seed1": 0.4, "gone@seed0": 0.2},
              "known": old_known, "trained": trained, "bound": trained}  # fmt: skip
    fresh = {**common, "chosen_on": {"x_distilled": 0.35, "x@seed4": 0.45}, "known": entry("x@seed4", 0.45),
             "trained": None, "bound": entry("x@seed4", 0.45)}  # fmt: skip
    joined = exploit._with_stored_trained(fresh, stored)
    assert joined["bound"] == fresh["known"] and joined["trained"] == trained  # a newly published seed beats them
    assert joined["chosen_on"] == {
        "x_distilled": 0.35,
        "x@seed4": 0.45,
        "best response seed0": 0.3,
        "best response seed1": 0.4,
    }  # no policy that is not published now
    weaker = {**fresh, "known": old_known, "bound": old_known}
    assert exploit._with_stored_trained(weaker, stored)["bound"] == trained  # the stored pick is still the best
    tie = {**fresh, "known": entry("x@seed4", 0.40)}
    assert exploit._with_stored_trained(tie, stored)["bound"] == tie["known"]  # ties go to the published one
    other = {**fresh, "own": {"win_rate": 0.31}}  # not played alike: the stored bound stands whole
    assert exploit._with_stored_trained(other, stored) is stored


def test_exploit_with_a_larger_budget_continues_the_run_of_the_same_config(tmp_path: Path) -> None:
    out = tmp_path / "br"
    report = exploit.best_responses(ENV, "random", steps=128, seeds=[0], out=out, games=1)
    trained = json.loads((out / "seed0" / "metrics.json").read_text())["timesteps"]  # a whole rollout: over 128
    assert report is not None and trained > 128
    with pytest.raises(RunError, match=r"train.total_timesteps: 128 in the run, 256 asked"):
        exploit.best_responses(ENV, "random", steps=256, seeds=[0], out=out, games=1)  # past 256 toward 128: not it
    again = exploit.best_responses(ENV, "random", steps=trained + 1, seeds=[0], out=out, games=1)
    assert again is not None and again["steps"] == trained + 1
    assert json.loads((out / "seed0" / "metrics.json").read_text())["timesteps"] > trained
    assert f"train.total_timesteps 128 -> {trained + 1}" in (out / "seed0" / "command.txt").read_text()  # resumed


@pytest.mark.parametrize("seeds", ["", ",", "0,0", "-1", "a"])
def test_exploit_refuses_seeds_it_cannot_train_in_one_line(seeds: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["exploit", ENV, "random", "--seeds", seeds, "--no-progress"]) == 2
    assert one_line(capsys.readouterr().err).startswith(f"parlour exploit: --seeds {seeds!r} is not valid")


def test_the_rl_track_refuses_a_finished_run_of_another_config(tmp_path: Path) -> None:
    """A committed run record from another config is neither exported as the family's seed nor retrained over."""
    cfg = load_config(ROOT / "configs" / "six_suspects" / "rl.yaml", ["seed=0"])
    run = tmp_path / "ppo-seed0"
    _started_run(run, load_config(ROOT / "configs" / "six_suspects" / "rl.yaml", ["seed=0", "ppo.ent_coef=0.5"]),
                 finished=True)  # fmt: skip
    with pytest.raises(RunError, match=r"holds a run trained from another config \(ppo.ent_coef: 0.5 in the run"):
        rl_track.run_reuse(run, cfg)
    job = (ENV, "configs/six_suspects/rl.yaml", str(ROOT), 0, str(run), ())
    with pytest.raises(RunError, match="move the folder away"):
        rl_track._run_jobs(ENV, "rl", [job], ROOT, 1)
    assert (run / "metrics.json").is_file()


# ----------------------------------------------------------------------------- match, evaluate, export: --overwrite
def _match(tmp_path: Path, *extra: str) -> list[str]:
    return ["match", ENV, "--bots", "random", "--games", "1", "--no-progress", *extra]


def _evaluate(tmp_path: Path, *extra: str) -> list[str]:
    return ["evaluate", ENV, "--policies", "random", "--games", "1", "--no-progress", *extra]


@pytest.mark.parametrize(
    ("argv", "setup", "message"),
    [
        (
            lambda t: _match(t, "--records", str(t / "recs")),
            lambda t: (t / "recs").mkdir() or (t / "recs" / "game_00000.json").write_text("keep"),
            "--records {t}/recs exists already and is not empty; pass --overwrite",
        ),
        (
            lambda t: _match(t, "--json", str(t / "rows.json")),
            lambda t: (t / "rows.json").write_text("keep"),
            "--json {t}/rows.json exists already; pass --overwrite to replace it, or choose another path",
        ),
        (
            lambda t: _evaluate(t, "--records", str(t / "recs")),
            lambda t: (t / "recs").mkdir() or (t / "recs" / "notes.txt").write_text("keep"),
            "--records {t}/recs exists already and is not empty; pass --overwrite",
        ),
        (
            lambda t: _evaluate(t, "--records", str(t / "recs")),
            lambda t: (t / "elsewhere").mkdir() or (t / "recs").symlink_to(t / "elsewhere"),
            "--records {t}/recs is a symbolic link; refusing to write through it",
        ),
        (
            lambda t: _evaluate(t, "--out", str(t / "ev")),
            lambda t: (t / "ev").mkdir() or (t / "ev" / "evaluation.md").write_text("keep"),
            "--out {t}/ev/evaluation.md exists already; pass --overwrite",
        ),
        (
            lambda t: ["export", str(t / "m.zip"), str(t / "p"), "--trust-pickle"],
            lambda t: (t / "p.safetensors").write_text("keep"),
            "{t}/p.safetensors exists already; pass --overwrite to replace it",
        ),
    ],
    ids=["match-records", "match-json", "evaluate-records", "evaluate-records-link", "evaluate-out", "export"],
)
def test_outputs_are_refused_where_something_is_unless_overwrite(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: Callable[[Path], list[str]],
    setup: Callable[[Path], object],
    message: str,
) -> None:
    setup(tmp_path)
    before = {p: p.read_text() for p in tmp_path.rglob("*") if p.is_file()}
    assert main(argv(tmp_path)) == 2
    out, err = capsys.readouterr()
    command = argv(tmp_path)[0]
    assert one_line(err).startswith(f"parlour {command}: " + message.format(t=tmp_path))
    assert {p: p.read_text() for p in tmp_path.rglob("*") if p.is_file()} == before
    assert "| random |" not in out  # refused before any game
    if command != "export":
        assert main([*argv(tmp_path), "--overwrite"]) == (2 if "link" in message else 0)
        capsys.readouterr()


def test_overwrite_replaces_a_record_link_without_writing_through_it(tmp_path: Path) -> None:
    target = tmp_path / "precious.txt"
    target.write_text("keep")
    (tmp_path / "recs").mkdir()
    (tmp_path / "recs" / "game_00000.json").symlink_to(target)
    assert main(_match(tmp_path, "--records", str(tmp_path / "recs"), "--overwrite")) == 0
    assert target.read_text() == "keep" and not (tmp_path / "recs" / "game_00000.json").is_symlink()


# ------------------------------------------------------------------------- BASELINES.md and malformed results files
def test_render_only_never_writes_through_a_link_at_baselines_md(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("keep")
    project = tmp_path / "project"
    (project / "baselines" / "checkpoints").mkdir(parents=True)
    (project / "BASELINES.md").symlink_to(elsewhere)
    monkeypatch.chdir(project)
    assert main(["baselines", "--render-only"]) == 2
    assert (
        one_line(capsys.readouterr().err).startswith("parlour baselines: BASELINES.md is a symbolic link (to ")
        and elsewhere.read_text() == "keep"
    )
    (project / "BASELINES.md").unlink()
    assert main(["baselines", "--render-only"]) == 0
    assert (project / "BASELINES.md").read_text().startswith("# Published baselines")


def test_learning_curve_figures_replace_a_link_rather_than_write_through_it(tmp_path: Path) -> None:
    target = tmp_path / "precious.png"
    target.write_text("keep")
    figure = tmp_path / "figures" / "curves.png"
    figure.parent.mkdir()
    figure.symlink_to(target)
    report = {"env": ENV, "seeds": [{"seed": 0, "evaluations": [{"timesteps": 1, "random": {"win_rate": 0.5}}]}]}
    distilled.plot_learning_curves(report, figure)
    assert target.read_text() == "keep" and not figure.is_symlink() and figure.stat().st_size > 0


def _copy_results(folder: Path, kind: str, edit: Callable[[dict[str, Any]], object] | None, text: str = "") -> Path:
    """The committed 6 Suspects results of ``kind`` in ``folder``, edited by ``edit`` (or replaced by ``text``)."""
    name = results.results_file(Path(), ENV, kind).name
    data = json.loads((ROOT / "baselines" / "checkpoints" / name).read_text())
    if edit is not None:
        edit(data)
    path = folder / name
    path.write_text(text or json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("kind", "edit", "text", "what"),
    [
        ("distilled", None, "{not json", "is not a valid distilled results file (not JSON"),
        ("distilled", None, "[1, 2]", "is not a valid distilled results file (not a JSON object)"),
        ("distilled", lambda d: d.pop("seeds"), "", "is not a valid distilled results file (no 'seeds')"),
        (
            "rl",
            lambda d: d.update(families=[]),
            "",
            "is not a valid rl results file ('families' is a list, not a dict)",
        ),
        ("exploit", lambda d: d.update(targets=[1]), "", "is not a valid exploit results file (a target is not"),
        ("exploit", lambda d: d["targets"][0]["bound"].pop("own"), "", "is not a valid exploit results file (no 'own'"),
        ("sweep", lambda d: d["rows"][0].pop("tables"), "", "is not a valid sweep results file (no 'tables')"),
        ("distilled", lambda d: d["seeds"][0].pop("label"), "", "is not a valid distilled results file (no 'label')"),
    ],
)
def test_a_malformed_results_file_is_one_line_naming_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    kind: str,
    edit: Callable[[dict[str, Any]], object] | None,
    text: str,
    what: str,
) -> None:
    folder = tmp_path / "baselines" / "checkpoints"
    folder.mkdir(parents=True)
    path = _copy_results(folder, kind, edit, text)
    monkeypatch.chdir(tmp_path)
    assert main(["baselines", "--render-only"]) == 2
    err = one_line(capsys.readouterr().err)
    assert err.startswith(f"parlour baselines: {path} {what}"), err
    assert not (tmp_path / "BASELINES.md").exists()


def test_a_malformed_published_result_is_one_line_in_benchmark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from parlour.training.publish import benchmark

    _copy_results(tmp_path, "distilled", lambda d: d.update(matchups={}))
    monkeypatch.setattr(benchmark, "CHECKPOINT_DIR", tmp_path)
    assert main(["benchmark", ENV, "random", "--deals", "1", "--no-progress"]) == 2
    err = one_line(capsys.readouterr().err)
    assert "is not a valid distilled results file ('matchups' is a dict, not a list)" in err
