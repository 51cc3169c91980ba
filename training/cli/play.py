"""``parlour play``: take a seat yourself against bots or trained policies, in the terminal."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from parlour.training.cli.common import add_table_flags, add_trust_flag, env_id, parse_options

if TYPE_CHECKING:
    from parlour.training.cli.common import Subparsers


def add_parser(sub: Subparsers) -> None:
    p = sub.add_parser(
        "play",
        help="take a seat yourself against bots or trained policies, in the terminal",
        description="At each of your turns the legal moves are listed, numbered 1, 2, 3, ...: type a move's "
        "number as listed, or its name (case and spacing do not matter; the start of each word is enough when only "
        "one legal move fits, e.g. 'peek albert top'). A bare number is always a place on the list; '#N' plays "
        "action id N. '?' for help, 'q' to stop (the game so far is saved). From a pipe, each prompt '> ' is "
        "written before the answer is read.",
    )
    p.add_argument("env", type=env_id, help="environment id")
    add_table_flags(p, None, option=False)
    p.add_argument("--seat", type=int, default=None, help="your seat, 0-based (default: drawn)")
    p.add_argument(
        "--opponents",
        default=None,
        help="comma-separated policies, one for every other seat or one for all (default: the game's heuristic bot)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="the deal's seed (also your seat, if drawn, and the bots' choices); the record keeps it as game_seed and "
        "parlour replay shows it (default: drawn, and shown when the game is over)",
    )
    p.add_argument("--option", action="append", help="a rule keyword of the game, key=value (repeatable)")
    p.add_argument(
        "--record",
        default=None,
        help="where to save the game record; an existing file is refused unless --overwrite "
        "(default records/<env>_play_….json, never overwritten)",
    )
    p.add_argument("--overwrite", action="store_true", help="let --record replace an existing file")
    add_trust_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from parlour.training.play import console_ask, play_game_with_person

    options = parse_options(args.option)
    if options is None:
        return 2
    try:
        play_game_with_person(
            args.env,
            num_players=args.players,
            seat=args.seat,
            opponents=args.opponents.split(",") if args.opponents else (),
            seed=args.seed,
            options=options,
            record_path=Path(args.record) if args.record else None,
            overwrite=args.overwrite,
            trust_pickle=args.trust_pickle,
            ask=console_ask(),
        )
    except (ValueError, ImportError) as exc:
        print(f"parlour play: {exc}", file=sys.stderr)
        return 2
    return 0
