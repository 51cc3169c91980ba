"""``parlour benchmark``: put policies on a game's benchmark scenario (the BASELINES tables) and print their rows."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from parlour.training.cli.common import (
    POLICIES_HELP,
    add_output_flags,
    add_scale_flags,
    add_trust_flag,
    at_least,
    env_id,
)

if TYPE_CHECKING:
    from parlour.training.cli.common import Subparsers


def add_parser(sub: Subparsers) -> None:
    bm = sub.add_parser(
        "benchmark", help="put policies on a game's benchmark scenario (the BASELINES tables) and print their rows"
    )
    bm.add_argument("env", type=env_id, help="environment id")
    bm.add_argument("policies", help=POLICIES_HELP)
    bm.add_argument(
        "--scenarios",
        default=None,
        help="benchmark scenario set (default: the game's newest, the one BASELINES.md publishes: v2 for Elevenses, v1 for the others)",
    )
    bm.add_argument(
        "--deals",
        type=at_least(1),
        default=None,
        help="play only the scenario's first N deals: a quick partial run, labelled so (the full scenario, the "
        "default, is the only one comparable with BASELINES.md)",
    )
    bm.add_argument("--out", default=None, help="folder for benchmark.json and benchmark.md")
    bm.add_argument("--compare", default=None, help="another benchmark.json to print beside (same scenario set only)")
    bm.add_argument(
        "--overwrite", action="store_true", help="let --out replace an existing benchmark.json/.md (refused without it)"
    )
    add_output_flags(bm)
    add_trust_flag(bm)
    add_scale_flags(bm)
    bm.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from parlour.training.publish.benchmark import BenchmarkError, run_benchmark

    try:
        text = run_benchmark(
            args.env,
            args.policies.split(","),
            version=args.scenarios,
            out=args.out,
            compare=args.compare,
            trust_pickle=args.trust_pickle,
            progress=not args.no_progress,
            workers=args.workers,
            ray_address=args.ray_address,
            deals=args.deals,
            overwrite=args.overwrite,
        )
    except (BenchmarkError, ValueError, ImportError, OSError) as exc:
        print(f"parlour benchmark: {exc}", file=sys.stderr)
        return 2
    print(text)
    return 0
