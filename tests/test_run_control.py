"""Stopping, resuming and re-running `parlour train` as a user does: Ctrl-C and SIGTERM, --resume, the default
run folder, failed runs, and the messages of an install without the train extra."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import pickle
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sb3_contrib")

from parlour.envs.fileio import FolderLock  # noqa: E402
from parlour.training.cli import main  # noqa: E402
from parlour.training.run import RUN_MARKER, checkpoint_step, evaluations  # noqa: E402

CONFIG = Path(__file__).resolve().parent / "data" / "six_suspects_base.yaml"
#: A run of a few seconds: 128 steps a rollout (2 envs x 64).
TINY = [
    "train.n_envs=2",
    "ppo.n_steps=64",
    "ppo.batch_size=64",
    "ppo.n_epochs=1",
    "ppo.net_arch=[16]",
    "train.checkpoint_every=256",
    "train.eval_every=0",
    "eval.games=2",
    "eval.opponents=[random]",
    "eval.reference=[]",
]

STOPPER = """
import os, signal
from parlour.baselines.base import RandomPolicy

class Interrupter(RandomPolicy):
    '''Plays at random; at its {calls}th move it sends SIGINT to its own process, as Ctrl-C would (once).'''
    name = "interrupter"
    calls = 0

    def act(self, observation, action_mask, rng):
        type(self).calls += 1
        if type(self).calls == {calls}:
            self.fire()
        return super().act(observation, action_mask, rng)

    def fire(self):
        os.kill(os.getpid(), signal.SIGINT)

class Crasher(Interrupter):
    '''At its {calls}th move the process dies with no signal to catch (an exit stands in for it).'''
    name = "crasher"
    calls = 0

    def fire(self):
        raise SystemExit("the machine went away")

class Failing(RandomPolicy):
    name = "failing"

    def act(self, observation, action_mask, rng):
        raise RuntimeError("this opponent always fails")
"""


@pytest.fixture
def stopper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    folder = tmp_path / "mods"
    folder.mkdir()
    (folder / "stopper_mod.py").write_text(STOPPER.format(calls=400))
    monkeypatch.syspath_prepend(str(folder))
    sys.modules.pop("stopper_mod", None)
    return "stopper_mod"


def _resume_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("parlour train:")]


def test_ctrl_c_saves_a_checkpoint_and_resume_reaches_the_runs_own_budget(
    tmp_path: Path, stopper: str, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    # The budget is a command-line override: the YAML says 1,000,000, and the resume must not go back to it.
    argv = ["train", str(CONFIG), *TINY, "train.total_timesteps=1024", f"opponents=[{stopper}:Interrupter]"]
    assert main([*argv, "--out", str(run), "--no-progress"]) == 128 + signal.SIGINT
    err = capsys.readouterr().err
    (line,) = _resume_lines(err)  # one line, no traceback
    assert "Traceback" not in err
    stopped = checkpoint_step(run)
    assert stopped is not None
    assert 0 < stopped < 1024 and stopped % 128 == 0  # the stop waits for the rollout (128 steps) and its update
    assert line.startswith(
        f"parlour train: stopped by SIGINT at step {stopped:,} of 1,024; checkpoint saved to "
        f"{run / 'checkpoints' / 'latest'}; resume with: "
    )
    # the resume command repeats the importable name: a run folder's config cannot import it on its own say
    assert line.endswith(f" train --resume --out {run} 'opponents=[{stopper}:Interrupter]'")
    assert json.loads((run / "metrics.json").read_text())["timesteps"] == stopped
    assert not (run / "policy.json").exists()

    # Resume: no config, no overrides but the confirmed name; it continues from the step where it stopped, toward
    # the run's budget. Without the name (or --trust) the folder's config may not import it.
    assert main(["train", "--resume", "--out", str(run), "--no-progress"]) == 2
    assert "opponents=[stopper_mod:Interrupter] is a policy spec that imports code" in capsys.readouterr().err
    assert main(resume_args(err)) == 0
    err = capsys.readouterr().err
    assert f"resuming {run} from step {stopped:,} toward 1,024 steps, with the config it was started with" in err
    metrics = json.loads((run / "metrics.json").read_text())
    assert 1024 <= metrics["timesteps"] < 1024 + 128
    assert metrics["session_steps"] == metrics["timesteps"] - stopped
    assert (run / "policy.json").is_file() and (run / "final_eval.md").is_file()

    # Changing the run itself on resume is refused, naming what may change; the budget may be raised, recorded.
    assert main(["train", "--resume", "--out", str(run), "ppo.n_epochs=3", "--trust", "--no-progress"]) == 2
    assert "these cannot change (ppo.n_epochs: started with 1, now 3)" in capsys.readouterr().err
    assert main(["train", "--resume", "--out", str(run), "train.total_timesteps=1200", "--trust", "--no-progress"]) == 0
    assert "changed on this command: train.total_timesteps 1024 -> 1200" in capsys.readouterr().err
    assert "total_timesteps: 1200" in (run / "config.yaml").read_text()
    assert (
        (run / "command.txt").read_text().splitlines()[-1].endswith("# resumed with train.total_timesteps 1024 -> 1200")
    )


def test_the_same_command_runs_again_into_a_fresh_folder_and_prints_the_same_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["train", str(CONFIG), *TINY, "train.total_timesteps=256", "--no-progress"]
    tables = []
    for folder in ("six_suspects_base-seed0", "six_suspects_base-seed0-2"):
        assert main(argv) == 0
        captured = capsys.readouterr()
        assert f"run folder: runs/six_suspects_v0/{folder}" in captured.err
        tables.append(captured.out[captured.out.index("| policy |") :])
    assert tables[0] == tables[1]
    # --resume without --out takes the newest run of that config and seed; a finished run says so, changing nothing
    metrics = (tmp_path / "runs/six_suspects_v0/six_suspects_base-seed0-2/metrics.json").read_bytes()
    assert main([*argv[:1], str(CONFIG), "--resume", "--no-progress"]) == 0
    assert "runs/six_suspects_v0/six_suspects_base-seed0-2 is finished" in capsys.readouterr().err
    assert (tmp_path / "runs/six_suspects_v0/six_suspects_base-seed0-2/metrics.json").read_bytes() == metrics
    assert main([*argv[:1], str(CONFIG), "--resume", "train.total_timesteps=384", "--no-progress"]) == 0
    assert "resuming runs/six_suspects_v0/six_suspects_base-seed0-2 from step 256" in capsys.readouterr().err
    # --overwrite starts a run afresh, and deletes nothing that is not a run folder
    assert main([*argv, "--out", "runs/six_suspects_v0/six_suspects_base-seed0", "--overwrite"]) == 0
    assert len((tmp_path / "runs/six_suspects_v0/six_suspects_base-seed0/command.txt").read_text().splitlines()) == 1
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "keep.txt").write_text("mine")
    assert main([*argv, "--out", "notes", "--overwrite"]) == 2
    assert (
        "--overwrite: refusing to delete notes: it is not a run folder Parlour made (no .parlour-run.json); it holds "
        "keep.txt" in capsys.readouterr().err
    )
    assert (tmp_path / "notes" / "keep.txt").read_text() == "mine"


def test_a_new_run_that_fails_before_its_first_checkpoint_leaves_no_folder(tmp_path: Path, stopper: str) -> None:
    run = tmp_path / "run"
    with pytest.raises(RuntimeError, match="always fails"):
        main(["train", str(CONFIG), *TINY, f"opponents=[{stopper}:Failing]", "--out", str(run), "--no-progress"])
    assert not run.exists()  # the corrected command can use the same folder
    # and a config error is found before any folder is made
    assert main(["train", str(CONFIG), "eval.reference=[nobody]", "--out", str(run)]) == 2
    assert not run.exists()


@pytest.mark.parametrize(("sig", "vec_env"), [(signal.SIGINT, "subproc"), (signal.SIGTERM, "dummy")])
def test_a_signal_to_the_command_saves_and_exits_with_one_line(tmp_path: Path, sig: int, vec_env: str) -> None:
    run = tmp_path / "run"
    parlour = Path(sys.executable).parent / "parlour"
    cmd = [str(parlour), "train", str(CONFIG), *TINY, f"train.vec_env={vec_env}", "--out", str(run), "--no-progress"]
    # its own process group, as a terminal gives a command: Ctrl-C reaches the workers of a subproc run too
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    progress = run / "logs" / "session_0" / "progress.csv"
    deadline = time.monotonic() + 300
    while not (progress.is_file() and progress.stat().st_size) and proc.poll() is None:
        assert time.monotonic() < deadline, "the run never finished a rollout"
        time.sleep(0.2)
    os.killpg(proc.pid, sig)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 128 + sig, err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"parlour train: stopped by {signal.Signals(sig).name} at step ")
    # the executable the user ran; a subproc run's process count is repeated (a folder's config cannot start processes)
    again = " train.n_envs=2" if vec_env == "subproc" else ""
    assert last.endswith(f"resume with: {parlour} train --resume --out {run}{again}")
    assert (checkpoint_step(run) or 0) >= 128


def test_without_the_train_extra_the_messages_say_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import parlour.training as training

    monkeypatch.setitem(training.TRAIN_MODULES, "parlour_no_such_module", "omegaconf")
    assert main(["train", str(CONFIG)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        "parlour train: parlour train needs the 'train' extra, which is not installed (missing: omegaconf): "
        "pip install 'parlour[train]' (install the PyTorch build you want first). Policy files (NAME.json + "
        "NAME.safetensors), the environments and the scripted bots need none of it"
    )
    for command in (["baselines", "--skip-training"], ["export", "m.zip", "m", "--trust-pickle"]):
        assert main(command) == 2
        assert f"parlour {command[0]} needs the 'train' extra" in capsys.readouterr().err
    zip_path = tmp_path / "model.zip"
    zip_path.write_bytes(b"")
    argv = ["evaluate", "six_suspects_v0", "--policies", str(zip_path), "--trust-pickle", "--games", "1"]
    assert main(argv) == 2
    assert "needs the 'train' extra, which is not installed (missing: omegaconf)" in capsys.readouterr().err


def test_train_without_a_config_says_what_to_give(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train"]) == 2
    assert capsys.readouterr().err.strip() == (
        "parlour train: name a config, e.g. `parlour train configs/six_suspects/quick.yaml`, or resume a run: "
        "`parlour train --resume --out RUN`"
    )


def test_stop_handler_is_restored_after_training(tmp_path: Path) -> None:
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    assert (
        main(["train", str(CONFIG), *TINY, "train.total_timesteps=128", "--out", str(tmp_path / "r"), "--no-progress"])
        == 0
    )
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_periodic_evaluations_are_printed_one_line_each(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*TINY, "train.total_timesteps=512", "train.eval_every=256", "eval.periodic_games=1"]
    assert main(["train", str(CONFIG), *argv, "--out", str(tmp_path / "r"), "--no-progress"]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("evaluation at step")]
    assert [x.split(" (")[0] for x in lines] == [f"evaluation at step {k}" for k in (0, 256, 512)]
    rows = [json.loads(x) for x in (tmp_path / "r" / "evaluations.jsonl").read_text().splitlines()]
    r = rows[1]["random"]
    assert lines[1] == textwrap.dedent(
        f"evaluation at step 256 (1 deal × 4 seats = 4 games each): win rate vs random {r['win_rate']:.3f} "
        f"({r['win_ci'][0]:.3f}-{r['win_ci'][1]:.3f})"
    )


def test_the_progress_bar_names_its_phase(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*TINY, "train.total_timesteps=384", "train.eval_every=256", "eval.periodic_games=1"]
    assert main(["train", str(CONFIG), *argv, "--out", str(tmp_path / "r")]) == 0
    err = capsys.readouterr().err
    for phase in ("collecting", "updating the network", "evaluating", "done"):
        assert phase in err, phase  # the bar says why it is not moving, instead of freezing


@pytest.mark.slow  # two training processes beside a busy one: most of a minute
def test_the_shared_machine_bench_trains_alone_and_beside_a_busy_process(tmp_path: Path) -> None:
    from parlour.training.shared_bench import format_train_bench, run_train_bench

    config = tmp_path / "tiny.yaml"
    config.write_text(
        CONFIG.read_text()
        .replace("n_envs: 8", "n_envs: 2")
        .replace("n_steps: 512 ", "n_steps: 64 ")
        .replace("batch_size: 1024", "batch_size: 64")
        .replace("net_arch: [256, 256]", "net_arch: [16]")
    )
    rows = run_train_bench(str(config), 128, [1], beside=1, max_seconds=300)
    assert [(r["threads"], r["beside"], r["timesteps"], r["finished"]) for r in rows] == [
        (1, 0, 128, True),
        (1, 1, 128, True),
    ]
    assert all(r["steps_per_s"] > 0 for r in rows)
    table = format_train_bench(rows, cpus=2)
    ratio = rows[1]["steps_per_s"] / rows[0]["steps_per_s"]
    # the busy row (before the footnote): its rate beside one busy process, as a share of its rate alone
    trainer = rows[1].get("trainer", "config")
    busy = [line for line in table.splitlines() if line.startswith(f"| {trainer} | 1 | 1 | ")]
    assert len(busy) == 1 and busy[0].startswith(
        f"| {trainer} | 1 | 1 | 128 | {rows[1]['train_seconds']:.0f} | {rows[1]['steps_per_s']:,.0f} | {ratio:.2f} |"
    )


# ----------------------------------------------------------------------------------------------- nothing lost, nothing run
# Run folders that cannot destroy data or run code, and stops that keep their work. Every probe below failed on the
# Parlour before these checks: --overwrite deleted any folder holding a config.yaml (the current folder and a home
# folder included); --resume unpickled a handed-over checkpoints/latest.zip and honoured a run folder's own
# trust_pickle: true; Ctrl-C during behaviour cloning deleted the run and printed a resume line that failed; logs were
# written through planted links; nothing locked a run folder; broken metrics, huge budgets and networks gave
# tracebacks or were read lossily; overrides after options were refused.
PRETRAIN = ["pretrain.games=12", "pretrain.epochs=4", "pretrain.batch_size=32"]


def _module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str) -> str:
    folder = tmp_path / "mods"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.py").write_text(text)
    monkeypatch.syspath_prepend(str(folder))
    sys.modules.pop(name, None)
    return name


def stopper_at(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, calls: int) -> str:
    """An opponent that plays at random and sends SIGINT at its ``calls``th move (``module:Interrupter``)."""
    name = f"stopper_{calls}"
    return f"{_module(tmp_path, monkeypatch, name, STOPPER.format(calls=calls))}:Interrupter"


def train(run: Path, *more: str) -> int:
    return main(["train", str(CONFIG), *TINY, "opponents=[random]", *more, "--out", str(run), "--no-progress"])


def resume_args(err: str) -> list[str]:
    """The arguments of the resume command a stopped run printed (after the executable)."""
    line = next(x for x in err.splitlines() if "train --resume --out" in x)
    words = shlex.split(line[line.index("parlour train --resume") :])
    return words[1:]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): digest(p)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink() and p.name != ".parlour-lock"
    }


def test_a_session_that_dies_outright_keeps_its_training_time_to_the_last_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's total training time is written beside every checkpoint, so a session killed without a signal (no
    chance to write anything) is still counted, up to the checkpoint the resume starts from."""
    crasher = stopper_at(tmp_path, monkeypatch, 1500).replace(":Interrupter", ":Crasher")
    run = tmp_path / "run"
    with pytest.raises(SystemExit, match="went away"):
        train(run, "train.total_timesteps=1024", f"opponents=[{crasher}]")
    first = json.loads((run / "metrics.json").read_text())
    assert first["timesteps"] == checkpoint_step(run) >= 256 and first["train_wall_seconds"] > 0
    assert main(["train", "--resume", "--out", str(run), "--trust", "--no-progress"]) == 0
    final = json.loads((run / "metrics.json").read_text())
    assert final["finished"] is True and final["timesteps"] >= 1024
    assert final["train_wall_seconds"] == pytest.approx(first["train_wall_seconds"] + final["session_wall_seconds"])


# ----------------------------------------------------------------------------------------------- --overwrite
@pytest.fixture
def finished_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    assert train(run, "train.total_timesteps=128") == 0
    return run


def test_overwrite_refuses_a_folder_parlour_did_not_make(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    thesis = tmp_path / "thesis"
    for name in (".git/HEAD", "src/main.py", "config.yaml"):
        (thesis / name).parent.mkdir(parents=True, exist_ok=True)
        (thesis / name).write_text(name)
    before = tree(thesis)
    assert train(thesis, "train.total_timesteps=128", "--overwrite") == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == (
        f"parlour train: --overwrite: refusing to delete {thesis}: it is not a run folder Parlour made (no "
        f"{RUN_MARKER}); it holds .git, config.yaml, src. Choose another --out, or delete it yourself"
    )
    assert tree(thesis) == before


def test_overwrite_refuses_a_run_folder_that_holds_other_files(
    finished_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (finished_run / "notes.txt").write_text("mine")
    assert train(finished_run, "train.total_timesteps=128", "--overwrite") == 2
    assert "besides its run it holds notes.txt, which Parlour did not write" in capsys.readouterr().err
    assert (finished_run / "notes.txt").read_text() == "mine" and (finished_run / "policy.json").is_file()


@pytest.mark.parametrize("where", ["current folder", "home folder", "folder holding the home folder"])
def test_overwrite_never_deletes_the_current_or_a_home_folder(
    where: str, finished_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # even a real run folder, marker and all, is kept when it is where the user stands or lives
    if where == "current folder":
        monkeypatch.chdir(finished_run)
        out, why = ".", "it is the current folder"
    elif where == "home folder":
        monkeypatch.setenv("HOME", str(finished_run))
        out, why = str(finished_run), "it is a home folder"
    else:
        monkeypatch.setenv("HOME", str(finished_run))
        out, why = str(finished_run.parent), f"it holds a home folder ({finished_run})"
    before = tree(finished_run)
    assert main(["train", str(CONFIG), *TINY, "--out", out, "--overwrite", "--no-progress"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"parlour train: --overwrite: refusing to delete {out}: {why}"
    )
    assert tree(finished_run) == before


def test_overwrite_replaces_a_run_folder_it_made(finished_run: Path) -> None:
    first = json.loads((finished_run / RUN_MARKER).read_text())["run_id"]
    assert train(finished_run, "train.total_timesteps=128", "--overwrite") == 0
    assert json.loads((finished_run / RUN_MARKER).read_text())["run_id"] != first
    assert len((finished_run / "command.txt").read_text().splitlines()) == 1


# ----------------------------------------------------------------------------------------------- no pickle, no code
class WritesAFile:
    def __init__(self, target: Path) -> None:
        self.target = target

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.write_text, (self.target, "pwned"))


@pytest.fixture
def stopped_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    run = tmp_path / "run"
    assert train(run, "train.total_timesteps=1024", f"opponents=[{stopper_at(tmp_path, monkeypatch, 300)}]") == 130
    assert checkpoint_step(run)
    return run


def test_resume_never_unpickles_a_handed_over_checkpoint(
    stopped_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The folder as an earlier Parlour wrote it, with a crafted SB3 zip as its checkpoint.
    import shutil
    import zipfile

    target = tmp_path / "written_by_the_pickle.txt"
    shutil.rmtree(stopped_run / "checkpoints" / "latest")
    payload = base64.b64encode(pickle.dumps(WritesAFile(target))).decode()
    with zipfile.ZipFile(stopped_run / "checkpoints" / "latest.zip", "w") as zf:
        zf.writestr("data", json.dumps({"policy_class": {":type:": "<class 'x'>", ":serialized:": payload}}))
        zf.writestr("policy.pth", pickle.dumps(WritesAFile(target)))
        zf.writestr("parlour.json", json.dumps({"timesteps": 256}))
    before = tree(stopped_run)
    capsys.readouterr()
    assert main(["train", "--resume", "--out", str(stopped_run), "--trust", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert "an SB3 zip written by an earlier Parlour: loading it unpickles it" in err and "--trust-pickle" in err
    assert not target.exists() and tree(stopped_run) == before


@pytest.mark.parametrize(
    ("edit", "message", "flag"),
    [
        ("trust_pickle: false", "sets trust_pickle: true, which a run folder cannot grant itself", "--trust-pickle"),
        ("opponents:\n- stopper_300:Interrupter", "is a policy spec that imports code (module:NAME or file.py:NAME)",
         "or pass --trust"),
    ],
)  # fmt: skip
def test_a_run_folders_config_cannot_grant_itself_trust(
    edit: str, message: str, flag: str, stopped_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evil = tmp_path / "evil.py"
    target = tmp_path / "written_by_the_module.txt"
    evil.write_text(f"from pathlib import Path\nPath({str(target)!r}).write_text('pwned')\nX = 1\n")
    config = stopped_run / "config.yaml"
    text = config.read_text()
    assert edit in text
    replacement = "trust_pickle: true" if "trust" in edit else f"opponents:\n- {evil}:X"
    config.write_text(text.replace(edit, replacement))
    before = tree(stopped_run)
    capsys.readouterr()
    assert main(["train", "--resume", "--out", str(stopped_run), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and flag in err, err
    assert not target.exists() and tree(stopped_run) == before


def test_a_checkpoint_that_does_not_fit_is_refused_in_one_line(
    stopped_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = stopped_run / "checkpoints" / "latest" / "state.json"
    tree_ = json.loads(state.read_text())
    tree_["policy"] = {"mlp_extractor.policy_net.0.weight": {"__tensor__": "missing"}}
    state.write_text(json.dumps(tree_))
    capsys.readouterr()
    assert main(["train", "--resume", "--out", str(stopped_run), "--trust", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("state.json: refers to an array 'missing' that the tensors file lacks"), err
    tree_["policy"] = {}
    state.write_text(json.dumps(tree_))
    assert main(["train", "--resume", "--out", str(stopped_run), "--trust", "--no-progress"]) == 2
    assert "this checkpoint does not fit the run's network (" in capsys.readouterr().err


@pytest.mark.parametrize("spec", ["os:abort", "os:getcwd", "sys:exit"])
def test_a_config_naming_a_function_that_is_not_a_policy_is_refused_without_calling_it(
    spec: str, tmp_path: Path
) -> None:
    parlour = Path(sys.executable).parent / "parlour"
    run = tmp_path / "run"
    cmd = [str(parlour), "train", str(CONFIG), *TINY, f"opponents=[{spec}]", "--out", str(run), "--no-progress"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 2, done.stderr  # os:abort was called as a factory before: exit 134
    assert done.stderr.count("\n") == 1 and f"opponents: policy {spec!r}" in done.stderr
    assert not run.exists()


# ----------------------------------------------------------------------------------------------- every stop keeps its work
def test_a_stop_while_the_teacher_plays_keeps_its_games_and_resumes_to_the_same_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = ["train.total_timesteps=128", *PRETRAIN]
    whole = tmp_path / "whole"
    assert train(whole, *steps, f"pretrain.teacher={stopper_at(tmp_path, monkeypatch, 10**9)}") == 0
    run = tmp_path / "stopped"
    assert train(run, *steps, f"pretrain.teacher={stopper_at(tmp_path, monkeypatch, 40)}") == 130
    err = capsys.readouterr().err
    line = err.strip().splitlines()[-1]
    assert line.startswith("parlour train: stopped by SIGINT during behaviour cloning (")
    assert "teacher games played); they are saved in" in line and "Traceback" not in err
    assert (run / "config.yaml").is_file() and not (run / "pretrain.json").exists()
    assert main(resume_args(err)) == 0  # the printed line works
    # the same teacher games, the same cloned network, the same PPO: as if it had never stopped
    ours, theirs = (json.loads((r / "pretrain.json").read_text()) for r in (run, whole))
    same = ("games", "decisions", "nll", "accuracy", "value_rmse")
    assert {k: ours[k] for k in same} == {k: theirs[k] for k in same}
    assert digest(run / "policy.safetensors") == digest(whole / "policy.safetensors")


def test_a_stop_while_cloning_keeps_the_epochs_done_and_resumes_to_the_same_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import parlour.training.pretrain as pretrain

    steps = ["train.total_timesteps=128", *PRETRAIN, "pretrain.teacher=six_suspects_heuristic"]
    whole = tmp_path / "whole"
    assert train(whole, *steps) == 0
    clone = pretrain.behaviour_clone

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        keep = kwargs["on_epoch"]

        def on_epoch(epoch: int, *more: Any) -> None:
            keep(epoch, *more)
            if epoch == 2:
                os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C in the third epoch

        return clone(*args, **{**kwargs, "on_epoch": on_epoch})

    monkeypatch.setattr(pretrain, "behaviour_clone", interrupted)
    run = tmp_path / "stopped"
    assert train(run, *steps) == 130
    err = capsys.readouterr().err
    assert "stopped by SIGINT during behaviour cloning (epoch 2 of 4 done)" in err
    monkeypatch.setattr(pretrain, "behaviour_clone", clone)
    assert main(resume_args(err)) == 0
    ours, theirs = (json.loads((r / "pretrain.json").read_text()) for r in (run, whole))
    assert {k: v for k, v in ours.items() if k != "seconds"} == {k: v for k, v in theirs.items() if k != "seconds"}
    assert digest(run / "policy.safetensors") == digest(whole / "policy.safetensors")
    assert not (run / "checkpoints" / "pretrain_data").exists()  # kept in the PPO checkpoint once PPO started


def _moves_at_step_0(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *overrides: str) -> int:
    """The moves an evaluation opponent makes in a run's evaluation at step 0 (rebuilt from its config alone)."""
    from parlour.training.config import load_config, to_yaml
    from parlour.training.publish.initial_point import initial_point

    counter = stopper_at(tmp_path, monkeypatch, 0)  # counts its moves, never fires
    folder = tmp_path / "counted"
    folder.mkdir()
    cfg = load_config(CONFIG, [*TINY, "opponents=[random]", *overrides, f"eval.opponents=[{counter}]"])
    (folder / "config.yaml").write_text(to_yaml(cfg))
    initial_point(folder, trust=True)
    return int(sys.modules[counter.split(":")[0]].Interrupter.calls)


@pytest.mark.parametrize(
    ("phase", "step"), [("step-0 evaluation", 0), ("periodic evaluation", 128), ("final evaluation", 256)]
)
def test_a_stop_in_an_evaluation_leaves_a_run_that_resumes_to_the_end(
    phase: str, step: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    periodic = ["train.eval_every=128", "eval.periodic_games=2"] if phase != "final evaluation" else []
    # the stop comes at the opponent's 5th move of the evaluation at ``step``: past its moves at step 0 for 128
    calls = 5 + (_moves_at_step_0(tmp_path, monkeypatch, *periodic) if phase == "periodic evaluation" else 0)
    assert (
        train(
            run, "train.total_timesteps=256", *periodic, f"eval.opponents=[{stopper_at(tmp_path, monkeypatch, calls)}]"
        )
        == 130
    )
    err = capsys.readouterr().err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    if phase != "final evaluation":
        assert last.startswith(f"parlour train: stopped by SIGINT at step {step} of 256; checkpoint saved to")
    else:
        assert last.startswith("parlour train: interrupted; the run continues from its checkpoint at step 256 with:")
    assert main(resume_args(err)) == 0
    assert json.loads((run / "metrics.json").read_text())["finished"] is True
    if phase != "final evaluation":
        # the evaluation the stop came in finished first, and the resume does not do it again: every point once
        assert [r["timesteps"] for r in evaluations(run)] == [0, 128, 256]


def test_a_stop_at_start_up_says_nothing_was_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    name = _module(
        tmp_path, monkeypatch, "stops_on_import", "import os, signal\nos.kill(os.getpid(), signal.SIGINT)\nX = 1\n"
    )
    run = tmp_path / "run"
    assert train(run, f"opponents=[{name}:X]") == 130
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "parlour train: interrupted before the run folder was made; nothing was kept"
    )
    assert not run.exists()


# ----------------------------------------------------------------------------------------------- files and locks
def test_a_second_process_on_a_run_folder_is_refused_naming_the_holder(
    stopped_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # another process holds the lock (flock locks belong to an open file: this one stands for that process)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from parlour.envs.fileio import FolderLock; "
            f"FolderLock({str(stopped_run)!r}).acquire(); print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        capsys.readouterr()
        assert main(["train", "--resume", "--out", str(stopped_run), "--trust", "--no-progress"]) == 2
        assert (
            capsys.readouterr()
            .err.strip()
            .endswith(f"run folder {stopped_run} is in use by another process (pid {holder.pid}); wait for it to end")
        )
    finally:
        holder.kill()
        holder.wait()
    with FolderLock(stopped_run):  # the holder's end freed it
        pass


@pytest.mark.parametrize("planted", ["command.txt", "evaluations.jsonl"])
def test_logs_are_never_written_through_a_planted_link(
    planted: str, stopped_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = stopped_run / planted
    link.unlink(missing_ok=True)
    link.symlink_to(victim)
    code = main(["train", "--resume", "--out", str(stopped_run), "--trust", "train.eval_every=128", "--no-progress"])
    assert code == 2
    assert f"{link} is a symbolic link; refusing to write through it" in capsys.readouterr().err
    assert victim.read_text() == "precious"


def test_temporary_files_have_unique_names_and_links_are_replaced_not_followed(tmp_path: Path) -> None:
    from parlour.envs.fileio import atomic_write

    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    target = tmp_path / "out.json"
    for fixed in (".out.json.tmp", "out.json.tmp"):  # the fixed names of the writers before
        (tmp_path / fixed).symlink_to(victim)
    atomic_write(target, "{}")
    target.unlink()
    target.symlink_to(victim)  # a link at the target itself
    atomic_write(target, "{}")
    assert victim.read_text() == "precious" and not target.is_symlink() and target.read_text() == "{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.json.tmp", "out.json", "out.json.tmp", "victim.txt"]


# ----------------------------------------------------------------------------------------------- one-line errors
@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("train.total_timesteps=1e30", "train.total_timesteps=1e+30 is out of range: expected an integer of at most"),
        ("train.total_timesteps=100000000000000000000", "train.total_timesteps=100000000000000000000 is out of range"),
        ("ppo.net_arch=[100000,100000]", "ppo.net_arch=[100000, 100000] with ppo.n_steps=64 and train.n_envs=2 needs"),
        ("seed=-1", "seed=-1 is out of range"),
    ],
)
def test_budgets_the_machine_cannot_hold_are_refused_in_one_line(
    override: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert train(tmp_path / "run", override) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err
    assert not (tmp_path / "run").exists()


def test_a_broken_metrics_file_is_named(stopped_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (stopped_run / "metrics.json").write_text("{not json")
    capsys.readouterr()
    assert main(["train", "--resume", "--out", str(stopped_run), "--trust", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines()[-1].startswith(f"parlour train: {stopped_run / 'metrics.json'} is not a valid metrics file")


def test_overrides_may_come_after_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    argv = ["train", str(CONFIG), "--out", str(run), *TINY, "--no-progress", "train.total_timesteps=128"]
    assert main(argv) == 0
    assert json.loads((run / "metrics.json").read_text())["timesteps"] == 128
    with pytest.raises(SystemExit):
        main(["train", str(CONFIG), "--out", str(run), "--bogus"])
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err


def test_evaluations_fall_on_the_multiples_of_eval_every_across_a_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run stopped between two evaluation points and resumed evaluates at the same steps as one that never
    stopped, so the seeds of a learning curve share their points."""
    run = tmp_path / "run"
    # the points (every 192 steps) fall inside rollouts (128 steps), where a run never stops
    periodic = ["train.total_timesteps=512", "train.eval_every=192", "eval.periodic_games=1"]
    assert train(run, *periodic, f"opponents=[{stopper_at(tmp_path, monkeypatch, 450)}]") == 130
    stopped = checkpoint_step(run)
    assert stopped is not None and 192 < stopped < 384  # between two points
    assert main(resume_args(capsys.readouterr().err)) == 0
    assert [r["timesteps"] for r in evaluations(run)] == [0, 192, 384]
