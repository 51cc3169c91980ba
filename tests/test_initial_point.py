"""The step-0 point of a learning curve: a fresh SB3 run evaluates its untrained policy before its first rollout
without changing what it trains, a resume does not evaluate it again, and a run trained without one gets the same
row rebuilt from its folder (``parlour.training.publish.initial_point``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sb3_contrib")

from safetensors.numpy import load_file  # noqa: E402

from parlour.training.config import load_config, to_yaml  # noqa: E402
from parlour.training.publish.initial_point import add_initial_point, initial_point, main  # noqa: E402
from parlour.training.run import RunError, evaluations  # noqa: E402
from parlour.training.train import train

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "tests" / "data" / "six_suspects_base.yaml"
#: 256 steps in rollouts of 128 (2 envs × 64), evaluations every 128 steps on two deals against random. The learner
#: samples its moves (``learner.deterministic=false``), so an evaluation draws from torch's random state: the rows
#: (their mean rewards above all) and the training after them show whether those draws are kept apart.
TINY = (
    "train.total_timesteps=256",
    "train.n_envs=2",
    "ppo.n_steps=64",
    "ppo.batch_size=64",
    "ppo.n_epochs=1",
    "ppo.net_arch=[8]",
    "train.checkpoint_every=128",
    "train.eval_every=128",
    "eval.periodic_games=2",
    "eval.games=1",
    "eval.opponents=[random]",
    "eval.reference=[]",
    "opponents=[random]",
    "learner.deterministic=false",
)


def _train(run: Path, *more: str) -> dict[str, Any]:
    return train(load_config(CONFIG, [*TINY, *more]), run, progress=False, final_eval=False)


def _rows(run: Path) -> list[dict[str, Any]]:
    """The periodic evaluations without their wall-clock time."""
    return [{k: v for k, v in r.items() if k != "time"} for r in evaluations(run)]


def _without_step_0(run: Path, to: Path) -> Path:
    """A copy of ``run`` as a run trained before step 0 was evaluated: no step-0 row."""
    shutil.copytree(run, to)
    lines = (to / "evaluations.jsonl").read_text().splitlines()
    (to / "evaluations.jsonl").write_text("".join(f"{x}\n" for x in lines if json.loads(x)["timesteps"] != 0))
    return to


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("fresh") / "run"
    _train(run)
    return run


def test_a_fresh_run_evaluates_step_0_and_a_resume_does_not_again(fresh: Path, tmp_path: Path) -> None:
    assert [r["timesteps"] for r in evaluations(fresh)] == [0, 128, 256]
    # the run's budget raised: it continues from 256 with the point at 0 kept once
    run = shutil.copytree(fresh, tmp_path / "run")
    train(load_config(CONFIG, [*TINY, "train.total_timesteps=384"]), run, resume=True, progress=False, final_eval=False)
    assert [r["timesteps"] for r in evaluations(run)] == [0, 128, 256, 384]


def test_a_resume_at_step_0_keeps_the_step_0_row_its_first_session_wrote(fresh: Path, tmp_path: Path) -> None:
    # a session that wrote the step-0 row and died before its first checkpoint: the resume starts again from step 0
    run = tmp_path / "run"
    shutil.copytree(fresh, run)
    shutil.rmtree(run / "checkpoints")
    (run / "metrics.json").unlink()
    lines = (run / "evaluations.jsonl").read_text().splitlines()
    (run / "evaluations.jsonl").write_text(lines[0] + "\n")
    train(load_config(CONFIG, list(TINY)), run, resume=True, progress=False, final_eval=False)
    assert _rows(run) == _rows(fresh)  # not evaluated again, and the run is the one that never died


def test_the_step_0_evaluation_leaves_the_training_as_it_was(fresh: Path, tmp_path: Path) -> None:
    # one run evaluates at step 0 only (its next point is past the budget), the other never: the same weights
    _train(once := tmp_path / "once", "train.eval_every=100000")
    _train(never := tmp_path / "never", "train.eval_every=0")
    assert [r["timesteps"] for r in evaluations(once)] == [0] and not evaluations(never)
    a, b = load_file(str(once / "policy.safetensors")), load_file(str(never / "policy.safetensors"))
    assert a.keys() == b.keys() and all((a[k] == b[k]).all() for k in a)
    assert _rows(once) == _rows(fresh)[:1]  # how often a run evaluates later does not change its step-0 point


def test_the_rebuilt_step_0_row_is_the_one_the_run_wrote(fresh: Path, tmp_path: Path) -> None:
    old = _without_step_0(fresh, tmp_path / "old")
    assert [r["timesteps"] for r in evaluations(old)] == [128, 256]
    assert {k: v for k, v in initial_point(old).items() if k != "time"} == _rows(fresh)[0]
    row = add_initial_point(old)
    assert row["timesteps"] == 0 and _rows(old) == _rows(fresh)  # at the head of the file, the others unchanged
    with pytest.raises(RunError, match="has a step-0 row already"):
        add_initial_point(old)


def test_the_command_adds_the_point_and_refuses_what_does_not_fit(
    fresh: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _without_step_0(fresh, tmp_path / "old")
    other = _without_step_0(fresh, tmp_path / "other")
    text = (other / "evaluations.jsonl").read_text().replace('"random"', '"six_suspects_heuristic"')
    (other / "evaluations.jsonl").write_text(text)  # rows of another curve than the config's
    assert main([str(old), str(other), str(fresh)]) == 1
    out, err = capsys.readouterr()
    assert out.startswith(f"{old}: evaluation at step 0 (2 deals × 4 seats = 8 games each)")
    assert _rows(old) == _rows(fresh)
    assert "{'six_suspects_heuristic': 8} (opponent: games), the run's config {'random': 8}" in err
    assert (other / "evaluations.jsonl").read_text() == text  # refused: unchanged
    assert "has a step-0 row already" in err
    with pytest.raises(RunError, match="holds no run"):
        add_initial_point(tmp_path / "nothing")
    assert not (tmp_path / "nothing").exists()


def test_a_run_that_imitated_a_teacher_starts_from_its_clone(tmp_path: Path) -> None:
    teacher = ("pretrain.teacher=six_suspects_heuristic", "pretrain.games=4", "pretrain.epochs=1")
    _train(run := tmp_path / "run", *teacher, "train.total_timesteps=128")
    other = _without_step_0(run, tmp_path / "other")
    assert initial_point(other) | {"time": 0} == evaluations(run)[0] | {"time": 0}
    (other / "clone.json").unlink()
    with pytest.raises(RunError, match=r"its step-0 policy is the clone, and .*clone.json is missing"):
        initial_point(other)


def test_the_rllib_trainers_runs_are_refused(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text(to_yaml(load_config(ROOT / "configs" / "six_suspects" / "rllib.yaml")))
    with pytest.raises(RunError, match="trainer 'rllib' evaluates on its own cadence"):
        initial_point(run)
