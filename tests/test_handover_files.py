"""Issue 37: a handed-over run folder runs nothing and reaches nowhere; bad input gets one clear error, nothing is lost.

Each probe below failed on the Parlour before these checks: a checkpoint folder missing a file was taken for no
checkpoint (``--resume`` trained from step 0 over it); a crafted tensors file loaded any dtype (tracebacks later, or
a random state silently converted); a full disk was a raw ``SafetensorError`` traceback; the checkpoint's tensors
were written 0600; ``parlour bench --seconds -1`` divided by zero; and ``parlour bench --train`` started its runs
with ``python -m``, which put the current folder first on ``sys.path`` (a stray ``omegaconf.py`` there ran), as did
the resume line the commands print.
"""

from __future__ import annotations

import errno
import json
import os
import random
import shlex
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from parlour.training import checkpoints
from parlour.training.checkpoints import (
    CheckpointError,
    is_checkpoint,
    read_checkpoint,
    rng_state,
    set_rng_state,
    write_checkpoint,
)
from parlour.training.cli import main

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

CLI_MAIN = Path(checkpoints.__file__).resolve().parent / "cli" / "__main__.py"
CONFIG = Path(__file__).resolve().parent / "data" / "six_suspects_base.yaml"


def _one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


def _state() -> dict[str, Any]:
    return {"weights": torch.ones(3), "moments": np.arange(4, dtype=np.float32), "rng": rng_state(), "step": 7}


def _checkpoint(tmp_path: Path, name: str = "latest") -> Path:
    return write_checkpoint(tmp_path / "checkpoints" / name, {"timesteps": 7}, _state())


# ----------------------------------------------------------------------------------------- 1. damaged, never none
@pytest.mark.parametrize(
    "missing",
    [["state.json"], ["tensors.safetensors"], ["parlour.json"], ["state.json", "tensors.safetensors"]],
)
def test_a_checkpoint_missing_a_file_is_refused_naming_the_folder_and_the_files(
    tmp_path: Path, missing: list[str]
) -> None:
    assert is_checkpoint(tmp_path / "absent") is False  # no checkpoint: no folder, or an empty one
    (tmp_path / "empty").mkdir()
    assert is_checkpoint(tmp_path / "empty") is False
    folder = _checkpoint(tmp_path)
    assert is_checkpoint(folder) is True
    for name in missing:
        (folder / name).unlink()
    with pytest.raises(CheckpointError) as info:
        is_checkpoint(folder)
    line = _one_line(str(info.value))
    assert str(folder) in line and "damaged" in line
    assert all(name in line for name in missing)


@pytest.mark.parametrize(
    ("plant", "words"),
    [
        (lambda folder: folder.write_text("x"), "is a file"),
        (lambda folder: folder.symlink_to(folder.parent / "nowhere"), "link to nothing"),
        # a write killed between its two renames: the last checkpoint is only beside the folder
        (lambda folder: os.replace(folder.parent / "kept", folder.parent / f".{folder.name}.123.old"), "rename it"),
    ],
)
def test_anything_else_where_a_checkpoint_goes_is_refused(
    tmp_path: Path, plant: Callable[[Path], Any], words: str
) -> None:
    _checkpoint(tmp_path, "kept")
    folder = tmp_path / "checkpoints" / "latest"
    plant(folder)
    with pytest.raises(CheckpointError, match=words):
        is_checkpoint(folder)


# ----------------------------------------------------------------------------------------- 2. crafted dtypes
def _safetensors(path: Path, tensors: dict[str, tuple[str, list[int], bytes]]) -> None:
    """A safetensors file written by hand, so that any dtype the format names can be planted."""
    header: dict[str, Any] = {}
    data, offset = b"", 0
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        data, offset = data + raw, offset + len(raw)
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)


@pytest.mark.parametrize(
    ("dtype", "raw", "words"),
    [
        ("BF16", b"\0" * 8, "plain numbers"),  # NumPy has no bfloat16: a TypeError from safetensors
        ("F8_E4M3", b"\0" * 4, "plain numbers"),  # nor float8: an AttributeError
        ("C64", b"\0" * 32, "not plain numbers"),  # complex: loads, then breaks whatever uses it
        ("F16", b"\0" * 8, "state.json records it as 'float32'"),  # a plain dtype, but not the one written
        ("I64", b"\0" * 32, "state.json records it as 'float32'"),  # an integer where a float was written
    ],
)
def test_an_array_of_another_dtype_than_written_is_refused_in_one_line(
    tmp_path: Path, dtype: str, raw: bytes, words: str
) -> None:
    folder = write_checkpoint(tmp_path / "ck", {"timesteps": 0}, {"x": np.zeros(4, np.float32)})
    _safetensors(folder / "tensors.safetensors", {"t0": (dtype, [4], raw)})
    with pytest.raises(CheckpointError) as info:
        read_checkpoint(folder)
    line = _one_line(str(info.value))
    assert line.startswith(str(folder / "tensors.safetensors")) and words in line


def test_a_torch_tensor_of_a_dtype_torch_lacks_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = write_checkpoint(tmp_path / "ck", {"timesteps": 0}, {"x": torch.zeros(2, dtype=torch.int16)})

    def old_torch(array: np.ndarray) -> Any:  # as torch before 2.3 answers a uint16 array
        raise TypeError(f"can't convert np.ndarray of type numpy.{array.dtype}")

    monkeypatch.setattr(torch, "from_numpy", old_torch)
    with pytest.raises(CheckpointError, match=r"'t0' of dtype int16 cannot be a torch tensor"):
        read_checkpoint(folder)


def test_a_torch_tensor_comes_back_of_the_dtype_it_was_written_with(tmp_path: Path) -> None:
    state = {name: torch.arange(3).to(dtype) for name, dtype in (("f", torch.float64), ("i", torch.int16))}
    _, back = read_checkpoint(write_checkpoint(tmp_path / "ck", {"timesteps": 0}, state))
    assert {k: v.dtype for k, v in back.items()} == {"f": torch.float64, "i": torch.int16}
    assert json.loads((tmp_path / "ck" / "state.json").read_text())["f"] == {
        "__tensor__": "t0",
        "dtype": "float64",
        "torch": True,
    }


def _with(path: tuple[str, int], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(state: dict[str, Any]) -> None:
        state[path[0]][path[1]] = value

    return change


def _torch_state(change: Callable[[Any], Any]) -> Callable[[dict[str, Any]], None]:
    def apply(state: dict[str, Any]) -> None:
        state["torch"] = change(state["torch"])

    return apply


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (_torch_state(lambda t: t.to(torch.float32)), "torch's state must be a 1-D uint8 array"),  # was cast back
        (_torch_state(lambda t: t.to(torch.int64)), "torch's state must be a 1-D uint8 array"),
        (_torch_state(lambda t: t[:-1]), "torch's state must be a 1-D uint8 array of shape"),  # after Python's was set
        (lambda s: s["numpy"].__setitem__(1, s["numpy"][1].astype(np.int64)), "numpy's keys"),  # was cast
        (lambda s: s["numpy"].__setitem__(1, s["numpy"][1].astype(np.float64)), "numpy's keys"),
        (_with(("numpy", 2), 625), "numpy's position"),  # was taken
        (_with(("python", 2), "x"), "gauss_next"),  # was taken, to fail at the next random.gauss
        (lambda s: s["python"][1].__setitem__(0, -1), "python's state"),  # was an OverflowError traceback
    ],
)
def test_a_random_state_of_the_wrong_dtype_or_shape_is_refused_naming_the_source(
    change: Callable[[dict[str, Any]], None], words: str
) -> None:
    state = rng_state()
    state["python"], state["numpy"] = list(state["python"]), list(state["numpy"])
    state["python"][1] = list(state["python"][1])
    change(state)
    random.random(), np.random.random(), torch.rand(1)  # the states move on: a restore would show
    before = random.getstate(), np.random.get_state()[1].copy(), torch.get_rng_state()
    with pytest.raises(CheckpointError) as info:
        set_rng_state(state, "RUN/checkpoints/latest/state.json")
    line = _one_line(str(info.value))
    assert line.startswith("RUN/checkpoints/latest/state.json: the random states cannot be restored") and words in line
    assert random.getstate() == before[0] and np.array_equal(np.random.get_state()[1], before[1])  # nothing changed
    assert torch.equal(torch.get_rng_state(), before[2])


# ----------------------------------------------------------------------------------------- 3. a full disk
FULL = 'Error while serializing: IoError(Os { code: 28, kind: StorageFull, message: "No space left on device" })'


def _safetensors_full(monkeypatch: pytest.MonkeyPatch) -> None:
    import safetensors.numpy
    from safetensors import SafetensorError

    def save_file(*args: Any, **kwargs: Any) -> None:
        raise SafetensorError(FULL)

    monkeypatch.setattr(safetensors.numpy, "save_file", save_file)


def _disk_full(monkeypatch: pytest.MonkeyPatch) -> None:
    def atomic_write(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(checkpoints, "atomic_write", atomic_write)


def _last_rename_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.replace

    def replace(src: Any, dst: Any) -> None:
        if str(src).endswith(".tmp"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)


@pytest.mark.parametrize("fail", [_safetensors_full, _disk_full, _last_rename_fails])
def test_a_full_disk_is_one_line_naming_the_folder_and_the_last_checkpoint_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail: Callable[[pytest.MonkeyPatch], None]
) -> None:
    folder = _checkpoint(tmp_path)
    fail(monkeypatch)
    with pytest.raises(CheckpointError) as info:
        write_checkpoint(folder, {"timesteps": 99}, {"weights": torch.zeros(3)})
    assert isinstance(info.value, OSError) and info.value.errno == errno.ENOSPC
    line = _one_line(str(info.value))
    assert line.startswith(f"cannot write the checkpoint {folder}: no space left on device")
    monkeypatch.undo()
    meta, state = read_checkpoint(folder)
    assert meta["timesteps"] == 7 and torch.equal(state["weights"], torch.ones(3))
    assert sorted(p.name for p in folder.parent.iterdir()) == ["latest"]  # no temporary folder left


# ----------------------------------------------------------------------------------------- 4. modes
def test_every_file_of_a_checkpoint_is_0644_like_the_rest_of_the_run_folder(tmp_path: Path) -> None:
    folder = _checkpoint(tmp_path)
    assert {p.name: oct(p.stat().st_mode & 0o777) for p in folder.iterdir()} == {
        name: "0o644" for name in ("parlour.json", "state.json", "tensors.safetensors")
    }
    assert oct(folder.stat().st_mode & 0o777) == "0o755"


# ----------------------------------------------------------------------------------------- 5. parlour bench's numbers
@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["--seconds", "-1"], "--seconds -1 is out of range: expected a number > 0"),  # was a ZeroDivisionError
        (["--seconds", "0"], "--seconds 0 is out of range: expected a number > 0"),
        (["--seconds", "nan"], "--seconds nan is out of range: expected a finite number > 0"),
        (["--seconds", "inf"], "--seconds inf is out of range: expected a finite number > 0"),
        (["--seconds", "abc"], "--seconds abc is not a number"),  # was argparse's usage and error
        (["--steps", "0"], "--steps 0 is out of range: expected an integer >= 1"),
        (["--games", "0"], "--games 0 is out of range: expected an integer >= 1"),
        (["--repeats", "0"], "--repeats 0 is out of range: expected an integer >= 1"),
        (["--beside", "-1"], "--beside -1 is out of range: expected an integer in [0, 1024]"),
        (["--beside", "100000"], "--beside 100000 is out of range: expected an integer in [0, 1024]"),
        (["--max-seconds", "-1"], "--max-seconds -1 is out of range: expected a number > 0"),
        (["--threads", "0"], "--threads '0': expected positive learner thread counts, e.g. 1,2"),
        (["--threads", "1,x"], "--threads '1,x': expected positive learner thread counts, e.g. 1,2"),
        (["--eval-workers", "0"], "--eval-workers '0': expected positive worker counts, e.g. 1,2"),
        (["--players", "0"], "--players 0 is out of range: expected an integer >= 1"),
        (["six_suspects_v0", "--players", "1", "--seconds", "0.01"], "num_players=1 is out of range"),
    ],
)
def test_parlour_bench_bounds_every_number_in_one_line(
    argv: list[str], line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", *argv]) == 2
    err = _one_line(capsys.readouterr().err)
    assert err.startswith("parlour bench: ") and line in err


def test_parlour_bench_measures_at_least_one_game_however_short_the_time() -> None:
    from parlour.training.bench import format_bench, run_bench

    rows = run_bench(["six_suspects_v0"], None, 1e-12)  # was 0 steps, then a division by 0
    assert all(r["steps_per_s"] > 0 for r in rows if "missing" not in r)
    assert "six_suspects_v0" in format_bench(rows)


# ----------------------------------------------------------------------------------------- 6. the current folder
#: Modules the command line imports, planted in the folder a command starts in: each leaves a marker if it runs.
POISONED = ("omegaconf", "numpy", "yaml", "gymnasium", "pettingzoo", "parlour")


def _poison(folder: Path) -> Path:
    marker = folder / "RAN"
    for name in POISONED:
        (folder / f"{name}.py").write_text(
            f"import pathlib\npathlib.Path({str(marker)!r}).write_text({name!r})\nraise ImportError('planted')\n"
        )
    return marker


@pytest.mark.parametrize("version", [(3, 10), (3, 11)])
def test_the_bench_starts_parlour_without_the_current_folder_on_sys_path(
    tmp_path: Path, version: tuple[int, int]
) -> None:
    from parlour.envs.core import package_version
    from parlour.training.shared_bench import parlour_command

    if version >= (3, 11) and sys.version_info < (3, 11):
        pytest.skip("-P is Python 3.11's")
    marker = _poison(tmp_path)
    done = subprocess.run(
        [*parlour_command(version), "--version"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert not marker.exists(), f"{marker.read_text()}.py in the current folder ran"
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"parlour {package_version()}"


def _script() -> Path:
    script = Path(sys.executable).parent / "parlour"
    if not script.is_file():
        pytest.skip("no parlour script beside this Python")
    return script


@pytest.mark.parametrize("ran", [str(CLI_MAIN), "/usr/lib/python3/pytest"])  # python -m ..., or embedded
def test_the_resume_line_names_the_parlour_script_never_python_dash_m(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, ran: str
) -> None:
    from parlour.training.cli.common import executable

    script = _script()
    monkeypatch.setattr(sys, "argv", [ran])
    monkeypatch.setenv("PATH", "")
    assert executable() == shlex.quote(str(script))  # the full path: no parlour on the PATH
    monkeypatch.setenv("PATH", str(script.parent))
    assert executable() == "parlour"  # the PATH finds this environment's
    other = tmp_path / "bin"
    other.mkdir()
    (other / "parlour").write_text("#!/bin/sh\n")
    (other / "parlour").chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(other), str(script.parent)]))
    assert executable() == shlex.quote(str(script))  # the PATH finds another install's: this one's, by path


def test_the_resume_line_works_from_a_folder_with_planted_modules(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from parlour.envs.core import package_version
    from parlour.training.cli.common import executable

    _script()
    monkeypatch.setattr(sys, "argv", [str(CLI_MAIN)])
    monkeypatch.setenv("PATH", "")
    marker = _poison(tmp_path)
    done = subprocess.run(
        [*shlex.split(executable()), "--version"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert not marker.exists() and done.stdout.strip() == f"parlour {package_version()}", done.stderr


@pytest.mark.slow  # one real (tiny) training run: about 15 seconds
def test_parlour_bench_train_never_imports_the_current_folders_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "tiny.yaml"
    config.write_text(
        CONFIG.read_text()
        .replace("n_envs: 8", "n_envs: 2")
        .replace("n_steps: 512 ", "n_steps: 64 ")
        .replace("batch_size: 1024", "batch_size: 64")
        .replace("net_arch: [256, 256]", "net_arch: [16]")
    )
    cwd = tmp_path / "here"
    cwd.mkdir()
    marker = cwd / "RAN"
    (cwd / "omegaconf.py").write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('omegaconf')\n")
    monkeypatch.chdir(cwd)
    assert main(["bench", "--train", str(config), "--steps", "128", "--threads", "1", "--beside", "1"]) == 0
    assert not marker.exists(), "omegaconf.py in the current folder ran"
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| config | 1 |")]
    assert len(rows) == 2, rows
    shutil.rmtree(cwd)
