"""``parlour replay``: step through a saved game as one seat saw it (or everything, with ``--god``)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from parlour.training.cli.common import Subparsers


def add_parser(sub: Subparsers) -> None:
    r = sub.add_parser(
        "replay",
        help="step through a saved game as one seat saw it (or everything, with --god)",
        description="The first line names the game, its seed (the record's game_seed: for a record of parlour play, "
        "the --seed that deals it again) and its number of moves. Then: Enter or 'n' for the next move, 'b' back, "
        "'d' to the watched seat's next decision, a move's number to jump to it, '?' for help, 'q' to stop. "
        "With --html OUT.html: write the game as one web page instead (the browser replay viewer with the game inside: "
        "it opens from the file, with no server), first through --perspective's eyes (or the umpire's, with --god).",
    )
    r.add_argument("record", help="a game record (from play, match --records or evaluate --records)")
    r.add_argument("--perspective", default=None, help="the seat to watch, e.g. player_2 (default: yours, or player_0)")
    r.add_argument("--god", action="store_true", help="show everything: every hand and every move")
    r.add_argument(
        "--html",
        metavar="OUT.html",
        default=None,
        help="write a self-contained web page to step through the game in a browser (no server needed), and stop",
    )
    r.add_argument("--overwrite", action="store_true", help="let --html replace an existing file")
    r.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from parlour.training.play import console_ask, replay_game, shown

    if args.html is not None:
        return _export(args)
    if args.overwrite:
        print("parlour replay: --overwrite goes with --html OUT.html", file=sys.stderr)
        return 2

    try:
        replay_game(Path(args.record), perspective=args.perspective, god=args.god, ask=console_ask())
    except ValueError as exc:
        print(f"parlour replay: {shown(exc)}", file=sys.stderr)  # nothing from the file reaches the terminal raw
        return 2
    except BrokenPipeError:  # the reader went away (`parlour replay g.json | head`): stop quietly, no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python flushes stdout once more at exit
        return 1
    return 0


def _export(args: argparse.Namespace) -> int:
    """``--html OUT.html``: the replay page, written once; nothing interactive."""
    from parlour.training.play import shown
    from parlour.training.serve.export import export_replay

    out = Path(args.html)
    try:
        moves = export_replay(
            Path(args.record), out, perspective=args.perspective, god=args.god, overwrite=args.overwrite
        )
    except (ValueError, OSError) as exc:
        print(f"parlour replay: {shown(exc)}", file=sys.stderr)
        return 2
    print(f"parlour replay: wrote {out} ({moves} moves): open it in a browser, no server needed")
    return 0
