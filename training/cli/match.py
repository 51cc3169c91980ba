"""``parlour match``: play scripted opponents (or any policies) against each other and print a results table."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from parlour.training.cli.common import (
    POLICIES_HELP,
    add_output_flags,
    add_scale_flags,
    add_table_flags,
    add_trust_flag,
    at_least,
    env_id,
)

if TYPE_CHECKING:
    from parlour.training.cli.common import Subparsers


def add_parser(sub: Subparsers) -> None:
    m = sub.add_parser("match", help="play scripted opponents against each other and print a results table")
    m.add_argument(
        "env", nargs="?", type=env_id, default="six_suspects_v0", help="environment id (default six_suspects_v0)"
    )
    m.add_argument(
        "--bots",
        default=None,
        help=f"{POLICIES_HELP} (default: every non-oracle bot and shipped policy that fits the table)",
    )
    add_table_flags(m, option=False)
    m.add_argument("--games", type=at_least(1), default=200, help="number of games (default 200)")
    m.add_argument("--seed", type=int, default=0, help="match seed: fixes every deal and every bot's choices")
    m.add_argument("--json", default=None, help="also write the rows to this JSON file")
    add_output_flags(m, records=True)
    m.add_argument(
        "--overwrite",
        action="store_true",
        help="let --json replace an existing file and --records write into a folder that holds files (records of "
        "the same names are replaced; without it both are refused before any game)",
    )
    add_trust_flag(m)
    add_scale_flags(m)
    m.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from parlour.baselines import seatable
    from parlour.training.evaluation.games import check_new_file, check_records_folder
    from parlour.training.evaluation.match import format_table, run_match

    try:  # refused before any game is played, not after
        if args.json:
            check_new_file("--json", Path(args.json), args.overwrite)
        if args.records:
            check_records_folder(Path(args.records), args.overwrite)
        bots = (
            args.bots.split(",") if args.bots else [b for b in seatable(args.env, args.players) if "_oracle" not in b]
        )
        rows = run_match(
            args.env,
            bots,
            num_players=args.players,
            games=args.games,
            seed=args.seed,
            progress=not args.no_progress,
            trust_pickle=args.trust_pickle,
            records=Path(args.records) if args.records else None,
            overwrite=args.overwrite,
            workers=args.workers,
            ray_address=args.ray_address,
        )
    except (ValueError, ImportError, OSError) as exc:
        print(f"parlour match: {exc}", file=sys.stderr)
        return 2
    print(f"\n{args.env}: {args.games} games, {args.players} players, seed {args.seed}, seats rotated")
    print(format_table(rows))
    if args.json:
        from parlour.envs.fileio import atomic_write

        try:  # never replaces a file that appeared while the games were played, unless --overwrite
            atomic_write(args.json, json.dumps(rows, indent=2), replace=args.overwrite)
        except OSError as exc:
            print(f"parlour match: {exc}", file=sys.stderr)
            return 2
    return 0
