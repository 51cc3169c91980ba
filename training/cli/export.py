"""``parlour export``: convert an SB3 checkpoint zip you trust into a safe policy file."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from parlour.training.cli.common import add_trust_flag, has_training_extra

if TYPE_CHECKING:
    from parlour.training.cli.common import Subparsers


def add_parser(sub: Subparsers) -> None:
    ex = sub.add_parser("export", help="convert an SB3 checkpoint zip you trust into a safe policy file")
    ex.add_argument("source", help="the checkpoint zip (e.g. runs/.../model.zip)")
    ex.add_argument("target", help="the policy file to write: TARGET.json beside TARGET.safetensors")
    ex.add_argument(
        "--overwrite", action="store_true", help="let TARGET replace an existing policy file (refused without it)"
    )
    add_trust_flag(ex)
    ex.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from parlour.baselines.policy_file import paths
    from parlour.training.evaluation.games import check_new_file

    try:  # refused before the zip is read: either file of the pair may be someone's
        for path in paths(args.target):
            check_new_file("", path, args.overwrite)
    except OSError as exc:
        print(f"parlour export: {exc}", file=sys.stderr)
        return 2
    if not args.trust_pickle:
        print(
            f"parlour export: reading {args.source} unpickles it, which can run code stored in the file; "
            "pass --trust-pickle to convert a file you trust",
            file=sys.stderr,
        )
        return 2
    if not has_training_extra("parlour export", "parlour.training.policies"):
        return 2
    from parlour.training.policies import export_zip

    try:
        path = export_zip(args.source, args.target)
    except (ValueError, OSError) as exc:
        print(f"parlour export: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path} and {path.with_suffix('.safetensors')}")
    return 0
