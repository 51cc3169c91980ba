"""The ``parlour`` command line: ``train``, ``evaluate``, ``baselines``, ``benchmark``, ``exploit``, ``export``, ``match``, ``bench``,
``list``, ``play`` and ``replay``."""

from __future__ import annotations

import argparse
import json
import shlex
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def _cmd_match(args: argparse.Namespace) -> int:
    from parlour.baselines import seatable
    from parlour.baselines.match import format_table, run_match

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
            records=Path(args.records) if args.records else None,
            workers=args.workers,
            ray_address=args.ray_address,
        )
    except (ValueError, ImportError) as exc:
        print(f"parlour match: {exc}", file=sys.stderr)
        return 2
    print(f"\n{args.env}: {args.games} games, {args.players} players, seed {args.seed}, seats rotated")
    print(format_table(rows))
    if args.json:
        from parlour.envs.fileio import atomic_write

        atomic_write(args.json, json.dumps(rows, indent=2))
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    if args.train:
        from parlour.training import require_train_extra
        from parlour.training.shared_bench import format_train_bench, run_train_bench

        try:
            require_train_extra("parlour bench --train")
            threads = [int(t) for t in args.threads.split(",")]
            trainers = args.trainers.split(",") if args.trainers else [None]
            rows = run_train_bench(
                args.train, args.steps, threads, args.beside, args.max_seconds, args.repeats, trainers
            )
        except (ImportError, RuntimeError, ValueError) as exc:
            print(f"parlour bench: {exc}", file=sys.stderr)
            return 2
        print(format_train_bench(rows))
        return 0
    if args.eval_workers:
        from parlour.training.scenarios import LATEST, SCENARIO_SETS
        from parlour.training.shared_bench import format_eval_bench, run_eval_bench

        try:
            workers = [int(w) for w in args.eval_workers.split(",")]
            for env_name in _chosen_envs(args) or sorted(SCENARIO_SETS[LATEST]):
                print(format_eval_bench(env_name, run_eval_bench(env_name, workers, args.games, args.ray_address)))
        except (ImportError, ValueError) as exc:
            print(f"parlour bench: {exc}", file=sys.stderr)
            return 2
        return 0
    from parlour.training.bench import format_bench, run_bench

    rows = run_bench(_chosen_envs(args), args.players, args.seconds)
    print(format_bench(rows))
    return 0


def _default_runs(config: str, game: str, seed: int) -> list[Path]:
    """The default run folders of a config and seed, oldest first: ``runs/<game>/<config>-seed<seed>``, then
    ``…-2``, ``…-3`` for later runs of the same command."""
    base = Path("runs") / game / f"{Path(config).stem}-seed{seed}"
    found = [base] if base.exists() else []
    found += sorted(base.parent.glob(f"{base.name}-*"), key=lambda p: _suffix(p, base.name))
    return [p for p in found if _suffix(p, base.name) >= 0]


def _suffix(path: Path, base: str) -> int:
    tail = path.name[len(base) :]
    return 1 if not tail else int(tail[1:]) if tail[1:].isdigit() else -1


def _fresh_default_run(config: str, game: str, seed: int) -> Path:
    """A new run folder for a run started without ``--out``: the same command run again gets its own folder."""
    runs = [
        p
        for p in _default_runs(config, game, seed)
        if p.is_dir() and any(q.name != ".parlour-lock" for q in p.iterdir())
    ]
    base = Path("runs") / game / f"{Path(config).stem}-seed{seed}"
    if not runs:
        return base
    return base.parent / f"{base.name}-{_suffix(runs[-1], base.name) + 1}"


def _executable() -> str:
    """The command the user typed to run Parlour, for the lines that tell them what to type next: the ``parlour``
    script they ran (``.venv/bin/parlour`` when that is what ran), or ``python -m parlour.training.cli``."""
    argv0 = sys.argv[0] if sys.argv else ""
    if Path(argv0).name == "parlour":
        return shlex.quote(argv0)
    if argv0 and Path(argv0).resolve() == Path(__file__).resolve():  # python -m parlour.training.cli
        return f"{shlex.quote(sys.executable)} -m parlour.training.cli"
    return "parlour"


def _resume_line(run: Path) -> str:
    return f"{_executable()} train --resume --out {shlex.quote(str(run))}"


def _cmd_train(args: argparse.Namespace) -> int:
    try:
        from parlour.training import require_train_extra

        require_train_extra("parlour train")
        from parlour.training.config import ConfigError, load_config
        from parlour.training.train import (
            RunError,
            RunFinished,
            TrainingStopped,
            checkpoint_step,
            is_finished,
            is_run,
            resume_config,
            train,
        )
    except ImportError as exc:
        print(f"parlour train: {exc}", file=sys.stderr)
        return 2
    config, overrides = args.config, list(args.overrides)
    if config is not None and "=" in config and not config.endswith((".yaml", ".yml")):
        overrides.insert(0, config)  # `parlour train --resume --out RUN key=value`: no config file
        config = None
    if config is None and not (args.resume and args.out):
        print(
            "parlour train: name a config, e.g. `parlour train configs/six_suspects/quick.yaml`, or resume a run: "
            "`parlour train --resume --out RUN`",
            file=sys.stderr,
        )
        return 2
    command = shlex.join(["parlour", *args.argv])
    if args.ray_address:
        overrides.append(f"rllib.ray_address={args.ray_address}")
    if args.trust_pickle and not args.resume:
        overrides.append("trust_pickle=true")  # recorded in the run's config (a resume asks for the flag again)
    if args.seeds is not None:
        return _train_seeds(args, config, overrides, command)
    run: Path | None = None
    try:
        if args.resume:
            if args.out:
                run = Path(args.out)
            else:
                assert config is not None
                named = load_config(config, overrides)
                existing = _default_runs(config, named.game.name, named.seed)
                if not existing:
                    raise RunError(f"--resume: no run of {config} with seed {named.seed} under runs/; give --out RUN")
                run = existing[-1]
            cfg, changes = resume_config(run, overrides, trusted=args.trust_pickle)
            if is_finished(run, cfg):
                raise RunFinished(run, cfg.train.total_timesteps)
            step = checkpoint_step(run)
            at = f"step {step:,}" if step is not None else "the start"
            changed = "; changed on this command: " + ", ".join(
                f"{k} {old} -> {new}" for k, (old, new) in changes.items()
            )
            print(
                f"resuming {run} from {at} toward {cfg.train.total_timesteps:,} steps, with the config it was "
                f"started with ({run / 'config.yaml'}{changed if changes else ''})",
                file=sys.stderr,
            )
        else:
            assert config is not None
            cfg = load_config(config, overrides)
            run = Path(args.out) if args.out else _fresh_default_run(config, cfg.game.name, cfg.seed)
            print(f"run folder: {run}", file=sys.stderr)
        metrics = train(
            cfg,
            run,
            resume=args.resume,
            command=command,
            progress=not args.no_progress,
            overwrite=args.overwrite,
            trust_pickle=args.trust_pickle,
        )
    except RunFinished as exc:
        print(f"parlour train: {exc}", file=sys.stderr)
        return 0
    except (ConfigError, RunError, ValueError, OSError) as exc:
        print(f"parlour train: {exc}", file=sys.stderr)
        return 2
    except TrainingStopped as exc:
        assert run is not None
        print(f"parlour train: {exc}; resume with: {_resume_line(run)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        # a second Ctrl-C, or one during start-up or the final evaluation: say truthfully what was kept
        if run is not None and is_run(run):
            step = checkpoint_step(run)
            kept = f"from its checkpoint at step {step:,}" if step is not None else "from the start"
            print(f"parlour train: interrupted; the run continues {kept} with: {_resume_line(run)}", file=sys.stderr)
        else:
            print("parlour train: interrupted before the run folder was made; nothing was kept", file=sys.stderr)
        return 128 + _SIGNAL_RECEIVED[0]
    print(f"\nrun folder: {run}")
    env_share = metrics["env_share"]
    print(
        f"{metrics['timesteps']} timesteps; this session {metrics['session_steps']} steps in "
        f"{metrics['session_wall_seconds']:.0f} s ({metrics['steps_per_second'] or 0:.0f} steps/s"
        + (f", environment {100 * env_share:.0f}% of the time" if env_share is not None else "")
        + ")\n"
    )
    print((run / "final_eval.md").read_text())
    return 0


def _train_seeds(args: argparse.Namespace, config: str | None, overrides: list[str], command: str) -> int:
    """``parlour train CONFIG --seeds 0,1,2``: one run per seed, in parallel as Ray tasks (one CPU each, plus the
    env runners of an RLlib run), on the local machine or the cluster of ``--ray-address``."""
    from parlour.training.config import ConfigError, load_config
    from parlour.training.distributed import run_remote
    from parlour.training.train import train_job

    if config is None or args.resume:
        print("parlour train: --seeds starts new runs of a config (no --resume)", file=sys.stderr)
        return 2
    try:
        seeds = [int(x) for x in args.seeds.split(",") if x.strip()]
        if not seeds or len(set(seeds)) != len(seeds) or min(seeds) < 0:
            raise ValueError
    except ValueError:
        print(
            f"parlour train: --seeds {args.seeds!r} is not valid: expected distinct seeds, e.g. 0,1,2", file=sys.stderr
        )
        return 2
    jobs = []
    try:
        for k in seeds:
            cfg = load_config(config, [*overrides, f"seed={k}"])
            run = Path(args.out) / f"seed{k}" if args.out else _fresh_default_run(config, cfg.game.name, k)
            jobs.append((cfg, run, f"{command}  # seed {k}", args.overwrite))
    except ConfigError as exc:
        print(f"parlour train: {exc}", file=sys.stderr)
        return 2
    cpus = 1 + (jobs[0][0].rllib.num_env_runners if jobs[0][0].trainer == "rllib" else 0)
    print(
        f"training seeds {seeds} as Ray tasks ({cpus} CPU each): " + ", ".join(str(j[1]) for j in jobs), file=sys.stderr
    )
    try:
        results = run_remote(train_job, jobs, address=args.ray_address, cpus=cpus)
    except Exception as exc:  # noqa: BLE001 - a failed seed (a RayTaskError wraps its error) ends the sweep
        print(f"parlour train: a seed failed: {exc}", file=sys.stderr)
        return 1
    for (cfg, run, _, _), metrics in zip(jobs, results, strict=True):
        final = metrics.get("final_eval") or {}
        rate = final.get("ppo", {}).get("win_rate")
        print(f"seed {cfg.seed}: {run}, {metrics['timesteps']} steps in {metrics['train_wall_seconds']:.0f} s"
              + (f", final win rate {rate:.3f}" if rate is not None else ""))  # fmt: skip
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


def _resolve_all(specs: list[str], args: argparse.Namespace, options: dict[str, Any]) -> list[Any]:
    """Resolve specs with short table labels; two files whose labels collide are labelled by their whole path."""
    from collections import Counter

    from parlour.baselines import resolve

    policies = [_resolve(p, args, options) for p in specs]
    counts = Counter(p.name for p in policies)
    return [
        resolve(spec, args.env, args.players, options, trust_pickle=args.trust_pickle, label=spec)
        if counts[p.name] > 1 and spec != p.name
        else p
        for spec, p in zip(specs, policies, strict=True)
    ]


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from parlour.training.evaluate import format_report, run_evaluation, write_report

    options = _options(args.option)
    if options is None:
        return 2
    try:
        policies = _resolve_all(args.policies.split(","), args, options)
        opponents = _resolve_all(args.opponents.split(","), args, options) if args.opponents else None
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
            workers=args.workers,
            ray_address=args.ray_address,
        )
    except (ValueError, ImportError) as exc:
        print(f"parlour evaluate: {exc}", file=sys.stderr)
        return 2
    print(format_report(report))
    if args.out:
        js, md = write_report(report, Path(args.out))
        print(f"\nwrote {js} and {md}")
    return 0


def _cmd_accusations(args: argparse.Namespace) -> int:
    from parlour.training.deduction import accusation_table, format_accusations

    if not args.env.startswith("lady_alice_"):
        print(f"parlour accusations: {args.env} has no accusations: expected a lady_alice env", file=sys.stderr)
        return 2
    try:
        policies = _resolve_all(args.policies.split(","), args, {})
        opponents = _resolve_all(args.opponents.split(","), args, {})
        rows = accusation_table(
            args.env, policies, opponents, num_players=args.players, games=args.games, seed_set=args.seed_set
        )
    except (ValueError, ImportError) as exc:
        print(f"parlour accusations: {exc}", file=sys.stderr)
        return 2
    print(format_accusations(rows))
    return 0


def _cmd_baselines(args: argparse.Namespace) -> int:
    from parlour.training import require_train_extra

    try:
        require_train_extra("parlour baselines")  # it reads the training configs, and trains
    except ImportError as exc:
        print(f"parlour baselines: {exc}", file=sys.stderr)
        return 2
    from parlour.training.baselines_table import regenerate

    if args.render_only:
        from pathlib import Path

        from parlour.training.baselines_table import CHECKPOINTS, render

        Path("BASELINES.md").write_text(render(CHECKPOINTS))
        print("wrote BASELINES.md from the stored results")
        return 0
    from parlour.training.config import ConfigError
    from parlour.training.train import RunError, TrainingStopped

    runs = Path(args.runs) if args.runs else None
    try:
        if args.track == "rl":
            from parlour.training import rl_track

            rl_track.regenerate(
                args.envs or None,
                train_models=not args.skip_training,
                progress=not args.no_progress,
                jobs=args.jobs,
                runs=runs,
                workers=args.workers,
            )
        elif args.track == "sweep":
            from parlour.training import rl_track

            print(
                rl_track.regenerate_sweep(
                    args.envs or None, train_models=not args.skip_training, jobs=args.jobs, runs=runs
                ).read_text()
            )
        elif args.track == "exploit":
            from parlour.training import exploit

            print(exploit.regenerate(args.envs or None, progress=not args.no_progress, runs=runs).read_text())
        else:
            regenerate(
                args.envs or None,
                train_models=not args.skip_training,
                progress=not args.no_progress,
                jobs=args.jobs,
                workers=args.workers,
                ray_address=args.ray_address,
            )
    except (ValueError, FileNotFoundError, ImportError, ConfigError, RunError, OSError) as exc:
        print(f"parlour baselines: {exc}", file=sys.stderr)
        return 2
    except TrainingStopped as exc:
        print(f"parlour baselines: {exc}; the same command continues it", file=sys.stderr)
        return exc.exit_code
    return 0


def _scale_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workers",
        type=_at_least(1),
        default=1,
        help="Ray workers to share the games (default 1: this process, no Ray); the same results either way",
    )
    parser.add_argument(
        "--ray-address", default="", help="Ray cluster to join (e.g. auto); default: a local Ray in this process"
    )


def _trust_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--trust-pickle",
        action="store_true",
        help="also load SB3 *.zip checkpoints (unpickling them can run code stored in the file: only files you trust)",
    )


def _cmd_benchmark(args: argparse.Namespace) -> int:
    from parlour.training.benchmark import BenchmarkError, run_benchmark

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
        )
    except (BenchmarkError, ValueError, ImportError, FileNotFoundError) as exc:
        print(f"parlour benchmark: {exc}", file=sys.stderr)
        return 2
    print(text)
    return 0


def _cmd_exploit(args: argparse.Namespace) -> int:
    try:
        from parlour.training import require_train_extra

        require_train_extra("parlour exploit")
        from parlour.training.config import ConfigError
        from parlour.training.exploit import best_responses, format_report
        from parlour.training.train import RunError, TrainingStopped
    except ImportError as exc:
        print(f"parlour exploit: {exc}", file=sys.stderr)
        return 2
    try:
        seeds = [int(x) for x in args.seeds.split(",") if x.strip()]
    except ValueError:
        print(f"parlour exploit: --seeds {args.seeds!r} is not valid: expected seeds, e.g. 0,1,2", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else Path("runs") / "exploit" / args.env / _file_safe(args.policy)
    try:
        report = best_responses(
            args.env,
            args.policy,
            steps=args.steps,
            seeds=seeds,
            out=out,
            games=args.games,
            progress=not args.no_progress,
        )
    except (ConfigError, RunError, ValueError, OSError) as exc:
        print(f"parlour exploit: {exc}", file=sys.stderr)
        return 2
    except TrainingStopped as exc:
        print(f"parlour exploit: {exc}; the same command continues it", file=sys.stderr)
        return exc.exit_code
    text = format_report(report)
    from parlour.envs.fileio import atomic_write

    atomic_write(out / "exploit.json", json.dumps(report, indent=1))
    atomic_write(out / "exploit.md", text + "\n")
    print(text)
    return 0


def _file_safe(name: str) -> str:
    from parlour.baselines.match import file_safe

    return file_safe(name)


def _cmd_export(args: argparse.Namespace) -> int:
    if not args.trust_pickle:
        print(
            f"parlour export: reading {args.source} unpickles it, which can run code stored in the file; "
            "pass --trust-pickle to convert a file you trust",
            file=sys.stderr,
        )
        return 2
    try:
        from parlour.training import require_train_extra

        require_train_extra("parlour export")
        from parlour.training.policies import export_zip
    except ImportError as exc:
        print(f"parlour export: {exc}", file=sys.stderr)
        return 2
    try:
        path = export_zip(args.source, args.target)
    except ValueError as exc:
        print(f"parlour export: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path} and {path.with_suffix('.safetensors')}")
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
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


def _cmd_play(args: argparse.Namespace) -> int:
    from parlour.training.play import console_ask, play_game_with_person

    options = _options(args.option)
    if options is None:
        return 2
    try:
        play_game_with_person(
            args.env,
            num_players=args.players,
            seat=args.seat,
            opponents=args.opponents.split(",") if args.opponents else (),
            seed=args.seed,
            options=options,
            record_path=Path(args.record) if args.record else None,
            overwrite=args.overwrite,
            trust_pickle=args.trust_pickle,
            ask=console_ask(),
        )
    except (ValueError, ImportError) as exc:
        print(f"parlour play: {exc}", file=sys.stderr)
        return 2
    return 0


def _cmd_replay(args: argparse.Namespace) -> int:
    from parlour.training.play import console_ask, replay_game, shown

    try:
        replay_game(Path(args.record), perspective=args.perspective, god=args.god, ask=console_ask())
    except ValueError as exc:
        print(f"parlour replay: {shown(exc)}", file=sys.stderr)  # nothing from the file reaches the terminal raw
        return 2
    return 0


def _env_id(text: str) -> str:
    """An argparse type: a registered environment id, refused with the ids listed (every command names an env as a
    positional argument this way)."""
    from parlour.envs import ENVIRONMENTS

    if text not in ENVIRONMENTS:
        raise argparse.ArgumentTypeError(f"unknown environment {text!r}; available: {sorted(ENVIRONMENTS)}")
    return text


def _envs(p: argparse.ArgumentParser, old: str) -> None:
    """Positional env ids (default: all); ``old`` is the flag earlier versions took, still accepted."""
    p.add_argument("envs", nargs="*", type=_env_id, metavar="ENV", help="environment ids (default: all)")
    p.add_argument(old, dest="old_envs", action="append", default=[], type=_env_id, help=argparse.SUPPRESS)


def _chosen_envs(args: argparse.Namespace) -> list[str] | None:
    """The env ids given (positionally or by the old flag), ``None`` for all."""
    return [*args.envs, *args.old_envs] or None


def _at_least(low: int) -> Any:
    """An argparse type: an integer >= ``low``, refused with the range named."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is out of range: expected an integer >= {low}")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    from parlour.envs.core import package_version

    parser = argparse.ArgumentParser(prog="parlour", description="Parlour: hidden-information tabletop games for RL.")
    parser.add_argument("--version", action="version", version=f"parlour {package_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    t = sub.add_parser(
        "train",
        help="train MaskablePPO from a YAML config into a run folder, then evaluate it",
        usage="parlour train CONFIG [key=value ...] [--out RUN] [--overwrite] [--no-progress]\n"
        "       parlour train --resume --out RUN [key=value ...]   (or CONFIG --resume: its newest run)",
    )
    t.add_argument("config", nargs="?", default=None, help="YAML config, e.g. configs/six_suspects/quick.yaml")
    t.add_argument(
        "overrides",
        nargs="*",
        help="dotted overrides, e.g. train.total_timesteps=20000 seed=3 (on --resume, only "
        "train.total_timesteps, train.checkpoint_every, train.eval_every, train.torch_threads)",
    )
    t.add_argument(
        "--out", default=None, help="run folder (default runs/<game>/<config>-seed<seed>, then -2, -3, ... if taken)"
    )
    t.add_argument(
        "--resume",
        action="store_true",
        help="continue a run from its latest checkpoint with the config it was started with",
    )
    t.add_argument("--overwrite", action="store_true", help="delete the run in --out and start it afresh")
    t.add_argument(
        "--seeds",
        default=None,
        help="comma-separated seeds: one run each, in parallel as Ray tasks (run folders OUT/seedK, or the defaults)",
    )
    t.add_argument(
        "--ray-address",
        default="",
        help="Ray cluster to join for --seeds and trainer: rllib (sets rllib.ray_address); default: a local Ray",
    )
    t.add_argument(
        "--trust-pickle",
        action="store_true",
        help="trust what can run code: SB3 *.zip opponents, and on --resume a run folder's own trust_pickle, the "
        "Python files its config names and an SB3 zip checkpoint of an earlier Parlour (only for runs you trust)",
    )
    t.add_argument("--no-progress", action="store_true", help="no progress bars")
    t.set_defaults(func=_cmd_train)

    ls = sub.add_parser("list", help="the environments, and the bots and trained policies that play each")
    ls.add_argument("env", nargs="?", type=_env_id, default=None, help="one environment id (default: all)")
    ls.set_defaults(func=_cmd_list)

    e = sub.add_parser("evaluate", help="evaluate policies (bots, shipped policies, policy files) with seat rotation")
    e.add_argument("env", type=_env_id, help="environment id")
    e.add_argument(
        "--policies",
        required=True,
        help="comma-separated policies: bot or shipped names, policy files (*.json), module:NAME or path/to/file.py:NAME",
    )
    e.add_argument("--opponents", default=None, help="comma-separated opponents (default: the policies: cross-play)")
    e.add_argument("--players", type=int, default=4, help="number of players (default 4)")
    e.add_argument(
        "--games", type=_at_least(1), default=200, help="deals per matchup, each played once per seat (default 200)"
    )
    e.add_argument("--seed-set", default="v1", help="versioned evaluation deal set (default v1)")
    e.add_argument("--option", action="append", help="a rule keyword of the game, key=value (repeatable)")
    e.add_argument("--out", default=None, help="folder for evaluation.json and evaluation.md")
    e.add_argument(
        "--records", default=None, help="save every game's record in this folder (parlour replay reads them)"
    )
    e.add_argument("--no-progress", action="store_true", help="no progress bar")
    _trust_flag(e)
    _scale_flags(e)
    e.set_defaults(func=_cmd_evaluate)

    ac = sub.add_parser(
        "accusations",
        help="Lady Alice: how often each policy's accusations are right, and how often it accused unsure",
    )
    ac.add_argument("env", type=_env_id, help="a lady_alice env id")
    ac.add_argument("--policies", required=True, help="comma-separated policies (any policy spec)")
    ac.add_argument("--opponents", required=True, help="comma-separated opponents: one table of each")
    ac.add_argument("--players", type=int, default=4, help="number of players (default 4)")
    ac.add_argument("--games", type=_at_least(1), default=50, help="deals per table, once per seat (default 50)")
    ac.add_argument("--seed-set", default="v1", help="versioned evaluation deal set (default v1)")
    _trust_flag(ac)
    ac.set_defaults(func=_cmd_accusations)

    bl = sub.add_parser(
        "baselines",
        help="train every seed of the published baselines, evaluate them, rewrite BASELINES.md and the policy files",
    )
    _envs(bl, "--game")
    bl.add_argument(
        "--track",
        choices=("distilled", "rl", "sweep", "exploit"),
        default="distilled",
        help="which part of BASELINES.md to regenerate: the distilled track (default), the rl track (trained from the "
        "environment alone), its tuning sweep (on seeds kept apart), or the approximate-exploitability table",
    )
    bl.add_argument(
        "--runs",
        default="",
        help="folder of the rl track's, the sweep's or the exploitability table's run folders (default runs/rl, "
        "runs/rl, runs/exploit); "
        "finished runs there are kept, stopped ones resumed",
    )
    bl.add_argument("--skip-training", action="store_true", help="evaluate the shipped checkpoints, do not train")
    bl.add_argument(
        "--render-only", action="store_true", help="rewrite BASELINES.md from the stored results; no training or play"
    )
    bl.add_argument(
        "--jobs", type=_at_least(1), default=2, help="training seeds run at a time, one process each (default 2)"
    )
    bl.add_argument("--no-progress", action="store_true", help="no progress bars")
    _scale_flags(bl)
    bl.set_defaults(func=_cmd_baselines)

    bm = sub.add_parser(
        "benchmark", help="put policies on a game's benchmark scenario (the BASELINES tables) and print their rows"
    )
    bm.add_argument("env", type=_env_id, help="environment id")
    bm.add_argument(
        "policies",
        help="comma-separated policies: bot or shipped names, policy files (*.json), module:NAME or path/to/file.py:NAME",
    )
    bm.add_argument(
        "--scenarios",
        default=None,
        help="benchmark scenario set (default: the game's newest, the one BASELINES.md publishes: v2 for Elevenses, v1 for the others)",
    )
    bm.add_argument(
        "--deals",
        type=_at_least(1),
        default=None,
        help="play only the scenario's first N deals: a quick partial run, labelled so (the full scenario, the "
        "default, is the only one comparable with BASELINES.md)",
    )
    bm.add_argument("--out", default=None, help="folder for benchmark.json and benchmark.md")
    bm.add_argument("--compare", default=None, help="another benchmark.json to print beside (same scenario set only)")
    bm.add_argument("--no-progress", action="store_true", help="no progress bar")
    _trust_flag(bm)
    _scale_flags(bm)
    bm.set_defaults(func=_cmd_benchmark)

    xp = sub.add_parser(
        "exploit",
        help="approximate exploitability: train best responses from scratch against a policy and report their win rate",
    )
    xp.add_argument("env", type=_env_id, help="environment id")
    xp.add_argument("policy", help="the policy exploited: it fills every other seat (any policy spec)")
    xp.add_argument("--steps", type=_at_least(1), default=1_000_000, help="each best response's budget (default 1M)")
    xp.add_argument("--seeds", default="0,1,2", help="training seeds of the best responses (default 0,1,2)")
    xp.add_argument("--games", type=_at_least(1), default=200, help="evaluation deals, once per seat (default 200)")
    xp.add_argument("--out", default=None, help="folder of the runs and exploit.json (default runs/exploit/ENV/POLICY)")
    xp.add_argument("--no-progress", action="store_true", help="no progress bars")
    xp.set_defaults(func=_cmd_exploit)

    ex = sub.add_parser("export", help="convert an SB3 checkpoint zip you trust into a safe policy file")
    ex.add_argument("source", help="the checkpoint zip (e.g. runs/.../model.zip)")
    ex.add_argument("target", help="the policy file to write: TARGET.json beside TARGET.safetensors")
    _trust_flag(ex)
    ex.set_defaults(func=_cmd_export)

    m = sub.add_parser("match", help="play scripted opponents against each other and print a results table")
    m.add_argument(
        "env", nargs="?", type=_env_id, default="six_suspects_v0", help="environment id (default six_suspects_v0)"
    )
    m.add_argument(
        "--bots",
        default=None,
        help="comma-separated policies: bot or shipped names, policy files (*.json), module:NAME or path/to/file.py:NAME (default: every non-oracle bot and shipped policy that fits the table)",
    )
    m.add_argument("--players", type=int, default=4, help="number of players (default 4)")
    m.add_argument("--games", type=_at_least(1), default=200, help="number of games (default 200)")
    m.add_argument("--seed", type=int, default=0, help="match seed: fixes every deal and every bot's choices")
    m.add_argument("--json", default=None, help="also write the rows to this JSON file")
    m.add_argument(
        "--records", default=None, help="save every game's record in this folder (parlour replay reads them)"
    )
    m.add_argument("--no-progress", action="store_true", help="no progress bar")
    _trust_flag(m)
    _scale_flags(m)
    m.set_defaults(func=_cmd_match)

    p = sub.add_parser("play", help="take a seat yourself against bots or trained policies, in the terminal")
    p.add_argument("env", type=_env_id, help="environment id")
    p.add_argument("--players", type=int, default=None, help="number of players (default: the game's default)")
    p.add_argument("--seat", type=int, default=None, help="your seat, 0-based (default: drawn)")
    p.add_argument(
        "--opponents",
        default=None,
        help="comma-separated policies, one for every other seat or one for all (default: the game's heuristic bot)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="the deal and the bots' choices (default: drawn, and shown when the game is over)",
    )
    p.add_argument("--option", action="append", help="a rule keyword of the game, key=value (repeatable)")
    p.add_argument(
        "--record",
        default=None,
        help="where to save the game record; an existing file is refused unless --overwrite "
        "(default records/<env>_play_….json, never overwritten)",
    )
    p.add_argument("--overwrite", action="store_true", help="let --record replace an existing file")
    _trust_flag(p)
    p.set_defaults(func=_cmd_play)

    r = sub.add_parser("replay", help="step through a saved game as one seat saw it (or everything, with --god)")
    r.add_argument("record", help="a game record (from play, match --records or evaluate --records)")
    r.add_argument("--perspective", default=None, help="the seat to watch, e.g. player_2 (default: yours, or player_0)")
    r.add_argument("--god", action="store_true", help="show everything: every hand and every move")
    r.set_defaults(func=_cmd_replay)

    b = sub.add_parser("bench", help="random-play steps per second, compared with PettingZoo's leduc_holdem_v4")
    _envs(b, "--env")
    b.add_argument("--players", type=int, default=None, help="number of players (default: each env's default)")
    b.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement (default 3)")
    b.add_argument(
        "--train",
        default=None,
        metavar="CONFIG",
        help="instead: training steps/s of CONFIG alone and beside busy processes, per learner thread count",
    )
    b.add_argument("--steps", type=_at_least(1), default=50_000, help="with --train: steps per run (default 50000)")
    b.add_argument("--threads", default="1,2", help="with --train: learner thread counts (default 1,2)")
    b.add_argument("--trainers", default=None, help="with --train: compare trainers on the same config, e.g. sb3,rllib")
    b.add_argument(
        "--eval-workers",
        default=None,
        metavar="N,M",
        help="instead: evaluation games/s of each env's benchmark scenario with N, M… Ray workers",
    )
    b.add_argument("--games", type=_at_least(1), default=20, help="with --eval-workers: deals per matchup (default 20)")
    b.add_argument("--ray-address", default="", help="with --eval-workers: Ray cluster to join (default: local)")
    b.add_argument("--beside", type=_at_least(0), default=1, help="with --train: busy processes beside (default 1)")
    b.add_argument("--repeats", type=_at_least(1), default=1, help="with --train: interleaved repeats (default 1)")
    b.add_argument(
        "--max-seconds", type=float, default=600.0, help="with --train: stop a run after this long (default 600)"
    )
    b.set_defaults(func=_cmd_bench)
    return parser


#: The signal that interrupted the command (SIGINT unless SIGTERM came): its exit status is 128 + it.
_SIGNAL_RECEIVED = [int(signal.SIGINT)]


def _terminate(signum: int, frame: Any) -> None:
    _SIGNAL_RECEIVED[0] = signum
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        # `parlour train CONFIG --out RUN key=value`: overrides may stand after options too
        if args.command == "train" and all("=" in e and not e.startswith("-") for e in extra):
            args.overrides = [*args.overrides, *extra]
        else:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.argv = argv
    previous = signal.signal(signal.SIGTERM, _terminate) if _main_thread() else None
    try:
        result: int = args.func(args)
    except KeyboardInterrupt:
        # one line, not a traceback; `parlour train` handles its own stops (it saves a checkpoint first)
        print(f"parlour {args.command}: interrupted", file=sys.stderr)
        return 128 + _SIGNAL_RECEIVED[0]
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return result


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


if __name__ == "__main__":
    raise SystemExit(main())
