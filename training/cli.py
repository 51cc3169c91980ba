"""The ``parlour`` command line: ``parlour match``, ``parlour bench``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence


def _cmd_match(args: argparse.Namespace) -> int:
    from parlour.baselines import available
    from parlour.baselines.match import format_table, run_match
    from parlour.envs import ENVIRONMENTS

    if args.env not in ENVIRONMENTS:
        print(
            f"parlour match: unknown environment {args.env!r}; available: {sorted(ENVIRONMENTS)}",
            file=sys.stderr,
        )
        return 2
    bots = args.bots.split(",") if args.bots else [b for b in available(args.env) if not b.endswith("_oracle")]
    valid = available(args.env)
    unknown = [b for b in bots if b not in valid]
    if unknown:
        print(f"parlour match: unknown bot(s) {unknown} for {args.env}; available: {valid}", file=sys.stderr)
        return 2
    try:
        rows = run_match(
            args.env,
            bots,
            num_players=args.players,
            games=args.games,
            seed=args.seed,
            progress=not args.no_progress,
        )
    except ValueError as exc:
        print(f"parlour match: {exc}", file=sys.stderr)
        return 2
    print(f"\n{args.env}: {args.games} games, {args.players} players, seed {args.seed}, seats rotated")
    print(format_table(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from parlour.training.bench import format_bench, run_bench

    rows = run_bench(args.env, args.players, args.seconds)
    print(format_bench(rows))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="parlour", description="Parlour: hidden-information tabletop games for RL.")
    sub = parser.add_subparsers(dest="command", required=True)

    m = sub.add_parser("match", help="play scripted opponents against each other and print a results table")
    m.add_argument("env", nargs="?", default="six_suspects_v0", help="environment id (default six_suspects_v0)")
    m.add_argument("--bots", default=None, help="comma-separated bot names (default: every non-oracle bot)")
    m.add_argument("--players", type=int, default=4, help="number of players (default 4)")
    m.add_argument("--games", type=int, default=200, help="number of games (default 200)")
    m.add_argument("--seed", type=int, default=0, help="match seed: fixes every deal and every bot's choices")
    m.add_argument("--json", default=None, help="also write the rows to this JSON file")
    m.add_argument("--no-progress", action="store_true", help="no progress bar")
    m.set_defaults(func=_cmd_match)

    b = sub.add_parser("bench", help="random-play steps per second, compared with PettingZoo's leduc_holdem_v4")
    b.add_argument("--env", action="append", default=None, help="environment id (repeatable; default: all)")
    b.add_argument("--players", type=int, default=None, help="number of players (default: each env's default)")
    b.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement (default 3)")
    b.set_defaults(func=_cmd_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
