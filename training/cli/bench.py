"""``parlour bench``: steps per second: random play against PettingZoo's leduc_holdem_v4, training, or evaluation."""

from __future__ import annotations

import argparse
import math
import sys
from typing import TYPE_CHECKING

from parlour.training.cli.common import add_envs, add_output_flags, add_table_flags, chosen_envs

if TYPE_CHECKING:
    from parlour.training.cli.common import Subparsers


def add_parser(sub: Subparsers) -> None:
    b = sub.add_parser("bench", help="random-play steps per second, compared with PettingZoo's leduc_holdem_v4")
    add_envs(b, "--env")
    add_table_flags(b, None, option=False)
    b.add_argument("--seconds", default="3", help="seconds per measurement (default 3)")
    b.add_argument(
        "--train",
        default=None,
        metavar="CONFIG",
        help="instead: training steps/s of CONFIG alone and beside busy processes, per learner thread count",
    )
    b.add_argument(
        "--profile",
        action="store_true",
        help="with --train (one or more configs, comma-separated): where the jitted trainer's update spends its time "
        "(env, rollout, learning), per config",
    )
    b.add_argument("--updates", default="3", help="with --profile: timed updates per part (default 3)")
    b.add_argument("--steps", default="50000", help="with --train: steps per run (default 50000)")
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
    b.add_argument(
        "--observer",
        action="store_true",
        help="instead: steps/s of each env with its incremental observations beside writing each from scratch",
    )
    b.add_argument("--games", default="20", help="with --eval-workers: deals per matchup (default 20)")
    b.add_argument("--ray-address", default="", help="with --eval-workers: Ray cluster to join (default: local)")
    b.add_argument("--beside", default="1", help="with --train: busy processes beside (default 1)")
    b.add_argument("--repeats", default="1", help="with --train: interleaved repeats (default 1)")
    b.add_argument("--max-seconds", default="600", help="with --train: stop a run after this long (default 600)")
    add_output_flags(b)
    b.set_defaults(func=run)


#: The most busy processes ``--beside`` starts (each is a whole CPU-bound process).
MAX_BESIDE = 1024

#: Every number ``parlour bench`` takes: flag -> (kind, low, whether low itself is allowed, high). Read here rather
#: than by argparse so that each bad value is one line (argparse adds the usage), and bounded so that none is a
#: traceback or a meaningless table.
NUMBERS: dict[str, tuple[type, float, bool, float]] = {
    "--seconds": (float, 0, False, math.inf),
    "--max-seconds": (float, 0, False, math.inf),
    "--steps": (int, 1, True, math.inf),
    "--games": (int, 1, True, math.inf),
    "--beside": (int, 0, True, MAX_BESIDE),
    "--repeats": (int, 1, True, math.inf),
    "--updates": (int, 1, True, math.inf),
}
#: The comma-separated lists of counts: flag -> what they count and an example.
COUNTS = {
    "--threads": ("learner thread counts", "1,2"),
    "--eval-workers": ("worker counts", "1,2"),
    "--batch": ("batch sizes", "1,64,1024"),
}


class BenchError(ValueError):
    """A flag of ``parlour bench`` out of range; the message names it and the range."""


def _number(flag: str, text: str) -> float:
    kind, low, inclusive, high = NUMBERS[flag]
    try:
        value = kind(text)
    except ValueError:
        raise BenchError(f"{flag} {text} is not {'an integer' if kind is int else 'a number'}") from None
    if not (value >= low if inclusive else value > low) or not value <= high or not math.isfinite(value):
        noun = "an integer" if kind is int else "a number" if math.isfinite(value) else "a finite number"
        bound = f"in [{low}, {high}]" if high < math.inf else f"{'>=' if inclusive else '>'} {low}"
        raise BenchError(f"{flag} {text} is out of range: expected {noun} {bound}")
    return value


def _counts(flag: str, text: str) -> list[int]:
    what, example = COUNTS[flag]
    try:
        values = [int(part) for part in text.split(",")]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        raise BenchError(f"{flag} {text!r}: expected positive {what}, e.g. {example}")
    return values


def check_numbers(args: argparse.Namespace) -> None:
    """Read every number of ``args`` in place (lists of counts only where given), or raise :class:`BenchError`."""
    for flag in NUMBERS:
        dest = flag[2:].replace("-", "_")
        setattr(args, dest, _number(flag, str(getattr(args, dest))))
    for flag in COUNTS:
        dest = flag[2:].replace("-", "_")
        if getattr(args, dest) is not None:
            _counts(flag, getattr(args, dest))
    if args.players is not None and args.players < 1:
        raise BenchError(f"--players {args.players} is out of range: expected an integer >= 1")


def run(args: argparse.Namespace) -> int:
    try:
        check_numbers(args)
    except BenchError as exc:
        print(f"parlour bench: {exc}", file=sys.stderr)
        return 2
    modes = [f for f, on in (("--train", args.train), ("--eval-workers", args.eval_workers), ("--jax", args.jax),
                             ("--observer", args.observer)) if on]  # fmt: skip
    if len(modes) > 1:
        print(f"parlour bench: {' and '.join(modes)} are different benches: give one of them", file=sys.stderr)
        return 2
    if args.train and args.profile:
        return _profile_bench(args)
    if args.train:
        return _train_bench(args)
    if args.eval_workers:
        return _eval_bench(args)
    if args.jax:
        return _jax_bench(args)
    from parlour.training.bench import format_bench, format_observer_bench, run_bench, run_observer_bench

    try:
        if args.observer:
            print(format_observer_bench(run_observer_bench(chosen_envs(args), args.players, args.seconds)))
            return 0
        rows = run_bench(chosen_envs(args), args.players, args.seconds)
    except ValueError as exc:  # a --players the game does not seat
        print(f"parlour bench: {exc}", file=sys.stderr)
        return 2
    print(format_bench(rows))
    return 0


def _train_bench(args: argparse.Namespace) -> int:
    """``--train CONFIG``: training steps/s alone and beside busy processes, per learner thread count."""
    from parlour.training import require_train_extra
    from parlour.training.shared_bench import format_train_bench, run_train_bench

    try:
        require_train_extra("parlour bench --train")
        threads = _counts("--threads", args.threads)
        trainers = args.trainers.split(",") if args.trainers else [None]
        rows = run_train_bench(
            args.train, args.steps, threads, args.beside, args.max_seconds, args.repeats, trainers, args.overrides
        )
    except (ImportError, RuntimeError, ValueError) as exc:
        print(f"parlour bench: {exc}", file=sys.stderr)
        return 2
    print(format_train_bench(rows))
    return 0


def _profile_bench(args: argparse.Namespace) -> int:
    """``--train CONFIG[,CONFIG…] --profile``: the jitted trainer's update timed in its parts, per config."""
    try:
        from parlour.training.jax_profile import format_profile, profile_config
    except ImportError as exc:
        print(f"parlour bench --profile: {exc}: pip install 'parlour[jax]'", file=sys.stderr)
        return 2
    rows = []
    for config in args.train.split(","):
        try:
            rows.append(profile_config(config, args.overrides, args.updates))
        except (OSError, ValueError) as exc:
            print(f"parlour bench: {exc}", file=sys.stderr)
            return 2
        print(format_profile(rows[-1:]).splitlines()[-1] if len(rows) > 1 else format_profile(rows), flush=True)
    return 0


def _eval_bench(args: argparse.Namespace) -> int:
    """``--eval-workers N,M``: evaluation games/s of each env's benchmark scenario, per Ray worker count."""
    from parlour.training.scenarios import LATEST, SCENARIO_SETS
    from parlour.training.shared_bench import format_eval_bench, run_eval_bench

    try:
        workers = _counts("--eval-workers", args.eval_workers)
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
        from parlour.envs.jax_core.bench import format_jax_bench, run_jax_bench, stages

        sizes = _counts("--batch", args.batch)
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
    import importlib.util

    from tqdm import tqdm

    # compiling every core at every batch size takes minutes: a bar on stderr says where the bench is
    total = stages(envs, sizes, pgx=importlib.util.find_spec("pgx") is not None)
    with tqdm(total=total, desc="bench --jax", unit="stage", file=sys.stderr, disable=args.no_progress) as bar:

        def progress(what: str) -> None:
            bar.set_postfix_str(what, refresh=False)
            bar.update(1)

        result = run_jax_bench(envs, sizes, args.seconds, progress)
    print(format_jax_bench(result))
    return 0
