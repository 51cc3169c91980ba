"""A stopped and resumed SB3 run equals one that never stopped: the same final weights bit for bit, the same periodic
evaluations, the same snapshots -- whether it stopped on a signal (at the next rollout's start) or died outright
(resumed from its last checkpoint, written between an update and the next rollout)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from safetensors.numpy import load_file  # noqa: E402

from parlour.training.cli import main  # noqa: E402
from parlour.training.run import checkpoint_step, evaluations  # noqa: E402

CONFIG = Path(__file__).resolve().parent / "data" / "six_suspects_base.yaml"
#: 128 steps a rollout (2 envs x 64); checkpoints every other rollout; evaluation points inside rollouts.
TINY = [
    "train.n_envs=2",
    "ppo.n_steps=64",
    "ppo.batch_size=64",
    "ppo.n_epochs=2",
    "ppo.net_arch=[16]",
    "train.total_timesteps=768",
    "train.checkpoint_every=256",
    "train.eval_every=192",
    "eval.periodic_games=1",
    "eval.games=1",
    "eval.opponents=[random]",
    "eval.reference=[]",
]

#: A random opponent that, at its ``CALLS``th move, sends SIGINT to its process (``Interrupter``) or ends the process
#: with no signal to catch (``Crasher``, standing in for kill -9); ``CALLS = 0`` never fires.
OPPONENT = """
import os, signal
from parlour.baselines.base import RandomPolicy

CALLS = {calls}

class Interrupter(RandomPolicy):
    name = "random"  # plays and is named as the random bot: the runs compared differ only in the stop
    calls = 0

    def act(self, observation, action_mask, rng):
        type(self).calls += 1
        if type(self).calls == CALLS:
            self.fire()
        return super().act(observation, action_mask, rng)

    def fire(self):
        os.kill(os.getpid(), signal.SIGINT)

class Crasher(Interrupter):
    calls = 0

    def fire(self):
        raise SystemExit("the machine went away")
"""


def _opponent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, calls: int) -> str:
    folder = tmp_path / "mods"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.py").write_text(OPPONENT.format(calls=calls))
    monkeypatch.syspath_prepend(str(folder))
    sys.modules.pop(name, None)
    return name


def _train(run: Path, opponents: str, *more: str) -> int:
    return main(["train", str(CONFIG), *TINY, f"opponents={opponents}", *more, "--out", str(run), "--no-progress"])


def _weights(run: Path) -> dict[str, np.ndarray]:
    return load_file(str(run / "policy.safetensors"))


def _rows(run: Path) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "time"} for r in evaluations(run)]


def _same_run(a: Path, b: Path) -> None:
    wa, wb = _weights(a), _weights(b)
    assert wa.keys() == wb.keys()
    for k in wa:
        np.testing.assert_array_equal(wa[k], wb[k], err_msg=k)
    assert _rows(a) == _rows(b)
    assert sorted(p.name for p in (a / "snapshots").glob("*")) == sorted(p.name for p in (b / "snapshots").glob("*"))
    for snap in (a / "snapshots").glob("*.safetensors"):
        for k, v in load_file(str(snap)).items():
            np.testing.assert_array_equal(v, load_file(str(b / "snapshots" / snap.name))[k])
    ma, mb = (json.loads((r / "metrics.json").read_text()) for r in (a, b))
    assert ma["timesteps"] == mb["timesteps"] == 768
    assert ma["final_eval"] == mb["final_eval"]


@pytest.mark.parametrize(
    ("pool", "kind", "calls"),
    [
        # Ctrl-C mid-rollout: the run stops at the next rollout's start
        pytest.param("[{m}:Interrupter]", "signal", 500, marks=pytest.mark.slow),
        ("[{m}:Crasher]", "crash", 1000),  # died outright: the resume starts from the last checkpoint
        ("[{m}:Interrupter,self]", "signal", 700),  # self-play: the snapshot pool and its cadence are restored
        # a snapshot written after the checkpoint, the pruned ones kept
        pytest.param("[{m}:Crasher,self]", "crash", 800, marks=pytest.mark.slow),
    ],
)
def test_a_stopped_and_resumed_run_equals_one_that_never_stopped(
    pool: str, kind: str, calls: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    extra = ["self_play.snapshot_every=160", "self_play.max_snapshots=2"] if "self" in pool else []
    whole, stopped = tmp_path / "whole", tmp_path / "stopped"
    assert _train(whole, pool.format(m=_opponent(tmp_path, monkeypatch, "never", 0)), *extra) == 0
    spec = pool.format(m=_opponent(tmp_path, monkeypatch, "fires", calls))
    if kind == "signal":
        assert _train(stopped, spec, *extra) == 130
    else:
        with pytest.raises(SystemExit, match="went away"):
            _train(stopped, spec, *extra)
    step = checkpoint_step(stopped)
    assert step is not None and 0 < step < 768 and step % 128 == 0  # a rollout boundary
    if kind == "signal":  # the stop waited for the rollout in progress: nothing was thrown away
        assert json.loads((stopped / "metrics.json").read_text())["timesteps"] == step
    capsys.readouterr()
    assert main(["train", "--resume", "--out", str(stopped), f"opponents={spec}", "--no-progress"]) == 0
    assert f"from step {step:,} toward 768 steps" in capsys.readouterr().err
    _same_run(whole, stopped)


@pytest.mark.slow
def test_a_finished_run_whose_budget_is_raised_continues_as_if_it_had_that_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The final checkpoint holds the games in progress too: raising the budget of a finished run continues it."""
    spec = f"[{_opponent(tmp_path, monkeypatch, 'plain', 0)}:Interrupter]"
    whole, raised = tmp_path / "whole", tmp_path / "raised"
    assert _train(whole, spec) == 0
    assert _train(raised, spec, "train.total_timesteps=384") == 0
    assert (
        main(["train", "--resume", "--out", str(raised), f"opponents={spec}", "train.total_timesteps=768",
              "--no-progress"]) == 0
    )  # fmt: skip
    wa, wb = _weights(whole), _weights(raised)
    for k in wa:
        np.testing.assert_array_equal(wa[k], wb[k], err_msg=k)
    assert _rows(whole) == _rows(raised)


@pytest.mark.slow
def test_a_run_on_the_jax_vector_env_resumes_as_if_it_never_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """``train.vec_env: jax``: the batch's whole state and key go into the checkpoint. The stop comes from an evaluation
    opponent (the training opponents are batched bots), during the evaluation at step 192, inside a rollout."""
    pytest.importorskip("jax")
    from parlour.training.publish.initial_point import initial_point

    jax_env = ["train.vec_env=jax", "opponents=[random]", "game.options.reward=vote"]
    whole, stopped = tmp_path / "whole", tmp_path / "stopped"
    never = f"eval.opponents=[{_opponent(tmp_path, monkeypatch, 'never_eval', 0)}:Interrupter]"
    assert main(["train", str(CONFIG), *TINY, *jax_env, never, "--out", str(whole), "--no-progress"]) == 0
    # the opponent's 5th move after those it makes in the evaluation at step 0 (rebuilt here, counting them)
    counter = sys.modules["never_eval"].Interrupter
    before = counter.calls
    initial_point(whole, trust=True)
    fires = f"eval.opponents=[{_opponent(tmp_path, monkeypatch, 'fires_eval', 5 + counter.calls - before)}:Interrupter]"
    assert main(["train", str(CONFIG), *TINY, *jax_env, fires, "--out", str(stopped), "--no-progress"]) == 130
    assert checkpoint_step(stopped) == 256  # the evaluation at 192 and the rollout to 256 finished first
    assert main(["train", "--resume", "--out", str(stopped), fires, "--no-progress"]) == 0
    wa, wb = _weights(whole), _weights(stopped)
    for k in wa:
        np.testing.assert_array_equal(wa[k], wb[k], err_msg=k)
    assert [list(r.values()) for r in _rows(whole)] == [list(r.values()) for r in _rows(stopped)]
