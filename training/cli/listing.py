"""``parlour list``: the environments, and the bots and trained policies that play each."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from parlour.training.cli.common import env_id

if TYPE_CHECKING:
    from parlour.training.cli.common import Subparsers


def add_parser(sub: Subparsers) -> None:
    ls = sub.add_parser("list", help="the environments, and the bots and trained policies that play each")
    ls.add_argument("env", nargs="?", type=env_id, default=None, help="one environment id (default: all)")
    ls.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from parlour.baselines import SHIPPED, available, shipped_path
    from parlour.baselines.policy_file import read_spec, track_of
    from parlour.envs import ENVIRONMENTS, make

    names = [args.env] if args.env else list(ENVIRONMENTS)
    for name in names:
        env = make(name)
        print(
            f"{name}  (version {env.env_version}; {env.min_players}-{env.max_players} players, default {env.num_players})"
        )
        bots = [b for b in available(name) if b not in SHIPPED]
        print(f"  bots: {', '.join(bots)}")
        for policy in (p for p in available(name) if p in SHIPPED):
            spec = read_spec(shipped_path(policy))
            print(f"  trained: {policy} ({spec['num_players']} players; {track_of(spec)}; {shipped_path(policy)})")
    print(
        "\nAny command also takes a policy file (NAME.json beside NAME.safetensors), module:NAME or path/to/file.py:NAME."
    )
    return 0
