"""``parlour evaluate``: evaluate policies against each other (or chosen opponents) with seat rotation."""

from __future__ import annotations

import argparse
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
    parse_options,
    resolve_all,
)

if TYPE_CHECKING:
    from parlour.training.cli.common import Subparsers


def add_parser(sub: Subparsers) -> None:
    e = sub.add_parser("evaluate", help="evaluate policies (bots, shipped policies, policy files) with seat rotation")
    e.add_argument("env", type=env_id, help="environment id")
    e.add_argument("--policies", required=True, help=POLICIES_HELP)
    e.add_argument("--opponents", default=None, help="comma-separated opponents (default: the policies: cross-play)")
    e.add_argument(
        "--games", type=at_least(1), default=200, help="deals per matchup, each played once per seat (default 200)"
    )
    e.add_argument("--seed-set", default="v1", help="versioned evaluation deal set (default v1)")
    add_table_flags(e)
    e.add_argument("--out", default=None, help="folder for evaluation.json and evaluation.md")
    add_output_flags(e, records=True)
    e.add_argument(
        "--overwrite",
        action="store_true",
        help="let --out replace an existing evaluation.json/.md and --records write into a folder that holds files "
        "(records of the same names are replaced; without it both are refused before any game)",
    )
    add_trust_flag(e)
    add_scale_flags(e)
    e.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from parlour.training.evaluation.games import check_new_file, check_records_folder
    from parlour.training.evaluation.matchups import format_report, report_paths, run_evaluation, write_report

    options = parse_options(args.option)
    if options is None:
        return 2
    try:  # refused before any game is played, not after
        for path in report_paths(Path(args.out)) if args.out else ():
            check_new_file("--out", path, args.overwrite)
        if args.records:
            check_records_folder(Path(args.records), args.overwrite)
        policies = resolve_all(args.policies.split(","), args, options)
        opponents = resolve_all(args.opponents.split(","), args, options) if args.opponents else None
        report = run_evaluation(
            args.env,
            policies,
            opponents,
            num_players=args.players,
            games=args.games,
            seed_set=args.seed_set,
            env_kwargs=options,
            progress=not args.no_progress,
            records=Path(args.records) if args.records else None,
            overwrite=args.overwrite,
            workers=args.workers,
            ray_address=args.ray_address,
        )
    except (ValueError, ImportError, OSError) as exc:
        print(f"parlour evaluate: {exc}", file=sys.stderr)
        return 2
    print(format_report(report))
    if args.out:
        try:  # never replaces a file that appeared while the games were played, unless --overwrite
            js, md = write_report(report, Path(args.out), overwrite=args.overwrite)
        except OSError as exc:
            print(f"parlour evaluate: {exc}", file=sys.stderr)
            return 2
        print(f"\nwrote {js} and {md}")
    return 0
