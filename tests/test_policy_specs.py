"""Policy specs that name your own code (``module:NAME``, ``path/to/file.py:NAME``): a spec names a policy, it never
calls arbitrary code; a researcher's function or class in a file anywhere plays as it is."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from parlour.baselines import UnknownPolicyError, resolve, short_label
from parlour.baselines.base import Policy
from parlour.training.cli import main
from parlour.training.evaluation.matchups import play_matchup

CONFIG = Path(__file__).resolve().parent / "data" / "six_suspects_base.yaml"
ENV = "six_suspects_v0"

AGENT = """
import numpy as np

def act(observation, action_mask, rng):
    return int(action_mask.nonzero()[0][0])

class LastLegal:
    def act(self, observation, action_mask, rng):
        return int(np.flatnonzero(action_mask)[-1])

last_legal = LastLegal()
"""


def play(policy: Policy, games: int = 2) -> int:
    """A few games of ``policy`` against random; how many the policy played (one per seat per deal)."""
    result = play_matchup(ENV, policy, resolve("random", ENV), num_players=4, games=games)
    assert len(result.wins) == games * 4
    return len(result.wins)


def one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text and text, text
    return text


# ------------------------------------------------------------------------------------------ nothing is called
# What each of these really is, as a recording stand-in of the same signature: if the resolver called it, we'd know.
def _abort() -> None:
    CALLED.append("os.abort")


def _getcwd() -> str:
    CALLED.append("os.getcwd")
    return "/"


def _exit(status: Any = None) -> None:
    CALLED.append("sys.exit")


def _print(*args: Any, sep: str = " ", end: str = "\n") -> None:
    CALLED.append("builtins.print")


def _system(command: str) -> int:
    CALLED.append("os.system")
    return 0


CALLED: list[str] = []
STAND_INS = [("os:abort", _abort), ("os:getcwd", _getcwd), ("sys:exit", _exit), ("builtins:print", _print),
             ("os:system", _system)]  # fmt: skip


@pytest.mark.parametrize(("spec", "stand_in"), STAND_INS, ids=[s for s, _ in STAND_INS])
def test_a_callable_that_is_not_a_policy_is_refused_without_being_called(
    spec: str, stand_in: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # probe: before, resolve() called any callable without `act` as a factory (os:abort aborted the process)
    module, _, name = spec.partition(":")
    monkeypatch.setattr(f"{module}.{name}", stand_in)
    CALLED.clear()
    with pytest.raises(UnknownPolicyError) as err:
        resolve(spec, ENV, 4)
    assert CALLED == []
    text = one_line(err.value)
    assert text.startswith(f"policy {spec!r} is not a policy: {module}.{name} takes (")
    assert "act(observation, action_mask, rng)" in text


@pytest.mark.parametrize("spec", ["os:getcwd", "sys:exit", "builtins:print", "os:system", "os:open", "os:path"])
def test_the_real_callables_are_refused_too(spec: str) -> None:
    # builtins: os.abort, sys.exit and print have signatures Python can read (print's *args takes any call); os.open
    # takes three arguments but is a built-in, not a policy. (os:abort is proved in a subprocess below.)
    with pytest.raises(UnknownPolicyError, match=f"^policy {spec!r} is not a policy: ") as err:
        resolve(spec, ENV, 4)
    one_line(err.value)


def test_os_abort_in_a_command_or_a_config_exits_2_not_134(tmp_path: Path) -> None:
    # probe: before, `parlour evaluate --policies os:abort` and a config with opponents: [os:abort] aborted (exit 134)
    cli = "from parlour.training.cli import main; raise SystemExit(main(sys.argv[1:]))"
    argv = ["evaluate", ENV, "--policies", "os:abort", "--opponents", "random", "--games", "1", "--no-progress"]
    done = subprocess.run([sys.executable, "-c", f"import sys; {cli}", *argv], capture_output=True, text=True)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "os.abort takes ()" in done.stderr
    pytest.importorskip("omegaconf")
    argv = ["train", str(CONFIG), "opponents=[os:abort]", "--out", str(tmp_path / "run"), "--no-progress"]
    done = subprocess.run([sys.executable, "-c", f"import sys; {cli}", *argv], capture_output=True, text=True)
    assert done.returncode == 2, done.stderr
    assert "opponents: policy 'os:abort' is not a policy" in done.stderr and "Traceback" not in done.stderr


def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str) -> str:
    """A module ``name`` on ``sys.path`` for this test."""
    folder = tmp_path / "mods"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.py").write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, name, raising=False)
    return name


def test_a_factory_is_refused_not_called(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # probe: before, a zero-argument function was called as a factory; now only classes are made
    name = module(tmp_path, monkeypatch, "spec_factory", f"""
        from pathlib import Path
        from parlour.baselines.base import RandomPolicy

        def make_bot():
            Path({str(tmp_path / "called")!r}).write_text("called")
            return RandomPolicy()
    """)  # fmt: skip
    with pytest.raises(UnknownPolicyError, match=r"spec_factory\.make_bot takes \(\) but a policy is") as err:
        resolve(f"{name}:make_bot", ENV, 4)
    one_line(err.value)
    assert not (tmp_path / "called").exists()


REFUSED_IN_A_FILE = """
from pathlib import Path
MARK = Path(__file__).with_name("made")

class NeedsArguments:
    def __init__(self, depth):
        MARK.write_text("made")
    def act(self, observation, action_mask, rng):
        return 0

class WrongAct:
    def __init__(self):
        MARK.write_text("made")
    def act(self, observation):
        return 0

class NoAct:
    pass

def any_call(*args):
    MARK.write_text("called")

def two(observation, action_mask):
    MARK.write_text("called")

value = 3
"""
REFUSALS = [
    ("NeedsArguments", "bad.py:NeedsArguments is made with (depth)"),
    ("WrongAct", "bad.py:WrongAct.act takes (self, observation)"),
    ("NoAct", "bad.py:NoAct is a class without an act method"),
    ("any_call", "bad.py:any_call takes (*args)"),
    ("two", "bad.py:two takes (observation, action_mask)"),
    ("value", "bad.py:value is of type int"),
]


@pytest.mark.parametrize(("name", "message"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_what_a_spec_may_name_is_checked_by_signature_before_anything_is_made(
    tmp_path: Path, name: str, message: str
) -> None:
    # probe: before, a class needing arguments raised a TypeError traceback, and a file path was not a spec at all
    (tmp_path / "bad.py").write_text(REFUSED_IN_A_FILE)
    with pytest.raises(UnknownPolicyError) as err:
        resolve(f"{tmp_path / 'bad.py'}:{name}", ENV, 4)
    text = one_line(err.value)
    assert f"is not a policy: {message} but a policy is a class (made with no arguments) or instance" in text
    assert not (tmp_path / "made").exists()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_such_module_xyz:Bot", "cannot import it as module:NAME (no module named 'no_such_module_xyz'"),
        ("os.no_such_module:Bot", "no module named 'os.no_such_module'"),
        ("os:no_such_name", "os has no attribute 'no_such_name'"),
        ("missing_dir/agent.py:act", "there is no Python file 'missing_dir/agent.py' in "),
        ("a b:c", "is neither module:NAME nor path/to/file.py:NAME"),
        ("os:", "is neither module:NAME nor path/to/file.py:NAME"),
    ],
)
def test_a_spec_that_names_nothing_is_one_line(spec: str, message: str) -> None:
    with pytest.raises(UnknownPolicyError) as err:
        resolve(spec, ENV, 4)
    assert message in one_line(err.value)


def test_a_python_file_without_a_name_says_how_to_name_one(tmp_path: Path) -> None:
    (tmp_path / "my_agent.py").write_text(AGENT)
    with pytest.raises(UnknownPolicyError, match=r"name what to play in it: .*my_agent\.py:NAME"):
        resolve(str(tmp_path / "my_agent.py"), ENV, 4)


# ------------------------------------------------------------------------------------------ a researcher's agent
def test_a_function_in_a_file_anywhere_plays_from_another_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # probe: before, 'path/to/my_agent.py:act' was imported as a module name (ModuleNotFoundError), and a plain
    # function would have been called with no arguments
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "my_agent.py").write_text(AGENT)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    before = list(sys.path)
    policy = resolve(str(agents / "my_agent.py") + ":act", ENV, 4)
    assert sys.path == before  # no PYTHONPATH needed, none changed
    assert policy.name == "my_agent.py:act"
    mask = np.array([0, 0, 1, 1], np.int8)
    assert policy.act(np.zeros(4, np.float32), mask, np.random.default_rng(0)) == 2
    assert play(policy) == 8
    relative = resolve("../agents/my_agent.py:act", ENV, 4)  # from the current folder
    assert relative.act(np.zeros(4, np.float32), mask, np.random.default_rng(0)) == 2


@pytest.mark.parametrize("name", ["LastLegal", "last_legal"])
def test_a_class_or_an_instance_in_a_file_plays(tmp_path: Path, name: str) -> None:
    (tmp_path / "my_agent.py").write_text(AGENT)
    policy = resolve(f"{tmp_path / 'my_agent.py'}:{name}", ENV, 4)
    assert policy.act(np.zeros(4, np.float32), np.array([1, 1, 0, 1], np.int8), np.random.default_rng(0)) == 3
    assert play(policy) == 8


def test_module_name_of_an_installed_module_plays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # probe: before, module:act (a policy function) was called with no arguments: a TypeError traceback
    name = module(tmp_path, monkeypatch, "spec_user_agent", AGENT)
    for attr in ("act", "LastLegal", "last_legal"):
        policy = resolve(f"{name}:{attr}", ENV, 4)
        assert policy.name == f"{name}:{attr}"
        assert play(policy, games=1) == 4


def test_a_policy_subclass_in_a_file_keeps_its_name_and_its_games(tmp_path: Path) -> None:
    (tmp_path / "bots.py").write_text(
        textwrap.dedent("""
        from parlour.baselines.base import RandomPolicy

        class Mine(RandomPolicy):
            name = "mine"
            games = ("six_suspects_v0",)
        """)
    )
    policy = resolve(f"{tmp_path / 'bots.py'}:Mine", ENV, 4)
    assert policy.name == "mine" and play(policy, games=1) == 4
    with pytest.raises(UnknownPolicyError, match=r"plays \['six_suspects_v0'\], not lady_alice_v1"):
        resolve(f"{tmp_path / 'bots.py'}:Mine", "lady_alice_v1", 4)


def test_a_policy_from_a_file_travels_to_another_process_by_its_spec(tmp_path: Path) -> None:
    # Ray workers and SubprocVecEnv pickle policies; a file's private module does not exist in another process, so
    # the policy is named again there (from the file's absolute path), not unpickled by reference.
    (tmp_path / "my_agent.py").write_text(AGENT)
    data = pickle.dumps(resolve(f"{tmp_path / 'my_agent.py'}:LastLegal", ENV, 4))
    code = (
        "import pickle, sys, numpy as np; p = pickle.loads(sys.stdin.buffer.read()); "
        "print(p.name, p.act(np.zeros(3), np.array([1, 1, 0]), np.random.default_rng(0)))"
    )
    done = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True, cwd="/", check=False)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().split() == ["my_agent.py:LastLegal", "1"]


def test_labels_of_file_specs_and_the_commands_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert short_label("/somewhere/agents/my_agent.py:act") == "my_agent.py:act"
    assert short_label("runs/x/policy.py:Bot") == "x/policy.py:Bot"
    assert short_label("mypackage.bots:Bot") == "mypackage.bots:Bot"
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "my_agent.py").write_text(AGENT)
    specs = [f"{tmp_path / f}/my_agent.py:act" for f in ("a", "b")]
    argv = ["evaluate", ENV, "--policies", ",".join(specs), "--opponents", "random", "--games", "1", "--no-progress"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert all(f"| {s} | random |" in out for s in specs)  # two files with one label: each by its whole spec
    assert (
        main(["evaluate", ENV, "--policies", specs[0], "--opponents", "random", "--games", "1", "--no-progress"]) == 0
    )
    assert "| my_agent.py:act | random |" in capsys.readouterr().out


def test_a_refused_spec_is_one_line_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", ENV, "--policies", "os:getcwd", "--opponents", "random", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a policy: os.getcwd takes ()" in err


def test_a_file_is_run_once_while_it_is_unchanged(tmp_path: Path) -> None:
    # Naming a file runs it, as an import does; naming it again (a command's relabelling does) reuses it.
    path = tmp_path / "counted.py"
    path.write_text(AGENT + "\nwith open(__file__ + '.runs', 'a') as f:\n    f.write('run\\n')\n")
    resolve(f"{path}:act", ENV, 4)
    resolve(f"{path}:LastLegal", ENV, 4)
    assert Path(f"{path}.runs").read_text() == "run\n"
