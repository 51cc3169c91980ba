"""``python -m parlour.training.gpu_run`` (issue 39, item 8), kept tested on the CPU with tiny batches.

The GPU figures come from running it on a GPU; here every session runs on JAX's CPU backend, so the tests check the
command's shape: one table row per batch size with positive rates, the same figures in ``gpu_run.json``, the CPU
note, ``--time-limit`` and one-line refusals. Each batch size compiles the trainer once (about 15-25 s on a busy
2-core machine), so the runs are in the slow tier, and share one run of two sizes and its compilations.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from parlour.training import gpu_run

TINY = [
    "--config",
    "configs/six_suspects/rl.yaml",
    "--updates",
    "2",
    "--n-steps",
    "8",
    "--set",
    "ppo.net_arch=[16]",
    "--set",
    "ppo.batch_size=64",
    "--set",
    "ppo.n_epochs=1",
    "--set",
    "game.num_players=3",
]
ROW = re.compile(r"^\| (cpu[^|]*) \| ([\d,]+) \| ([\d.,]+) \| ([\d,]+) \| ([\d,]+) \| ([\d.,]+) \|$")


def _rows(text: str) -> list[tuple[str, ...]]:
    return [m.groups() for line in text.splitlines() if (m := ROW.match(line))]


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    pytest.importorskip("jax")
    code = gpu_run.main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _same_figures(md_row: tuple[str, ...], json_row: dict[str, Any]) -> None:
    """A table row prints the JSON row's figures, rounded as the table rounds them."""
    backend, n_envs, first, steady, whole, wall = md_row
    assert backend.strip() == json_row["backend"] == "cpu"
    assert int(n_envs.replace(",", "")) == json_row["n_envs"]
    assert first == f"{json_row['first_update_seconds']:,.1f}"
    assert steady == f"{json_row['steady_steps_per_second']:,.0f}"
    assert whole == f"{json_row['steps_per_second']:,.0f}"
    assert wall == f"{json_row['wall_seconds']:,.1f}"
    assert json_row["steady_steps_per_second"] > 0 and json_row["steps_per_second"] > 0
    assert json_row["first_update_seconds"] > 0 and json_row["wall_seconds"] > 0


def test_an_unknown_batch_size_is_refused_in_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for bad in ("8,x", "8,0", ""):
        code = gpu_run.main(["--batches", bad, "--out", str(tmp_path / "out")])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and "--batches" in err, err
    code = gpu_run.main(["--batches", "8", "--time-limit", "soon", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--time-limit" in err
    assert not (tmp_path / "out").exists()  # refused before anything is written


def test_each_size_runs_the_same_number_of_updates_with_minibatches_grown_with_it() -> None:
    overrides = gpu_run.overrides_for(4096, 20, 16, 8, 0, [])
    assert "train.n_envs=4096" in overrides and "trainer=jax" in overrides
    assert f"train.total_timesteps={4096 * 16 * 20}" in overrides and "ppo.n_steps=16" in overrides
    assert f"ppo.batch_size={4096 * 16 // 8}" in overrides and "train.eval_every=0" in overrides
    with_eval = gpu_run.overrides_for(8, 2, 8, 1, 64, ["random", "six_suspects_heuristic"])
    assert "train.eval_backend=jax" in with_eval and "eval.opponents=[random,six_suspects_heuristic]" in with_eval


@pytest.fixture(scope="module")
def two_sizes(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, Path]:
    pytest.importorskip("jax")
    import contextlib
    import io

    out = tmp_path_factory.mktemp("gpu_run")
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = gpu_run.main([*TINY, "--batches", "8,16", "--eval-every", "64", "--out", str(out)])
    return code, buffer.getvalue(), out


@pytest.mark.slow
def test_one_row_per_batch_size_with_positive_rates(two_sizes: tuple[int, str, Path]) -> None:
    code, out, folder = two_sizes
    assert code == 0, out
    printed = _rows(out)
    # each row as it finishes, then the whole table again
    assert [int(r[1]) for r in printed] == [8, 16, 8, 16]
    report = json.loads((folder / "gpu_run.json").read_text())
    md_rows = _rows((folder / "gpu_run.md").read_text())
    assert len(md_rows) == len(report["rows"]) == 2
    for md_row, json_row in zip(md_rows, report["rows"], strict=True):
        _same_figures(md_row, json_row)
    assert report["command"] in out and report["command"].startswith("python -m parlour.training.gpu_run --config")


@pytest.mark.slow
def test_eval_every_plays_the_curve_on_the_jax_core(two_sizes: tuple[int, str, Path]) -> None:
    code, out, folder = two_sizes
    assert code == 0, out
    report = json.loads((folder / "gpu_run.json").read_text())
    for row in report["rows"]:
        curve = row["curve"]
        assert curve and all(point["backend"] == "jax" for point in curve)
        assert curve[0]["timesteps"] == 0 and "six_suspects_expert" not in curve[0]  # the expert has no batched bot
    assert "vs random" in out  # the points are printed as the run goes


@pytest.mark.slow
def test_time_limit_0_stops_after_the_first_size_and_says_so(
    two_sizes: tuple[int, str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # after the two sizes' run: its compilation of n_envs=8 is reused (the same network and batch)
    code, out, _ = _run([*TINY, "--batches", "8,16", "--time-limit", "0", "--out", str(tmp_path)], capsys)
    assert code == 0, out
    notes = [line for line in out.splitlines() if line.startswith("gpu_run: --time-limit")]
    assert len(notes) == 1 and "not started: 16" in notes[0]
    assert sum("CPU figures" in line for line in out.splitlines() if line.startswith("gpu_run:")) == 1
    report = json.loads((tmp_path / "gpu_run.json").read_text())
    assert [r["n_envs"] for r in report["rows"]] == [8] and report["backend"] == "cpu"
    md = (tmp_path / "gpu_run.md").read_text()
    assert md.startswith(gpu_run.HEADER) and "python -m parlour.training.gpu_run" in md
    (row,) = _rows(md)
    _same_figures(row, report["rows"][0])
    assert (tmp_path / "8" / "metrics.json").is_file() and not (tmp_path / "16").exists()


def test_without_jax_it_says_what_to_install(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "jax", None)  # `import jax` raises ImportError
    code = gpu_run.main(["--batches", "8", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "pip install 'parlour[jax]'" in err and 'pip install -U "jax[cuda12]"' in err
    assert not (tmp_path / "out").exists()
