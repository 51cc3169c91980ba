"""``trainer: jax``: a run stopped by a signal (at the next update boundary) or killed outright (a second Ctrl-C: from
its last periodic checkpoint) and then resumed equals the run that never stopped -- the same final training state
bit for bit, the same evaluations on the same steps, the checkpoints on the same steps -- and a checkpoint whose
arrays do not fit the run's state is refused in one line naming the file and the array."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

#: The whole file compiles the jitted trainer once (about 30 s of CPU): the slow tier, where the other trainers' exact
#: resumes are tested in the default one (tests/test_resume_equality.py).
pytestmark = pytest.mark.slow

pytest.importorskip("jax")
pytest.importorskip("optax")
pytest.importorskip("omegaconf")  # the train extra's parts a jax run uses (no torch: it is not imported)
pytest.importorskip("matplotlib")

from parlour.training import jax_ppo  # noqa: E402
from parlour.training import session as session_module  # noqa: E402
from parlour.training.checkpoints import read_checkpoint, write_checkpoint  # noqa: E402
from parlour.training.config import load_config  # noqa: E402
from parlour.training.run import RunError, TrainingStopped  # noqa: E402
from parlour.training.train import train  # noqa: E402

RL = Path(__file__).resolve().parents[1] / "configs" / "six_suspects" / "rl.yaml"
#: 1,024 steps in 8 updates of 128 (8 games × 16 steps) at tables of random or heuristic bots; checkpoints at 384 and
#: 768, evaluations (one deal against random) at 0, 256, 512, 768 and 1,024. Every run below shares one compilation
#: (configs equal but for their budget and cadence compile the same: see ``jax_ppo.PPO``), and so does
#: test_jax_training's ``JAX_TINY`` where it runs in the same process (the same network, batch and opponents).
TINY = (
    "trainer=jax",
    "train.total_timesteps=1024",
    "train.n_envs=8",
    "ppo.n_steps=16",
    "ppo.batch_size=64",
    "ppo.n_epochs=2",
    "ppo.net_arch=[16]",
    "train.checkpoint_every=384",
    "train.eval_every=256",
    "eval.periodic_games=1",
    "eval.opponents=[random]",
    "eval.reference=[]",
    "opponents=[random,six_suspects_heuristic]",
)


class _Session:
    """One ``train`` call, with an interruption at the ``at``-th update or evaluation of the session (``where``):
    ``how="signal"`` sends SIGINT to this process, as Ctrl-C does; ``how="kill"`` raises KeyboardInterrupt there, as a
    second Ctrl-C does (the run ends at once, saving nothing: it resumes from its last periodic checkpoint, like a
    killed one). Records the steps of the checkpoints it wrote."""

    def __init__(self, where: str = "", at: int = 0, how: str = "signal") -> None:
        self.where, self.at, self.how = where, at, how
        self.calls = {"update": 0, "evaluation": 0}
        self.saves: list[int] = []
        self.ended = ""

    def _hit(self, where: str) -> None:
        self.calls[where] += 1
        if where == self.where and self.calls[where] == self.at:
            if self.how == "signal":
                os.kill(os.getpid(), signal.SIGINT)
            else:
                raise KeyboardInterrupt

    def run(self, run: Path, resume: bool, monkeypatch: pytest.MonkeyPatch) -> None:
        session, init = self, jax_ppo.PPO.__init__

        def interrupted(ppo: jax_ppo.PPO, cfg: Any) -> None:
            # still a PPO (not a subclass): every run here shares the compilation of the first
            init(ppo, cfg)
            inner = ppo.update

            def update(state: Any) -> Any:
                session._hit("update")
                return inner(state)

            ppo.update = update

        evaluate, save = session_module.periodic_evaluation, jax_ppo._save

        def periodic_evaluation(*args: Any) -> Any:
            session._hit("evaluation")
            return evaluate(*args)

        def record_save(state: Any, run: Path, meta: Any, steps: int, marks: Any) -> Path:
            session.saves.append(steps)
            return save(state, run, meta, steps, marks)

        with monkeypatch.context() as m:
            m.setattr(jax_ppo.PPO, "__init__", interrupted)
            m.setattr(session_module, "periodic_evaluation", periodic_evaluation)
            m.setattr(jax_ppo, "_save", record_save)
            try:
                metrics = train(load_config(RL, list(TINY)), run, resume=resume, progress=False, final_eval=False)
                assert metrics["finished"] and metrics["timesteps"] == 1024
                self.ended = "finished"
            except TrainingStopped:
                self.ended = "stopped"
            except KeyboardInterrupt:
                if self.how != "kill":
                    raise  # a real Ctrl-C ends the tests
                self.ended = "killed"

    def periodic_saves(self) -> list[int]:
        """The periodic checkpoints' steps: every save but the one a session that ended (not killed) writes last."""
        return self.saves if self.ended == "killed" else self.saves[:-1]


def _final_state(run: Path) -> dict[str, Any]:
    """The final checkpoint's whole training state as bytes (parameters, optimizer, games, observations, key) and
    its cadence."""
    meta, tree = read_checkpoint(run / "checkpoints" / "latest")
    arrays = {k: (str(v.dtype), v.shape, v.tobytes()) for k, v in tree["state"].items()}
    return {"timesteps": meta["timesteps"], "state": arrays, "marks": tree["marks"]}


def _policy_tensors(run: Path) -> dict[str, bytes]:
    from safetensors.numpy import load_file

    return {k: v.tobytes() for k, v in load_file(str(run / "policy.safetensors")).items()}


def _evaluations(run: Path) -> list[dict[str, Any]]:
    """The periodic evaluations without their wall-clock time."""
    rows = [json.loads(line) for line in (run / "evaluations.jsonl").read_text().splitlines()]
    return [{k: v for k, v in row.items() if k != "time"} for row in rows]


@pytest.fixture(scope="module")
def straight(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, _Session]]:
    """The run that never stopped."""
    run = tmp_path_factory.mktemp("straight") / "run"
    session = _Session()
    with pytest.MonkeyPatch.context() as m:
        session.run(run, False, m)
    assert session.ended == "finished" and session.periodic_saves() == [384, 768]
    assert [r["timesteps"] for r in _evaluations(run)] == [0, 256, 512, 768, 1024]
    yield run, session


@pytest.mark.parametrize(
    ("where", "at", "how", "stopped_at", "rows_left"),
    [
        ("update", 5, "signal", 640, [0, 256, 512]),  # SIGINT during an update: it finishes, then checkpoint and stop
        ("evaluation", 3, "signal", 512, [0, 256, 512]),  # SIGINT during an evaluation: it finishes, then the stop
        ("evaluation", 1, "signal", 0, [0]),  # ... the one at step 0: the resume does not do it again
        ("update", 6, "kill", 384, [0, 256, 512]),  # killed after an evaluation past its last checkpoint: that goes
        ("evaluation", 4, "kill", 768, [0, 256, 512]),  # killed in the evaluation after a checkpoint: done again first
    ],
)  # fmt: skip
def test_a_stopped_or_killed_run_resumes_to_the_run_that_never_stopped(
    straight: tuple[Path, _Session],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    at: int,
    how: str,
    stopped_at: int,
    rows_left: list[int],
) -> None:
    reference, unstopped = straight
    run = tmp_path / "run"
    first = _Session(where, at, how)
    first.run(run, False, monkeypatch)
    assert first.ended == ("stopped" if how == "signal" else "killed")
    assert read_checkpoint(run / "checkpoints" / "latest")[0]["timesteps"] == stopped_at
    assert [r["timesteps"] for r in _evaluations(run)] == rows_left

    second = _Session()
    second.run(run, True, monkeypatch)
    assert second.ended == "finished"

    # the same training state bit for bit, the same evaluations and checkpoints on the same steps
    assert _final_state(run) == _final_state(reference)
    assert _policy_tensors(run) == _policy_tensors(reference)
    assert _evaluations(run) == _evaluations(reference)
    assert first.periodic_saves() + second.periodic_saves() == unstopped.periodic_saves()


@pytest.mark.parametrize(
    ("name", "change", "message"),
    [
        (".mask", lambda a: a.astype(np.int8), r"\.mask is int8 \[8, \d+\]; the run's state holds bool \[8, \d+\]"),
        (
            ".params['action_net.weight']",
            lambda a: a.T.copy(),
            r"\.params\['action_net\.weight'\] is float32 \[16, \d+\]; the run's state holds float32 \[\d+, 16\]",
        ),
        (".key", None, r"the checkpoint lacks the array \.key"),
    ],
)  # fmt: skip
def test_a_checkpoint_whose_arrays_do_not_fit_the_run_is_refused_in_one_line(
    straight: tuple[Path, _Session], tmp_path: Path, name: str, change: Any, message: str
) -> None:
    run = tmp_path / "run"
    shutil.copytree(straight[0], run)
    latest = run / "checkpoints" / "latest"
    meta, tree = read_checkpoint(latest)
    before = tree["state"].pop(name)
    if change is not None:
        tree["state"][name] = change(before)
    write_checkpoint(latest, meta, tree)
    more = load_config(RL, [*TINY, "train.total_timesteps=2048"])
    with pytest.raises(RunError) as refused:
        train(more, run, resume=True, progress=False, final_eval=False)
    text = str(refused.value)
    assert "\n" not in text and text.startswith(f"{latest / 'tensors.safetensors'}: ")
    assert re.search(message, text), text


def test_an_earlier_parlours_checkpoint_resumes_on_fresh_deals_saying_so(
    straight: tuple[Path, _Session], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A checkpoint of the layout before the whole state was saved (parameters, optimizer leaves, key) still
    resumes, its arrays checked the same way; it says that the games are dealt afresh (no longer the unstopped run)."""
    run = tmp_path / "run"
    shutil.copytree(straight[0], run)
    latest = run / "checkpoints" / "latest"
    meta, tree = read_checkpoint(latest)
    state = tree["state"]
    earlier = {
        "params": {k[len(".params['") : -2]: v for k, v in state.items() if k.startswith(".params[")},
        "opt_state": [v for k, v in state.items() if k.startswith(".opt_state")],
        "key": state[".key"],
    }
    write_checkpoint(latest, meta, earlier)
    metrics = train(
        load_config(RL, [*TINY, "train.total_timesteps=1280"]), run, resume=True, progress=False, final_eval=False
    )
    assert metrics["finished"] and metrics["timesteps"] == 1280 and metrics["session_steps"] == 256
    assert f"{latest} holds no games in progress (an earlier Parlour wrote it)" in capsys.readouterr().out
    assert [r["timesteps"] for r in _evaluations(run)] == [0, 256, 512, 768, 1024, 1280]
