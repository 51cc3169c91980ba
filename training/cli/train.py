"""``parlour train``: train from a YAML config into a run folder (or resume one, or sweep seeds), then evaluate it."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from parlour.training.cli.common import add_output_flags, executable, has_training_extra, signal_exit_status

if TYPE_CHECKING:
    from parlour.training.cli.common import Subparsers
    from parlour.training.config import TrainConfig


def add_parser(sub: Subparsers) -> None:
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
        help="trust what can run code: SB3 *.zip opponents, and on --resume a run folder's own trust_pickle, "
        "everything its config names (as --trust) and an SB3 zip checkpoint of an earlier Parlour (only for runs you "
        "trust)",
    )
    t.add_argument(
        "--trust",
        action="store_true",
        help="on --resume, accept what the run folder's config names that reaches beyond it -- a Ray address, "
        "module:NAME or file.py:NAME policies, process counts (docs/training.md lists the keys) -- without repeating "
        "each on the command line (only for runs you trust; SB3 zips still need --trust-pickle)",
    )
    add_output_flags(t)
    t.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not has_training_extra("parlour train", "parlour.training.config", "parlour.training.train"):
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
    return _train_run(args, config, overrides, command)


def _train_run(args: argparse.Namespace, config: str | None, overrides: list[str], command: str) -> int:
    """One run: a new one, or ``--resume`` of an existing one; its summary, or one line saying why it stopped."""
    from parlour.training.config import ConfigError, load_config
    from parlour.training.run import RunError, RunFinished, TrainingStopped
    from parlour.training.train import train

    run: Path | None = None
    try:
        if args.resume:
            # the folder first, on its own: an interrupt while its config is read still names the run to resume
            run = _run_to_resume(args, config, overrides)
            cfg = _resumed_config(run, overrides, args.trust, args.trust_pickle)
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
        return _interrupted(run)
    _print_summary(run, metrics)
    return 0


def _run_to_resume(args: argparse.Namespace, config: str | None, overrides: list[str]) -> Path:
    """``--out``, or else the newest default run folder of the config and its seed."""
    from parlour.training.config import load_config
    from parlour.training.run import RunError

    if args.out:
        return Path(args.out)
    assert config is not None
    named = load_config(config, overrides)
    existing = _default_runs(config, named.game.name, named.seed)
    if not existing:
        raise RunError(f"--resume: no run of {config} with seed {named.seed} under runs/; give --out RUN")
    return existing[-1]


def _resumed_config(run: Path, overrides: list[str], trust: bool, trust_pickle: bool) -> TrainConfig:
    """The config a run was started with, changed by the overrides a resume may make; says where it resumes from."""
    from parlour.training.run import RunFinished, checkpoint_step, is_finished, resume_config

    cfg, changes = resume_config(run, overrides, trust=trust, trust_pickle=trust_pickle)
    if is_finished(run, cfg):
        raise RunFinished(run, cfg.train.total_timesteps)
    step = checkpoint_step(run)
    at = f"step {step:,}" if step is not None else "the start"
    changed = "; changed on this command: " + ", ".join(f"{k} {old} -> {new}" for k, (old, new) in changes.items())
    print(
        f"resuming {run} from {at} toward {cfg.train.total_timesteps:,} steps, with the config it was "
        f"started with ({run / 'config.yaml'}{changed if changes else ''})",
        file=sys.stderr,
    )
    return cfg


def _interrupted(run: Path | None) -> int:
    """A second Ctrl-C, or one during start-up or the final evaluation: say truthfully what was kept."""
    from parlour.training.run import checkpoint_step, is_run

    if run is not None and is_run(run):
        try:
            step = checkpoint_step(run)
        except ValueError as exc:  # a damaged checkpoint: say so rather than a traceback
            print(f"parlour train: interrupted; {exc}", file=sys.stderr)
            return signal_exit_status()
        kept = f"from its checkpoint at step {step:,}" if step is not None else "from the start"
        print(f"parlour train: interrupted; the run continues {kept} with: {_resume_line(run)}", file=sys.stderr)
    else:
        print("parlour train: interrupted before the run folder was made; nothing was kept", file=sys.stderr)
    return signal_exit_status()


def _print_summary(run: Path, metrics: dict[str, Any]) -> None:
    print(f"\nrun folder: {run}")
    env_share = metrics["env_share"]
    print(
        f"{metrics['timesteps']} timesteps; this session {metrics['session_steps']} steps in "
        f"{metrics['session_wall_seconds']:.0f} s ({metrics['steps_per_second'] or 0:.0f} steps/s"
        + (f", environment {100 * env_share:.0f}% of the time" if env_share is not None else "")
        + ")\n"
    )
    from parlour.training.evaluation.matchups import format_report
    from parlour.training.run import FINAL_REPORT

    if metrics.get(FINAL_REPORT) is not None:
        print(format_report(metrics[FINAL_REPORT]))


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


def _resume_line(run: Path) -> str:
    """The command that resumes ``run``, repeating the values of its config that a resume must be given again (an
    address, an importable name, a process count: a run folder's config cannot set them on its own)."""
    from parlour.training.config import ConfigError, override, reaching_values
    from parlour.training.run import RunError, read_saved_config

    try:
        again = [override(k, v) for k, v in reaching_values(read_saved_config(run)).items()]
    except (ConfigError, RunError):
        again = []
    return f"{executable()} train " + shlex.join(["--resume", "--out", str(run), *again])


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
