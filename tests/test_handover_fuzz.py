"""A standing fuzz of the handed-over run folder: every key of a run folder's ``config.yaml`` and of its checkpoint's
``parlour.json`` is set to hostile values (network addresses, importable names, Python files, counts out of range,
NaN, resolvers), and ``parlour train --resume`` must either run exactly the run that was checkpointed or refuse in
one line -- and never import, connect or delete.

The default suite tries every key with one hostile value (chosen round-robin); ``-m slow`` tries the other values."""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("sb3_contrib")

from parlour.training.cli import main  # noqa: E402

CONFIG = Path(__file__).resolve().parent / "data" / "six_suspects_base.yaml"
TINY = [
    "train.n_envs=2",
    "ppo.n_steps=64",
    "ppo.batch_size=64",
    "ppo.n_epochs=1",
    "ppo.net_arch=[16]",
    "train.total_timesteps=128",
    "train.checkpoint_every=128",
    "train.eval_every=0",
    "eval.games=1",
    "opponents=[random]",
    "eval.opponents=[random]",
    "eval.reference=[]",
    "game.options={}",
]
#: The resume every case makes: the finished 128-step run, its budget raised (a key a resume may change).
RESUME = ["train.total_timesteps=256"]

#: A module that must never be imported, and a file that must never run: each leaves a mark if it is.
EVIL = "import pathlib\npathlib.Path({mark!r}).write_text('ran')\nclass X:\n    def act(self, o, m, r):\n        return 0\n"


def _hostile(value: Any, evil_py: Path) -> list[Any]:
    """Hostile replacements for a value of this type."""
    code = ["parlour_evil_mod:X", f"{evil_py}:X"]
    if isinstance(value, bool):
        return ["maybe", 2]
    if isinstance(value, int):
        return [-1, 2**70, math.nan, 1.5, "parlour_evil_mod:X"]
    if isinstance(value, float):
        return [math.nan, math.inf, -1.0, 1e300, "1e-400x"]
    if isinstance(value, str):
        return [*code, "ray://127.0.0.1:9", "${oc.env:HOME}", "../../../../etc/passwd"]
    if isinstance(value, list):
        return [[code[0]], [code[1]], [-1], ["ray://127.0.0.1:9"]]
    if isinstance(value, dict):
        return [{"reward": "parlour_evil_mod:X"}, {"bogus": 1}, "parlour_evil_mod:X"]
    return ["parlour_evil_mod:X"]


def _leaves(tree: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    if isinstance(tree, dict) and tree:
        for k, v in tree.items():
            yield from _leaves(v, (*prefix, str(k)))
    else:
        yield prefix, tree


def _set(tree: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for k in path[:-1]:
        tree = tree[k]
    tree[path[-1]] = value


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != ".parlour-lock"
    }


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("handover") / "run"
    assert main(["train", str(CONFIG), *TINY, "--out", str(run), "--no-progress"]) == 0
    return run


def _cases(full: bool) -> list[tuple[str, str, int]]:
    """(file, dotted key, value index) for every key of both files."""
    probe = Path("evil.py")
    cases = []
    k = 0
    # the keys of a saved config.yaml are every key of the schema; read them from the dataclasses
    from dataclasses import asdict

    from parlour.training.config import TrainConfig, read_config

    saved = asdict(read_config(CONFIG))
    for path, value in _leaves(saved):
        values = range(len(_hostile(value, probe))) if full else [k % len(_hostile(value, probe))]
        cases += [("config.yaml", ".".join(path), i) for i in values]
        k += 1
    meta_keys = ["env", "num_players", "timesteps", "trainer", "package_version", "options", "config"]
    for key in meta_keys:
        values = range(3) if full else [k % 3]
        cases += [("parlour.json", key, i) for i in values]
        k += 1
    for path, _ in _leaves(asdict(TrainConfig())):
        if full:
            cases.append(("parlour.json", "config." + ".".join(path), 0))
    return cases


def _run_case(
    finished: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    file: str, key: str, index: int,
) -> None:  # fmt: skip
    run = tmp_path / "run"
    shutil.copytree(finished, run, symlinks=True)
    (run / ".parlour-lock").unlink(missing_ok=True)
    mark = tmp_path / "imported-or-ran.txt"
    mods = tmp_path / "mods"
    mods.mkdir()
    (mods / "parlour_evil_mod.py").write_text(EVIL.format(mark=str(mark)))
    evil_py = tmp_path / "evil.py"
    evil_py.write_text(EVIL.format(mark=str(mark)))
    monkeypatch.syspath_prepend(str(mods))
    sys.modules.pop("parlour_evil_mod", None)
    monkeypatch.chdir(tmp_path)  # where a module beside a handed-over run would be importable

    received: list[Any] = []  # the config the trainer receives

    def spy(cfg: Any, run_: Path, session: Any) -> dict[str, Any]:
        received.append(cfg)
        return {"finished": True, "timesteps": 256, "session_steps": 0, "session_wall_seconds": 0.0,
                "steps_per_second": None, "env_share": None}  # fmt: skip

    from parlour.training import sb3_train

    monkeypatch.setattr(sb3_train, "train_sb3", spy)
    connects: list[Any] = []

    def no_connect(self: Any, address: Any) -> None:
        connects.append(address)
        raise OSError("the fuzz forbids connecting")

    monkeypatch.setattr(socket.socket, "connect", no_connect)
    deleted: list[str] = []
    real_rmtree = shutil.rmtree

    def rmtree(path: Any, *args: Any, **kwargs: Any) -> None:
        deleted.append(str(path))
        real_rmtree(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", rmtree)
    if "ray" in sys.modules:
        monkeypatch.setattr(sys.modules["ray"], "init", lambda *a, **k: connects.append(("ray", a, k)))

    from parlour.training.config import read_config

    baseline = read_config(finished / "config.yaml", RESUME)  # what a resume of the untouched folder trains

    target = run / ("config.yaml" if file == "config.yaml" else "checkpoints/latest/parlour.json")
    if file == "config.yaml":
        tree = yaml.safe_load(target.read_text())
        path = tuple(key.split("."))
        old: Any = tree
        for part in path:
            old = old[part]
        value = _hostile(old, evil_py)[index]
        _set(tree, path, value)
        target.write_text(yaml.safe_dump(tree))
    else:
        tree = json.loads(target.read_text())
        path = tuple(key.split("."))
        old = tree
        for part in path:
            old = old.get(part) if isinstance(old, dict) else None
        value = _hostile(old if old is not None else "x", evil_py)[index % len(_hostile(old or "x", evil_py))]
        _set(tree, path, value)
        target.write_text(json.dumps(tree))
    outside = _digest(tmp_path / "mods")
    before = _digest(run)

    code = main(["train", "--resume", "--out", str(run), *RESUME, "--no-progress"])
    err = capsys.readouterr().err
    what = f"{file}: {key} = {value!r}"
    assert not mark.exists(), f"{what}: imported or ran code"
    assert not connects, f"{what}: connected to {connects}"
    assert _digest(tmp_path / "mods") == outside
    assert all(str(run / "logs") in d or ".tmp" in d for d in deleted), f"{what}: deleted {deleted}"
    assert "Traceback" not in err, f"{what}: {err}"
    if code == 0:
        assert received, f"{what}: exit 0 without training"
        assert received[-1] == baseline, f"{what}: the resume would run another run"
    else:
        assert code == 2, f"{what}: exit {code}: {err}"
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("parlour train: "), f"{what}: {err}"
        assert _digest(run) == before, f"{what}: a refused resume changed the folder"


def _all_cases() -> list[Any]:
    """One hostile value per key in the default suite; every other value in the slow tier."""
    quick = _cases(full=False)
    return [*quick, *(pytest.param(*c, marks=pytest.mark.slow) for c in _cases(full=True) if c not in quick)]


@pytest.mark.parametrize(("file", "key", "index"), _all_cases())
def test_a_handed_over_folder_runs_what_was_checkpointed_or_refuses_in_one_line(
    finished: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    file: str, key: str, index: int,
) -> None:  # fmt: skip
    _run_case(finished, tmp_path, monkeypatch, capsys, file, key, index)
