"""What several ``parlour`` commands share: argument types and flags, policy resolution, the command the user typed."""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import TypeAlias

    #: What ``parser.add_subparsers()`` returns: each command module adds its subparser to it.
    Subparsers: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]

#: The help line of a policy list, the same wherever a command takes one.
POLICIES_HELP = (
    "comma-separated policies: bot or shipped names, policy files (*.json), module:NAME or path/to/file.py:NAME"
)


#: The variables through which a user chooses how many threads BLAS runs on: where any is set, Parlour leaves BLAS be.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")


def one_blas_thread() -> bool:
    """Run NumPy's BLAS on one thread, in this process and in the processes it starts, unless the user chose a
    number (:data:`BLAS_THREAD_VARIABLES`); says whether it did.

    Policy files act on one observation at a time (a matrix-vector product a layer), where BLAS worker threads only
    add synchronisation, and where processes share the cores (vectorised envs, the seed pool, pytest's workers, a
    second run) they spin against each other: on 2 cores beside two busy processes, a 10-game Elevenses match of
    ``elevenses_distilled`` took 4.5 s of play with OpenBLAS's default threads and 0.9 s with one. PyTorch's threads
    are not BLAS's here (``train.torch_threads`` sets them).
    """
    if any(name in os.environ for name in BLAS_THREAD_VARIABLES):
        return False
    from threadpoolctl import threadpool_limits

    os.environ["OPENBLAS_NUM_THREADS"] = "1"  # read by the processes this one starts, when they load NumPy
    threadpool_limits(limits=1, user_api="blas")
    return True


def executable() -> str:
    """The command the user typed to run Parlour, for the lines that tell them what to type next: the ``parlour``
    script they ran (``.venv/bin/parlour`` when that is what ran), else this environment's ``parlour`` script
    (:func:`_console_script`), never ``python -m parlour.training.cli``: that puts the current folder first on
    ``sys.path``, so a stray ``omegaconf.py`` where the user copies the line to would run."""
    argv0 = sys.argv[0] if sys.argv else ""
    if Path(argv0).name == "parlour":
        return shlex.quote(argv0)
    return _console_script()


def _console_script() -> str:
    """``parlour`` where the PATH finds this environment's script (or finds one and this environment has none), else
    the full path of the script beside ``sys.executable``; with no script at all (a source tree run without
    installing), this Python started so that the current folder is not on ``sys.path``."""
    import shutil

    folder = Path(sys.executable).parent
    beside = next((folder / name for name in ("parlour", "parlour.exe") if (folder / name).is_file()), None)
    found = shutil.which("parlour")
    if found and (beside is None or _same_file(found, beside)):
        return "parlour"
    if beside is not None:
        return shlex.quote(str(beside))
    from parlour.training.shared_bench import parlour_command

    return shlex.join(parlour_command())


def _same_file(a: str | Path, b: str | Path) -> bool:
    try:
        return Path(a).samefile(b)
    except OSError:
        return False


def parse_options(items: Sequence[str] | None) -> dict[str, Any] | None:
    """``--option key=value`` items as keywords (values read as YAML scalars); None after printing an error."""
    import yaml

    options: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep:
            print(f"parlour: --option {item!r} is not of the form key=value", file=sys.stderr)
            return None
        options[key] = yaml.safe_load(value)
    return options


def _resolve(spec: str, args: argparse.Namespace, options: dict[str, Any]) -> Any:
    from parlour.baselines import resolve

    return resolve(spec, args.env, args.players, options, trust_pickle=args.trust_pickle)


def resolve_all(specs: list[str], args: argparse.Namespace, options: dict[str, Any]) -> list[Any]:
    """Resolve specs with short table labels; two files whose labels collide are labelled by their whole path."""
    from collections import Counter

    from parlour.baselines import resolve

    policies = [_resolve(p, args, options) for p in specs]
    counts = Counter(p.name for p in policies)
    return [
        resolve(spec, args.env, args.players, options, trust_pickle=args.trust_pickle, label=spec)
        if counts[p.name] > 1 and spec != p.name
        else p
        for spec, p in zip(specs, policies, strict=True)
    ]


def env_id(text: str) -> str:
    """An argparse type: a registered environment id, refused with the ids listed (every command names an env as a
    positional argument this way)."""
    from parlour.envs import ENVIRONMENTS

    if text not in ENVIRONMENTS:
        raise argparse.ArgumentTypeError(f"unknown environment {text!r}; available: {sorted(ENVIRONMENTS)}")
    return text


def add_envs(p: argparse.ArgumentParser, old: str) -> None:
    """Positional env ids (default: all); ``old`` is the flag earlier versions took, still accepted."""
    p.add_argument("envs", nargs="*", type=env_id, metavar="ENV", help="environment ids (default: all)")
    p.add_argument(old, dest="old_envs", action="append", default=[], type=env_id, help=argparse.SUPPRESS)


def chosen_envs(args: argparse.Namespace) -> list[str] | None:
    """The env ids given (positionally or by the old flag), ``None`` for all."""
    return [*args.envs, *args.old_envs] or None


def at_least(low: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``low``, refused with the range named."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is out of range: expected an integer >= {low}")
        return value

    return parse


def add_trust_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--trust-pickle",
        action="store_true",
        help="also load SB3 *.zip checkpoints (unpickling them can run code stored in the file: only files you trust)",
    )


def add_scale_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workers",
        type=at_least(1),
        default=1,
        help="Ray workers to share the games (default 1: this process, no Ray); the same results either way",
    )
    parser.add_argument(
        "--ray-address", default="", help="Ray cluster to join (e.g. auto); default: a local Ray in this process"
    )


def has_training_extra(command: str, *modules: str) -> bool:
    """Whether the training extra (and ``modules``, imported now so that a missing dependency is one line, not a
    traceback later) is installed; if not, print ``command``'s one-line refusal."""
    import importlib

    try:
        from parlour.training import require_train_extra

        require_train_extra(command)
        for module in modules:
            importlib.import_module(module)
    except ImportError as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return False
    return True


def add_table_flags(parser: argparse.ArgumentParser, players: int | None = 4, *, option: bool = True) -> None:
    """``--players`` (default ``players``; ``None``: the game's own) and, with ``option``, repeatable ``--option``."""
    default = "the game's default" if players is None else str(players)
    parser.add_argument("--players", type=int, default=players, help=f"number of players (default {default})")
    if option:
        parser.add_argument("--option", action="append", help="a rule keyword of the game, key=value (repeatable)")


def add_output_flags(parser: argparse.ArgumentParser, *, records: bool = False) -> None:
    """``--no-progress`` and, with ``records``, ``--records FOLDER`` (every game's record, for ``parlour replay``)."""
    if records:
        parser.add_argument(
            "--records", default=None, help="save every game's record in this folder (parlour replay reads them)"
        )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")


#: The signal that interrupted the command (SIGINT unless SIGTERM came): its exit status is 128 + it.
SIGNAL_RECEIVED = [int(signal.SIGINT)]


def signal_exit_status() -> int:
    """The exit status of a command stopped by a signal: 128 + the signal (SIGINT unless SIGTERM came)."""
    return 128 + SIGNAL_RECEIVED[0]
