"""The probes of a handed-over run folder (issue 37), each as a user meets it: a resume that would connect, import or
start processes on the folder's say, a damaged checkpoint, hostile numbers and resolvers in a config."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sb3_contrib")

from parlour.training.cli import main  # noqa: E402
from parlour.training.config import ConfigError, load_config  # noqa: E402

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
]
EVIL = "import pathlib\npathlib.Path({mark!r}).write_text('ran')\nclass X:\n    def act(self, o, m, r):\n        return 0\n"


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("finished") / "run"
    assert main(["train", str(CONFIG), *TINY, "--out", str(run), "--no-progress"]) == 0
    return run


@pytest.fixture
def handed(finished: Path, tmp_path: Path) -> Path:
    """A copy of a finished run, as someone hands it over."""
    run = tmp_path / "run"
    shutil.copytree(finished, run)
    (run / ".parlour-lock").unlink(missing_ok=True)
    return run


def _edit(run: Path, old: str, new: str) -> None:
    config = run / "config.yaml"
    text = config.read_text()
    assert old in text, text
    config.write_text(text.replace(old, new, 1))


def _craft(run: Path, change: Any) -> None:
    """Change the run's config as someone crafting a folder would: in ``config.yaml`` and in the config its checkpoint
    records alike (so that only the check under test can refuse it)."""
    import json

    import yaml

    tree = yaml.safe_load((run / "config.yaml").read_text())
    change(tree)
    (run / "config.yaml").write_text(yaml.safe_dump(tree))
    meta_path = run / "checkpoints" / "latest" / "parlour.json"
    meta = json.loads(meta_path.read_text())
    change(meta["config"])
    meta_path.write_text(json.dumps(meta))


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != ".parlour-lock"
    }


def _resume(run: Path, *more: str) -> int:
    return main(["train", "--resume", "--out", str(run), "train.total_timesteps=256", *more, "--no-progress"])


def _stub_training(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Stand in for the trainer (what these tests check is decided before it starts): record the config it gets."""
    from parlour.training import sb3_train

    got: list[Any] = []

    def train(cfg: Any, run: Path, session: Any) -> dict[str, Any]:
        got.append(cfg)
        return {"finished": True, "timesteps": 256, "session_steps": 0, "session_wall_seconds": 0.0,
                "steps_per_second": None, "env_share": None}  # fmt: skip

    monkeypatch.setattr(sb3_train, "train_sb3", train)
    return got


def test_a_handed_over_ray_address_is_refused_unless_the_command_line_gives_it(
    handed: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    got = _stub_training(monkeypatch)
    _edit(handed, "ray_address: ''", "ray_address: ray://203.0.113.7:10001")
    before = _digest(handed)
    capsys.readouterr()
    assert _resume(handed) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "rllib.ray_address=ray://203.0.113.7:10001 is a network address" in err and "--trust" in err
    assert _digest(handed) == before and not got
    # the same value on the command line, or --trust, is the user's say; --ray-address may also move the run
    assert _resume(handed, "--ray-address", "ray://203.0.113.7:10001") == 0
    assert got[-1].rllib.ray_address == "ray://203.0.113.7:10001"
    assert _resume(handed, "--ray-address", "ray://127.0.0.1:10001") == 0
    assert got[-1].rllib.ray_address == "ray://127.0.0.1:10001"
    assert "rllib.ray_address ray://203.0.113.7:10001 -> ray://127.0.0.1:10001" in capsys.readouterr().err


@pytest.mark.parametrize("where", ["opponents", "eval.opponents", "eval.reference", "pretrain.teacher"])
def test_a_module_beside_a_handed_over_run_is_never_imported(
    where: str, handed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`python -m parlour.training.cli`, notebooks and PYTHONPATH=. put the current folder on sys.path: a module
    shipped beside the run would be importable. Named by the folder's config, it is refused before any import."""
    got = _stub_training(monkeypatch)
    mark = tmp_path / "imported.txt"
    (tmp_path / "beside_run.py").write_text(EVIL.format(mark=str(mark)))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("beside_run", None)
    key = where.split(".")[-1]
    section = {"opponents": None, "eval.opponents": "eval", "eval.reference": "eval", "pretrain.teacher": "pretrain"}
    value = "beside_run:X" if key == "teacher" else ["beside_run:X"]
    _craft(handed, lambda tree: (tree if section[where] is None else tree[section[where]]).__setitem__(key, value))
    capsys.readouterr()
    assert _resume(handed) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{where}=" in err and "imports code" in err, err
    assert not mark.exists() and not got


def test_a_config_edited_after_its_checkpoint_is_refused_naming_the_keys(
    handed: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    got = _stub_training(monkeypatch)
    _edit(handed, "ent_coef: 0.003", "ent_coef: 0.5")
    capsys.readouterr()
    assert _resume(handed) == 2
    err = capsys.readouterr().err.strip()
    assert "is not the config its checkpoint" in err and "ppo.ent_coef: checkpoint 0.003, config.yaml 0.5" in err
    assert not got


def test_a_checkpoint_from_before_a_key_was_added_resumes_with_its_default(
    handed: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A key the schema gained after the checkpoint was written (``ppo.network``) held its default then: the run
    resumes; an edited key is still refused (the test above)."""
    got = _stub_training(monkeypatch)
    meta = handed / "checkpoints" / "latest" / "parlour.json"
    record = json.loads(meta.read_text())
    assert record["config"]["ppo"].pop("network") == "mlp"
    meta.write_text(json.dumps(record))
    capsys.readouterr()
    assert _resume(handed) == 0, capsys.readouterr().err
    assert got


@pytest.mark.parametrize("missing", ["state.json", "tensors.safetensors", "parlour.json"])
def test_a_damaged_checkpoint_is_refused_never_taken_as_none(
    missing: str, handed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (handed / "checkpoints" / "latest" / missing).unlink()
    before = _digest(handed)
    capsys.readouterr()
    assert _resume(handed) == 2  # before: retrained from step 0 and replaced the old tensors
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and missing in err, err
    assert _digest(handed) == before


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("ppo.clip_range=nan", "ppo.clip_range=nan is out of range: expected a finite number in (0, 1]"),
        ("ppo.clip_range=-0.2", "ppo.clip_range=-0.2 is out of range"),
        ("ppo.clip_range=0", "ppo.clip_range=0.0 is out of range"),
        ("ppo.ent_coef=inf", "ppo.ent_coef=inf is out of range: expected a finite number in [0, 1]"),
        ("ppo.ent_coef=-0.01", "ppo.ent_coef=-0.01 is out of range"),
        ("ppo.vf_coef=nan", "ppo.vf_coef=nan is out of range: expected a finite number >= 0"),
        ("ppo.vf_coef=-1", "ppo.vf_coef=-1.0 is out of range"),
        ("ppo.max_grad_norm=inf", "ppo.max_grad_norm=inf is out of range: expected a finite number > 0"),
        ("ppo.max_grad_norm=0", "ppo.max_grad_norm=0.0 is out of range"),
        ("ppo.learning_rate=nan", "ppo.learning_rate=nan is out of range"),
    ],
)
def test_every_numeric_key_is_bounded(override: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(CONFIG, [override])
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    "value", ["${oc.env:HOME}", "${oc.env:PARLOUR_SECRET,x}", "x-${oc.decode:'1'}", "${oc.create:{a: 1}}"]
)
def test_configs_do_not_read_the_environment(value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: ``${oc.env:...}`` was resolved and its value copied into config.yaml and every policy file."""
    monkeypatch.setenv("PARLOUR_SECRET", "hunter2")
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG.read_text().replace("seed_set: v1", f'seed_set: "{value}"'))
    with pytest.raises(ConfigError, match=r"eval\.seed_set=.* calls a resolver; configs may not read the environment"):
        load_config(config)
    with pytest.raises(ConfigError, match="the command line: track="):
        load_config(CONFIG, ["track=${oc.env:PARLOUR_SECRET}"])
    # a reference to another key is no resolver
    config.write_text(CONFIG.read_text().replace("periodic_games: 50", "periodic_games: ${eval.games}"))
    assert load_config(config).eval.periodic_games == 200


def test_the_resume_line_a_stopped_run_prints_repeats_what_it_must(
    handed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from parlour.training.cli.train import _resume_line

    _edit(handed, "vec_env: dummy", "vec_env: subproc")
    assert _resume_line(handed).endswith(f"train --resume --out {handed} train.n_envs=2")


@pytest.mark.parametrize("seed", [-1, 1.5, True, 2**63, "3"])
def test_the_single_agent_view_refuses_a_bad_seed_in_one_line(seed: Any) -> None:
    from parlour.baselines import make
    from parlour.training.single_agent import SingleAgentEnv

    env = SingleAgentEnv("six_suspects_v0", [make("random")], seed=0)
    with pytest.raises(
        ValueError, match=r"SingleAgentEnv.reset\(\): seed=.* expected None or an integer in \[0, 2\*\*63\)"
    ):
        env.reset(seed=seed)
    with pytest.raises(ValueError, match=r"SingleAgentEnv\(seed=...\): seed="):
        SingleAgentEnv("six_suspects_v0", [make("random")], seed=seed)


def test_the_single_agent_view_takes_a_numpy_seed_as_the_equal_int() -> None:
    import numpy as np

    from parlour.baselines import make
    from parlour.training.single_agent import SingleAgentEnv

    a = SingleAgentEnv("six_suspects_v0", [make("random")])
    b = SingleAgentEnv("six_suspects_v0", [make("random")])
    np.testing.assert_array_equal(a.reset(seed=np.int64(7))[0], b.reset(seed=7)[0])
    assert a.get_state() == b.get_state()


def test_worker_processes_never_search_the_current_folder(tmp_path: Path) -> None:
    """`train.vec_env: subproc` starts its envs with multiprocessing, whose children bootstrap with the current folder
    first on sys.path: a stray `multiprocessing.py` beside a handed-over run would run in each of them."""
    import subprocess

    if sys.version_info < (3, 11):
        pytest.skip("PYTHONSAFEPATH needs Python 3.11")
    mark = tmp_path / "stray-module-ran.txt"
    (tmp_path / "multiprocessing.py").write_text(f"import pathlib\npathlib.Path({str(mark)!r}).write_text('ran')\n")
    parlour = Path(sys.executable).parent / "parlour"
    cmd = [str(parlour), "train", str(CONFIG), *TINY, "train.vec_env=subproc", "--out", "run", "--no-progress"]
    env = {k: v for k, v in __import__("os").environ.items() if k != "PYTHONSAFEPATH"}
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert not mark.exists()
