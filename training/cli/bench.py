"""``parlour bench``: steps per second: random play against PettingZoo's leduc_holdem_v4, training, or evaluation."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from parlour.training.cli.common import add_envs, add_table_flags, at_least, chosen_envs

if TYPE_CHECKING:
    from parlour.training.cli.common import Subparsers


def add_parser(sub: Subparsers) -> None:
    b = sub.add_parser("bench", help="random-play steps per second, compared with PettingZoo's leduc_holdem_v4")
    add_envs(b, "--env")
    add_table_flags(b, None, option=False)
    b.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement (default 3)")
    b.add_argument(
        "--train",
        default=None,
        metavar="CONFIG",
        help="instead: training steps/s of CONFIG alone and beside busy processes, per learner thread count",
    )
    b.add_argument("--steps", type=at_least(1), default=50_000, help="with --train: steps per run (default 50000)")
    b.add_argument("--threads", default="1,2", help="with --train: learner thread counts (default 1,2)")
    b.add_argument(
        "--trainers", default=None, help="with --train: compare trainers on the same config, e.g. sb3,rllib,jax"
    )
    b.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="with --train: a config override for every run (repeatable), e.g. --set 'ppo.net_arch=[64,64]'",
    )
    b.add_argument(
        "--eval-workers",
        default=None,
        metavar="N,M",
        help="instead: evaluation games/s of each env's benchmark scenario with N, M… Ray workers",
    )
    b.add_argument(
        "--jax",
        action="store_true",
        help="instead: decisions/s of each env's JAX core (parlour[jax]) at --batch sizes, beside the scalar env and "
        "Pgx's leduc_holdem",
    )
    b.add_argument("--batch", default="1,64,1024,4096", help="with --jax: batch sizes (default 1,64,1024,4096)")
    b.add_argument("--games", type=at_least(1), default=20, help="with --eval-workers: deals per matchup (default 20)")
    b.add_argument("--ray-address", default="", help="with --eval-workers: Ray cluster to join (default: local)")
    b.add_argument("--beside", type=at_least(0), default=1, help="with --train: busy processes beside (default 1)")
    b.add_argument("--repeats", type=at_least(1), default=1, help="with --train: interleaved repeats (default 1)")
    b.add_argument(
        "--max-seconds", type=float, default=600.0, help="with --train: stop a run after this long (default 600)"
    )
    b.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.train:
        return _train_bench(args)
    if args.eval_workers:
        return _eval_bench(args)
    if args.jax:
        return _jax_bench(args)
    from parlour.training.bench import format_bench, run_bench

    rows = run_bench(chosen_envs(args), args.players, args.seconds)
    print(format_bench(rows))
    return 0


def _train_bench(args: argparse.Namespace) -> int:
    """``--train CONFIG``: training steps/s alone and beside busy processes, per learner thread count."""
    from parlour.training import require_train_extra
    from parlour.training.shared_bench import format_train_bench, run_train_bench

    try:
        require_train_extra("parlour bench --train")
        threads = [int(t) for t in args.threads.split(",")]
        trainers = args.trainers.split(",") if args.trainers else [None]
        rows = run_train_bench(
            args.train, args.steps, threads, args.beside, args.max_seconds, args.repeats, trainers, args.overrides
        )
    except (ImportError, RuntimeError, ValueError) as exc:
        print(f"parlour bench: {exc}", file=sys.stderr)
        return 2
    print(format_train_bench(rows))
    return 0


def _eval_bench(args: argparse.Namespace) -> int:
    """``--eval-workers N,M``: evaluation games/s of each env's benchmark scenario, per Ray worker count."""
    from parlour.training.scenarios import LATEST, SCENARIO_SETS
    from parlour.training.shared_bench import format_eval_bench, run_eval_bench

    try:
        workers = [int(w) for w in args.eval_workers.split(",")]
        for env_name in chosen_envs(args) or sorted(SCENARIO_SETS[LATEST]):
            print(format_eval_bench(env_name, run_eval_bench(env_name, workers, args.games, args.ray_address)))
    except (ImportError, ValueError) as exc:
        print(f"parlour bench: {exc}", file=sys.stderr)
        return 2
    return 0


def _jax_bench(args: argparse.Namespace) -> int:
    """``--jax``: decisions/s of the JAX cores at each batch size, beside the scalar envs and Pgx's leduc_holdem."""
    try:
        from parlour.envs.jax_core import CORES
        from parlour.envs.jax_core.bench import format_jax_bench, run_jax_bench

        try:
            sizes = [int(b) for b in args.batch.split(",")]
        except ValueError:
            sizes = []
        if not sizes or min(sizes) < 1:
            raise ValueError(f"--batch {args.batch!r}: expected positive batch sizes, e.g. 1,64,1024")
        envs = chosen_envs(args) or sorted(CORES)
        missing = sorted(set(envs) - set(CORES))
        if missing:
            raise ValueError(f"no JAX core for {missing}; the cores: {sorted(CORES)}")
    except ImportError as exc:
        print(f"parlour bench --jax: {exc}: pip install 'parlour[jax]'", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"parlour bench: {exc}", file=sys.stderr)
        return 2
    print(format_jax_bench(run_jax_bench(envs, sizes, args.seconds)))
    return 0
