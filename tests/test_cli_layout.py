"""The layout of ``parlour.training.cli``: one module per command, assembled from one table, each function small."""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import parlour.training.cli as cli
from parlour.envs.core import package_version
from parlour.training.cli import COMMANDS, build_parser, main
from parlour.training.cli.common import executable

ROOT = Path(__file__).resolve().parents[1]
CLI_DIR = Path(cli.__file__).resolve().parent
#: The order of ``parlour --help`` (and of the command-line reference page) before the commands became modules.
HELP_ORDER = [
    "train",
    "list",
    "evaluate",
    "accusations",
    "baselines",
    "benchmark",
    "exploit",
    "export",
    "match",
    "play",
    "replay",
    "serve",
    "bench",
]
#: The package's modules that are not commands.
NOT_COMMANDS = {"__init__", "__main__", "common"}


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


#: The command modules of the table (each entry a module, which the first test checks).
MODULES: list[ModuleType] = [m for m in COMMANDS if isinstance(m, ModuleType)]


def _added_by(module: ModuleType) -> dict[str, argparse.ArgumentParser]:
    """The subparsers a command module adds to an empty parser."""
    parser = argparse.ArgumentParser(prog="parlour")
    module.add_parser(parser.add_subparsers(dest="command"))
    return _subparsers(parser)


def _table_names() -> list[str]:
    return [name for module in MODULES for name in _added_by(module)]


def test_every_subcommand_comes_from_one_module_of_the_table() -> None:
    modules = MODULES
    assert len(modules) == len(COMMANDS), "an entry of COMMANDS is not a module"
    assert len({m.__name__ for m in modules}) == len(modules), "a module is in COMMANDS twice"
    # every command module of the package is in the table: none is written and then forgotten
    files = {p.stem for p in CLI_DIR.glob("*.py")} - NOT_COMMANDS
    assert {m.__name__.rsplit(".", 1)[1] for m in modules} == files
    built = _subparsers(build_parser())
    for module in modules:
        added = _added_by(module)
        assert len(added) == 1, f"{module.__name__} adds {sorted(added)}: expected one subcommand"
        ((name, sub),) = added.items()
        assert sub.get_default("func") is module.run, f"{name}: its parser does not dispatch to {module.__name__}.run"
        assert built[name].get_default("func") is module.run
        assert module.__doc__ and module.__doc__.strip().count("\n") == 0, f"{module.__name__}: a one-line docstring"
    assert list(built) == _table_names(), "build_parser() has subcommands the table does not, or in another order"


def test_help_lists_the_subcommands_in_the_order_of_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    names = _table_names()
    assert names == HELP_ORDER
    assert "{" + ",".join(names) + "}" in out
    listed = re.findall(r"^    (\S+)\s", out, flags=re.MULTILINE)  # the indented summary lines, one per command
    assert listed == names


def test_python_dash_m_runs_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "parlour.training.cli", "--version"], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"parlour {package_version()}"


def _this_environments_script() -> str:
    """What the resume hint names when the command did not run as a ``parlour`` script: ``parlour`` where the PATH
    finds this environment's script, else that script's full path (never ``python -m``: see ``executable``)."""
    import os
    import shutil

    beside = Path(sys.executable).parent / "parlour"
    found = shutil.which("parlour")
    return "parlour" if found and os.path.samefile(found, beside) else shlex.quote(str(beside))


@pytest.mark.parametrize(
    ("argv0", "expected"),
    [
        (str(CLI_DIR / "__main__.py"), None),  # python -m ...: the script instead, which keeps the cwd off sys.path
        (".venv/bin/parlour", ".venv/bin/parlour"),
        ("/usr/lib/python3/pytest", None),
    ],
)
def test_the_resume_hint_names_the_command_that_ran(
    monkeypatch: pytest.MonkeyPatch, argv0: str, expected: str | None
) -> None:
    monkeypatch.setattr(sys, "argv", [argv0])
    assert executable() == (expected or _this_environments_script())
    assert "-m parlour" not in executable()


def test_no_function_of_the_command_line_is_too_complex() -> None:
    pytest.importorskip("ruff")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--no-cache",
            "--select",
            "C901",
            "--config",
            "lint.mccabe.max-complexity=15",
            "training/cli",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr


_BLAS_PROBE = (
    "import os\n"
    "from threadpoolctl import threadpool_info\n"
    "from parlour.training.cli import main\n"
    "main(['list'])\n"
    "threads = sorted({i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas'})\n"
    "print('BLAS', threads, os.environ.get('OPENBLAS_NUM_THREADS'))\n"
)


@pytest.mark.parametrize(
    ("chosen", "expected"),
    [
        (None, "BLAS [1] 1"),  # nobody chose: one thread, and the variable set for the processes it starts
        ("2", "BLAS [2] 2"),  # the user's choice stands
    ],
)
def test_the_command_line_runs_blas_on_one_thread_unless_the_user_chose(chosen: str | None, expected: str) -> None:
    import os

    from parlour.training.cli.common import BLAS_THREAD_VARIABLES

    env = {k: v for k, v in os.environ.items() if k not in BLAS_THREAD_VARIABLES}
    if chosen is not None:
        env["OPENBLAS_NUM_THREADS"] = chosen
    done = subprocess.run([sys.executable, "-c", _BLAS_PROBE], capture_output=True, text=True, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == expected
