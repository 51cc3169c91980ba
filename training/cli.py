"""The ``parlour`` command line: ``train``, ``evaluate``, ``baselines``, ``match``, ``bench``."""

from __future__ import annotations

import argparse
import json
import shlex
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


def _cmd_train(args: argparse.Namespace) -> int:
    from pathlib import Path

    from parlour.training.config import ConfigError, load_config

    try:
        cfg = load_config(args.config, args.overrides)
    except ConfigError as exc:
        print(f"parlour train: {exc}", file=sys.stderr)
        return 2
    try:
        from parlour.training.train import RunError, train
    except ImportError as exc:
        print(f"parlour train: training needs the 'train' extra (pip install 'parlour[train]'): {exc}", file=sys.stderr)
        return 2
    stem = Path(args.config).stem
    run = Path(args.out) if args.out else Path("runs") / cfg.game.name / f"{stem}-seed{cfg.seed}"
    command = shlex.join(["parlour", *args.argv])
    try:
        metrics = train(cfg, run, resume=args.resume, command=command, progress=not args.no_progress)
    except (RunError, ValueError) as exc:
        print(f"parlour train: {exc}", file=sys.stderr)
        return 2
    print(f"\nrun folder: {run}")
    print(
        f"{metrics['timesteps']} timesteps; this session {metrics['session_steps']} steps in "
        f"{metrics['session_wall_seconds']:.0f} s ({metrics['steps_per_second'] or 0:.0f} steps/s, "
        f"environment {100 * (metrics['env_share'] or 0):.0f}% of the time)\n"
    )
    print((run / "final_eval.md").read_text())
    return 0


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from parlour.envs import ENVIRONMENTS
    from parlour.training.evaluate import format_report, run_evaluation, write_report
    from parlour.training.policies import CheckpointError, resolve_policy

    if args.env not in ENVIRONMENTS:
        print(f"parlour evaluate: unknown environment {args.env!r}; available: {sorted(ENVIRONMENTS)}", file=sys.stderr)
        return 2
    options = {}
    for item in args.option or []:
        key, sep, value = item.partition("=")
        if not sep:
            print(f"parlour evaluate: --option {item!r} is not of the form key=value", file=sys.stderr)
            return 2
        import yaml

        options[key] = yaml.safe_load(value)
    try:
        policies = [resolve_policy(p, args.env, args.players) for p in args.policies.split(",")]
        opponents = (
            [resolve_policy(p, args.env, args.players) for p in args.opponents.split(",")] if args.opponents else None
        )
        report = run_evaluation(
            args.env,
            policies,
            opponents,
            num_players=args.players,
            games=args.games,
            seed_set=args.seed_set,
            env_kwargs=options,
            progress=not args.no_progress,
        )
    except (ValueError, CheckpointError, ImportError) as exc:
        print(f"parlour evaluate: {exc}", file=sys.stderr)
        return 2
    print(format_report(report))
    if args.out:
        js, md = write_report(report, Path(args.out))
        print(f"\nwrote {js} and {md}")
    return 0


def _cmd_baselines(args: argparse.Namespace) -> int:
    from parlour.training.baselines_table import regenerate

    try:
        regenerate(args.game, train_models=not args.skip_training, progress=not args.no_progress)
    except (ValueError, FileNotFoundError) as exc:
        print(f"parlour baselines: {exc}", file=sys.stderr)
        return 2
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="parlour", description="Parlour: hidden-information tabletop games for RL.")
    sub = parser.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="train MaskablePPO from a YAML config into a run folder, then evaluate it")
    t.add_argument("config", help="YAML config, e.g. configs/six_suspects/quick.yaml")
    t.add_argument("overrides", nargs="*", help="dotted overrides, e.g. train.total_timesteps=20000 seed=3")
    t.add_argument("--out", default=None, help="run folder (default runs/<game>/<config>-seed<seed>)")
    t.add_argument("--resume", action="store_true", help="continue the run in --out from its latest checkpoint")
    t.add_argument("--no-progress", action="store_true", help="no progress bars")
    t.set_defaults(func=_cmd_train)

    e = sub.add_parser("evaluate", help="evaluate policies (bot names, checkpoint paths) with seat rotation")
    e.add_argument("env", help="environment id")
    e.add_argument("--policies", required=True, help="comma-separated bot names or checkpoint paths")
    e.add_argument("--opponents", default=None, help="comma-separated opponents (default: the policies: cross-play)")
    e.add_argument("--players", type=int, default=4, help="number of players (default 4)")
    e.add_argument("--games", type=int, default=200, help="deals per matchup, each played once per seat (default 200)")
    e.add_argument("--seed-set", default="v1", help="versioned evaluation deal set (default v1)")
    e.add_argument("--option", action="append", help="a rule keyword of the game, key=value (repeatable)")
    e.add_argument("--out", default=None, help="folder for evaluation.json and evaluation.md")
    e.add_argument("--no-progress", action="store_true", help="no progress bar")
    e.set_defaults(func=_cmd_evaluate)

    bl = sub.add_parser("baselines", help="regenerate BASELINES.md (and the shipped checkpoints) from configs")
    bl.add_argument("--game", action="append", default=None, help="environment id (repeatable; default: all)")
    bl.add_argument("--skip-training", action="store_true", help="evaluate the shipped checkpoints, do not train")
    bl.add_argument("--no-progress", action="store_true", help="no progress bars")
    bl.set_defaults(func=_cmd_baselines)

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
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
