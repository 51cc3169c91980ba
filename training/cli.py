"""The ``parlour`` command line: ``train``, ``evaluate``, ``baselines``, ``benchmark``, ``export``, ``match``, ``bench``."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from typing import Any


def _cmd_match(args: argparse.Namespace) -> int:
    from parlour.baselines import seatable
    from parlour.baselines.match import format_table, run_match
    from parlour.envs import ENVIRONMENTS

    if args.env not in ENVIRONMENTS:
        print(
            f"parlour match: unknown environment {args.env!r}; available: {sorted(ENVIRONMENTS)}",
            file=sys.stderr,
        )
        return 2
    try:
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
        )
    except (ValueError, ImportError) as exc:
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


def _options(items: Sequence[str] | None) -> dict[str, Any] | None:
    """``--option key=value`` items as keywords (values read as YAML scalars); None after printing an error."""
    import yaml

    options: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep:
            print(f"parlour: --option {item!r} is not of the form key=value", file=sys.stderr)
            return None
        options[key] = yaml.safe_load(value)
    return options


def _resolve(spec: str, args: argparse.Namespace, options: dict[str, Any]) -> Any:
    from parlour.baselines import resolve

    return resolve(spec, args.env, args.players, options, trust_pickle=args.trust_pickle)


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from parlour.envs import ENVIRONMENTS
    from parlour.training.evaluate import format_report, run_evaluation, write_report

    if args.env not in ENVIRONMENTS:
        print(f"parlour evaluate: unknown environment {args.env!r}; available: {sorted(ENVIRONMENTS)}", file=sys.stderr)
        return 2
    options = _options(args.option)
    if options is None:
        return 2
    try:
        policies = [_resolve(p, args, options) for p in args.policies.split(",")]
        opponents = [_resolve(p, args, options) for p in args.opponents.split(",")] if args.opponents else None
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
    except (ValueError, ImportError) as exc:
        print(f"parlour evaluate: {exc}", file=sys.stderr)
        return 2
    print(format_report(report))
    if args.out:
        js, md = write_report(report, Path(args.out))
        print(f"\nwrote {js} and {md}")
    return 0


def _cmd_baselines(args: argparse.Namespace) -> int:
    from parlour.training.baselines_table import regenerate

    if args.render_only:
        from pathlib import Path

        from parlour.training.baselines_table import CHECKPOINTS, render

        Path("BASELINES.md").write_text(render(CHECKPOINTS))
        print("wrote BASELINES.md from the stored results")
        return 0
    try:
        regenerate(args.game, train_models=not args.skip_training, progress=not args.no_progress, jobs=args.jobs)
    except (ValueError, FileNotFoundError) as exc:
        print(f"parlour baselines: {exc}", file=sys.stderr)
        return 2
    return 0


def _trust_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--trust-pickle",
        action="store_true",
        help="also load SB3 *.zip checkpoints (unpickling them can run code stored in the file: only files you trust)",
    )


def _cmd_benchmark(args: argparse.Namespace) -> int:
    from parlour.envs import ENVIRONMENTS
    from parlour.training.benchmark import BenchmarkError, run_benchmark

    if args.env not in ENVIRONMENTS:
        print(
            f"parlour benchmark: unknown environment {args.env!r}; available: {sorted(ENVIRONMENTS)}", file=sys.stderr
        )
        return 2
    try:
        text = run_benchmark(
            args.env,
            args.policies.split(","),
            version=args.scenarios,
            out=args.out,
            compare=args.compare,
            trust_pickle=args.trust_pickle,
            progress=not args.no_progress,
        )
    except (BenchmarkError, ValueError, ImportError, FileNotFoundError) as exc:
        print(f"parlour benchmark: {exc}", file=sys.stderr)
        return 2
    print(text)
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    if not args.trust_pickle:
        print(
            f"parlour export: reading {args.source} unpickles it, which can run code stored in the file; "
            "pass --trust-pickle to convert a file you trust",
            file=sys.stderr,
        )
        return 2
    try:
        from parlour.training.policies import export_zip
    except ImportError as exc:
        print(f"parlour export: needs the 'train' extra (pip install 'parlour[train]'): {exc}", file=sys.stderr)
        return 2
    try:
        path = export_zip(args.source, args.target)
    except ValueError as exc:
        print(f"parlour export: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path} and {path.with_suffix('.safetensors')}")
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

    e = sub.add_parser("evaluate", help="evaluate policies (bots, shipped policies, policy files) with seat rotation")
    e.add_argument("env", help="environment id")
    e.add_argument(
        "--policies",
        required=True,
        help="comma-separated policies: bot or shipped names, policy files (*.json), module:attribute",
    )
    e.add_argument("--opponents", default=None, help="comma-separated opponents (default: the policies: cross-play)")
    e.add_argument("--players", type=int, default=4, help="number of players (default 4)")
    e.add_argument("--games", type=int, default=200, help="deals per matchup, each played once per seat (default 200)")
    e.add_argument("--seed-set", default="v1", help="versioned evaluation deal set (default v1)")
    e.add_argument("--option", action="append", help="a rule keyword of the game, key=value (repeatable)")
    e.add_argument("--out", default=None, help="folder for evaluation.json and evaluation.md")
    e.add_argument("--no-progress", action="store_true", help="no progress bar")
    _trust_flag(e)
    e.set_defaults(func=_cmd_evaluate)

    bl = sub.add_parser(
        "baselines",
        help="train every seed of the published baselines, evaluate them, rewrite BASELINES.md and the policy files",
    )
    bl.add_argument("--game", action="append", default=None, help="environment id (repeatable; default: all)")
    bl.add_argument("--skip-training", action="store_true", help="evaluate the shipped checkpoints, do not train")
    bl.add_argument(
        "--render-only", action="store_true", help="rewrite BASELINES.md from the stored results; no training or play"
    )
    bl.add_argument("--jobs", type=int, default=2, help="training seeds run at a time, one process each (default 2)")
    bl.add_argument("--no-progress", action="store_true", help="no progress bars")
    bl.set_defaults(func=_cmd_baselines)

    bm = sub.add_parser(
        "benchmark", help="put policies on a game's benchmark scenario (the BASELINES tables) and print their rows"
    )
    bm.add_argument("env", help="environment id")
    bm.add_argument(
        "policies", help="comma-separated policies: bot or shipped names, policy files (*.json), module:attribute"
    )
    bm.add_argument("--scenarios", default="v1", help="benchmark scenario set (default v1)")
    bm.add_argument("--out", default=None, help="folder for benchmark.json and benchmark.md")
    bm.add_argument("--compare", default=None, help="another benchmark.json to print beside (same scenario set only)")
    bm.add_argument("--no-progress", action="store_true", help="no progress bar")
    _trust_flag(bm)
    bm.set_defaults(func=_cmd_benchmark)

    ex = sub.add_parser("export", help="convert an SB3 checkpoint zip you trust into a safe policy file")
    ex.add_argument("source", help="the checkpoint zip (e.g. runs/.../model.zip)")
    ex.add_argument("target", help="the policy file to write: TARGET.json beside TARGET.safetensors")
    _trust_flag(ex)
    ex.set_defaults(func=_cmd_export)

    m = sub.add_parser("match", help="play scripted opponents against each other and print a results table")
    m.add_argument("env", nargs="?", default="six_suspects_v0", help="environment id (default six_suspects_v0)")
    m.add_argument(
        "--bots",
        default=None,
        help="comma-separated policies: bot or shipped names, policy files (*.json), module:attribute (default: every non-oracle bot and shipped policy that fits the table)",
    )
    m.add_argument("--players", type=int, default=4, help="number of players (default 4)")
    m.add_argument("--games", type=int, default=200, help="number of games (default 200)")
    m.add_argument("--seed", type=int, default=0, help="match seed: fixes every deal and every bot's choices")
    m.add_argument("--json", default=None, help="also write the rows to this JSON file")
    m.add_argument("--no-progress", action="store_true", help="no progress bar")
    _trust_flag(m)
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
