"""``parlour baselines``: train and evaluate the published baselines, and rewrite BASELINES.md and the policy files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from parlour.baselines.tracks import DEFAULT_TRACK, TRACKS
from parlour.training.cli.common import (
    add_envs,
    add_output_flags,
    add_scale_flags,
    at_least,
    chosen_envs,
    has_training_extra,
)

if TYPE_CHECKING:
    from parlour.training.cli.common import Subparsers


def add_parser(sub: Subparsers) -> None:
    bl = sub.add_parser(
        "baselines",
        help="train every seed of the published baselines, evaluate them, rewrite BASELINES.md and the policy files",
    )
    add_envs(bl, "--game")
    bl.add_argument(
        "--track",
        choices=list(TRACKS),
        default=DEFAULT_TRACK,
        help="which part of BASELINES.md to regenerate (default "
        + DEFAULT_TRACK
        + "): "
        + "; ".join(f"{t.name}, {t.summary}" for t in TRACKS.values()),
    )
    bl.add_argument(
        "--runs",
        default="",
        help="folder of the rl track's, the sweep's or the exploitability table's run folders (default docs/archive/runs, "
        "where the published runs' records are committed; docs/archive/runs/exploit for the exploitability table); "
        "finished runs there are kept, stopped ones resumed; an empty folder retrains from scratch",
    )
    bl.add_argument("--skip-training", action="store_true", help="evaluate the shipped checkpoints, do not train")
    bl.add_argument(
        "--render-only", action="store_true", help="rewrite BASELINES.md from the stored results; no training or play"
    )
    bl.add_argument(
        "--curves-only",
        action="store_true",
        help="with --track rl: recompute the stored learning curves (AUC, steps to level, figure) from the run "
        "folders' evaluations (after `python -m parlour.training.publish.initial_point RUN` added a step-0 point) and "
        "rewrite BASELINES.md; no training or play",
    )
    bl.add_argument(
        "--jobs", type=at_least(1), default=2, help="training seeds run at a time, one process each (default 2)"
    )
    add_output_flags(bl)
    add_scale_flags(bl)
    bl.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not has_training_extra("parlour baselines"):  # it reads the training configs, and trains
        return 2
    from parlour.training.publish import tracks

    if args.render_only:
        try:  # a malformed results file, or a link at BASELINES.md, is one line naming it
            tracks.rewrite(Path("."), published_folders()[0])
        except (ValueError, OSError) as exc:
            print(f"parlour baselines: {exc}", file=sys.stderr)
            return 2
        print("wrote BASELINES.md from the stored results")
        return 0
    from parlour.training.config import ConfigError
    from parlour.training.run import RunError, TrainingStopped

    try:
        _regenerate(args)
    except (ValueError, FileNotFoundError, ImportError, ConfigError, RunError, OSError) as exc:
        print(f"parlour baselines: {exc}", file=sys.stderr)
        return 2
    except TrainingStopped as exc:
        print(f"parlour baselines: {exc}; the same command continues it", file=sys.stderr)
        return exc.exit_code
    return 0


def published_folders(root: Path | None = None) -> tuple[Path, Path]:
    """Where the published files are read and written: the checkpoints (the shipped policies and the results; every
    seed's file lives in the archive beside them: :func:`~parlour.training.publish.schema.seeds_folder`) and the
    figures. In a clone of the repository (``baselines/checkpoints`` under ``root``, the working directory), its
    folders, where the files are committed: the installed package holds only what it ships (the shipped policies, the
    weights they name and the results), not every seed. Elsewhere, the installed package's folders."""
    from parlour.training.publish.schema import ARCHIVE, CHECKPOINTS, FIGURES

    root = root or Path.cwd()
    if (root / "baselines" / "checkpoints").is_dir():
        return root / "baselines" / "checkpoints", root / ARCHIVE / "figures"
    return CHECKPOINTS, FIGURES


def _regenerate(args: argparse.Namespace) -> None:
    """Regenerate the part of BASELINES.md that ``--track`` names (training what it needs, unless told not to), then
    print the rewritten BASELINES.md."""
    from parlour.training.publish import tracks

    folder, figures = published_folders()
    runs = Path(args.runs) if args.runs else None
    games = chosen_envs(args)  # positional ids or the old --game flag
    if args.curves_only and args.track != "rl":
        raise ValueError(
            f"--curves-only recomputes the rl track's learning curves: use it with --track rl, not {args.track}"
        )
    train_models, progress = not args.skip_training, not args.no_progress
    if args.curves_only:
        out = tracks.refresh_curves(games, runs=runs, folder=folder, figures=figures)
    elif args.track == "rl":
        out = tracks.regenerate(
            "rl",
            games,
            train_models=train_models,
            progress=progress,
            jobs=args.jobs,
            runs=runs,
            workers=args.workers,
            folder=folder,
            figures=figures,
        )
    elif args.track in ("sweep", "ablation"):
        out = tracks.regenerate(args.track, games, train_models=train_models, jobs=args.jobs, runs=runs, folder=folder)
    elif args.track == "exploit":
        out = tracks.regenerate(
            "exploit", games, progress=progress, train_models=train_models, runs=runs, folder=folder
        )
    elif args.track == "heldout":
        out = tracks.regenerate("heldout", games, progress=progress, folder=folder)
    else:
        out = tracks.regenerate(
            "distilled",
            games,
            train_models=train_models,
            progress=progress,
            jobs=args.jobs,
            workers=args.workers,
            ray_address=args.ray_address,
            folder=folder,
            figures=figures,
        )
    print(out.read_text())
