"""The ``parlour`` command line: ``train``, ``evaluate``, ``accusations``, ``baselines``, ``benchmark``, ``exploit``,
``export``, ``match``, ``bench``, ``list``, ``play``, ``replay`` and ``serve``.

One module per command, each holding its flags (``add_parser``) beside its handler (``run``); :data:`COMMANDS` lists
them in the order ``parlour --help`` shows them, and :mod:`parlour.training.cli.common` holds what several share. A
new command is a module like theirs and one entry in :data:`COMMANDS`.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from parlour.training.cli import (
    accusations,
    baselines,
    bench,
    benchmark,
    evaluate,
    exploit,
    export,
    listing,
    match,
    play,
    replay,
    serve,
    train,
)
from parlour.training.cli.common import SIGNAL_RECEIVED, chosen_envs, one_blas_thread, signal_exit_status

if TYPE_CHECKING:
    from parlour.training.cli.common import Subparsers

__all__ = ["COMMANDS", "Command", "build_parser", "main", "signal_exit_status"]


class Command(Protocol):
    """What a command module offers: its subparser, and the handler that subparser dispatches to."""

    def add_parser(self, sub: Subparsers) -> None:
        """Add the command's subparser with its flags, and ``set_defaults(func=run)``."""

    def run(self, args: argparse.Namespace) -> int:
        """Run the command; the exit status."""


#: Every subcommand, in the order ``parlour --help`` lists them.
COMMANDS: tuple[Command, ...] = (
    train,
    listing,
    evaluate,
    accusations,
    baselines,
    benchmark,
    exploit,
    export,
    match,
    play,
    replay,
    serve,
    bench,
)

# Old private name, still imported by tests/test_cli.py.
_chosen_envs = chosen_envs


def build_parser() -> argparse.ArgumentParser:
    from parlour.envs.core import package_version

    parser = argparse.ArgumentParser(prog="parlour", description="Parlour: hidden-information tabletop games for RL.")
    parser.add_argument("--version", action="version", version=f"parlour {package_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def _terminate(signum: int, frame: Any) -> None:
    SIGNAL_RECEIVED[0] = signum
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        # `parlour train CONFIG --out RUN key=value`: overrides may stand after options too
        if args.command == "train" and all("=" in e and not e.startswith("-") for e in extra):
            args.overrides = [*args.overrides, *extra]
        else:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.argv = argv
    # The processes ours start (multiprocessing's spawn and forkserver children: SubprocVecEnv, the seed pool of
    # `parlour baselines`) bootstrap with the current folder first on sys.path, where a stray module beside a
    # handed-over run would shadow a real one; Python 3.11+ leaves it off when this is set (inherited by children).
    os.environ.setdefault("PYTHONSAFEPATH", "1")
    one_blas_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if _main_thread() else None
    try:
        result: int = args.func(args)
    except KeyboardInterrupt:
        # one line, not a traceback; `parlour train` handles its own stops (it saves a checkpoint first)
        print(f"parlour {args.command}: interrupted", file=sys.stderr)
        return signal_exit_status()
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return result


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()
