"""``parlour accusations``: Lady Alice only: how often each policy's accusations are right, and how often unsure."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from parlour.training.cli.common import add_table_flags, add_trust_flag, at_least, env_id, resolve_all

if TYPE_CHECKING:
    from parlour.training.cli.common import Subparsers


def add_parser(sub: Subparsers) -> None:
    ac = sub.add_parser(
        "accusations",
        help="Lady Alice: how often each policy's accusations are right, and how often it accused unsure",
    )
    ac.add_argument("env", type=env_id, help="the env id of a game that offers the accusations analysis (Lady Alice)")
    ac.add_argument("--policies", required=True, help="comma-separated policies (any policy spec)")
    ac.add_argument("--opponents", required=True, help="comma-separated opponents: one table of each")
    add_table_flags(ac, option=False)
    ac.add_argument("--games", type=at_least(1), default=50, help="deals per table, once per seat (default 50)")
    ac.add_argument("--seed-set", default="v1", help="versioned evaluation deal set (default v1)")
    add_trust_flag(ac)
    ac.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from parlour.training.analyses import analysis

    try:
        accusations = analysis(args.env, "accusations")
    except ValueError as exc:
        print(f"parlour accusations: {exc}", file=sys.stderr)
        return 2
    try:
        policies = resolve_all(args.policies.split(","), args, {})
        opponents = resolve_all(args.opponents.split(","), args, {})
        rows = accusations.table(
            args.env, policies, opponents, num_players=args.players, games=args.games, seed_set=args.seed_set
        )
    except (ValueError, ImportError) as exc:
        print(f"parlour accusations: {exc}", file=sys.stderr)
        return 2
    print(accusations.format_table(rows))
    return 0
