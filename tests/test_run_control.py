"""Stopping, resuming and re-running `parlour train` as a user does: Ctrl-C and SIGTERM, --resume, the default
run folder, failed runs, and the messages of an install without the train extra."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

from parlour.training.cli import main  # noqa: E402
from parlour.training.train import checkpoint_step  # noqa: E402

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
        Interrupter.calls += 1
        if Interrupter.calls == {calls}:
            os.kill(os.getpid(), signal.SIGINT)
        return super().act(observation, action_mask, rng)

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
    assert 0 < stopped < 1024
    assert line == (
        f"parlour train: stopped by SIGINT at step {stopped:,} of 1,024; checkpoint saved to "
        f"{run / 'checkpoints' / 'latest'}; resume with: parlour train --resume --out {run}"
    )
    assert json.loads((run / "metrics.json").read_text())["timesteps"] == stopped
    assert not (run / "policy.json").exists()

    # Resume: no config, no overrides; it continues from the step where it stopped, toward the run's budget.
    assert main(["train", "--resume", "--out", str(run), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert f"resuming {run} from step {stopped:,} toward 1,024 steps, with the config it was started with" in err
    metrics = json.loads((run / "metrics.json").read_text())
    assert 1024 <= metrics["timesteps"] < 1024 + 128
    assert metrics["session_steps"] == metrics["timesteps"] - stopped
    assert (run / "policy.json").is_file() and (run / "final_eval.md").is_file()

    # Changing the run itself on resume is refused, naming what may change; the budget may be raised, recorded.
    assert main(["train", "--resume", "--out", str(run), "ppo.n_epochs=3", "--no-progress"]) == 2
    assert "these cannot change (ppo.n_epochs: started with 1, now 3)" in capsys.readouterr().err
    assert main(["train", "--resume", "--out", str(run), "train.total_timesteps=1200", "--no-progress"]) == 0
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
    assert last.endswith(f"resume with: {parlour} train --resume --out {run}")  # the executable the user ran
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
    assert [x.split(" (")[0] for x in lines] == ["evaluation at step 256", "evaluation at step 512"]
    rows = [json.loads(x) for x in (tmp_path / "r" / "evaluations.jsonl").read_text().splitlines()]
    r = rows[0]["random"]
    assert lines[0] == textwrap.dedent(
        f"evaluation at step 256 (4 games each): win rate vs random {r['win_rate']:.3f} "
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
    assert (
        table.splitlines()[-1]
        == f"| 1 | 1 | 128 | {rows[1]['train_seconds']:.0f} | {rows[1]['steps_per_s']:,.0f} | {ratio:.2f} |"
    )
