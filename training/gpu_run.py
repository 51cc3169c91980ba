"""A GPU run in one command: the jitted trainer's steps per second at large batch sizes.

``python -m parlour.training.gpu_run`` trains ``--config`` (default ``configs/lady_alice/rl.yaml``) with
``trainer=jax`` once per batch size of ``--batches`` (values of ``train.n_envs``, default ``4096,16384,65536``), each
for the same number of updates (``--updates``, default 20) of short rollouts (``ppo.n_steps`` = ``--n-steps``,
default 16, so that a 65,536-game batch fits in memory and the whole run takes a few minutes). Each update's
minibatches are ``--minibatches`` (default 8) equal parts of its batch: ``ppo.batch_size`` grows with the batch
instead of staying the config's, so the learner's sequential steps per update stay few. ``--set KEY=VALUE``
(repeatable) overrides anything afterwards, these settings included. Each size trains into ``OUT/B/`` (``--out``,
default a new temporary folder), with no periodic evaluation unless ``--eval-every N`` asks for one (then played on
the JAX core, ``train.eval_backend=jax``, against the config's opponents that have a batched bot, and its points
printed as the run goes) and no final evaluation: this measures speed, not strength.

On a machine with a GPU and JAX's CUDA wheels (``pip install 'parlour[jax]'`` then ``pip install -U
"jax[cuda12]"``), one command::

    python -m parlour.training.gpu_run --config configs/lady_alice/rl.yaml --batches 4096,16384,65536 --out gpu_out

It prints one Markdown table row per batch size as it finishes -- the backend (``jax.default_backend()`` and the
device kind, e.g. ``gpu (NVIDIA H200)``, or ``cpu``), the batch size, the first update's seconds (it holds the
compilation), the steady steps per second after it, the whole run's steps per second and its wall seconds -- then
the whole table with its header and the exact command line that produced it, and writes the same to
``OUT/gpu_run.md`` and ``OUT/gpu_run.json``. ``--time-limit SECONDS`` starts no new batch size once that many
seconds have passed (the sizes left are named). Without JAX it says what to install and exits 2; without an
accelerator it runs on JAX's CPU backend and says, in one line, that its figures are CPU figures.

This project's sessions run without a GPU: ``tests/test_gpu_run.py`` keeps the command tested on the CPU with tiny
batches, and the GPU figures are for whoever runs it on one.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: The command's name, as it is typed.
COMMAND = "python -m parlour.training.gpu_run"
#: The table's header (Markdown).
HEADER = (
    "| backend | n_envs | first update (compiles), s | steady steps/s | whole-run steps/s | wall, s |\n"
    "|---|---:|---:|---:|---:|---:|"
)
CUDA = 'pip install -U "jax[cuda12]"'
INSTALL = f"pip install 'parlour[jax]' (and for a GPU the CUDA wheels: {CUDA})"


class GpuRunError(ValueError):
    """An argument out of range; the message is one line naming it."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=COMMAND, description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--config", default="configs/lady_alice/rl.yaml", help="the training config")
    p.add_argument("--batches", default="4096,16384,65536", help="batch sizes: values of train.n_envs")
    p.add_argument("--updates", default="20", help="PPO updates per batch size (default 20)")
    p.add_argument("--n-steps", default="16", help="ppo.n_steps: steps per game per update (default 16)")
    p.add_argument("--minibatches", default="8", help="minibatches per epoch: ppo.batch_size = batch / this")
    p.add_argument("--eval-every", default="0", help="steps between periodic evaluations on the JAX core (0: none)")
    p.add_argument("--out", default=None, help="output folder (default: a new temporary folder)")
    p.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE", help="a config override"
    )
    p.add_argument("--time-limit", default=None, help="seconds after which no new batch size is started")
    return p


def _count(flag: str, text: str, low: int) -> int:
    try:
        value = int(text)
    except ValueError:
        value = low - 1
    if value < low:
        raise GpuRunError(f"{flag} {text!r}: expected an integer >= {low}")
    return value


def _batches(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",")]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        raise GpuRunError(f"--batches {text!r}: expected positive batch sizes (train.n_envs), e.g. 4096,16384,65536")
    return values


def _seconds(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise GpuRunError(f"--time-limit {text!r}: expected a number of seconds >= 0")
    return value


def device() -> tuple[str, str]:
    """JAX's default backend (``gpu``, ``tpu``, ``cpu``) and its first device's kind (``NVIDIA H200``, ``cpu``)."""
    import jax

    return jax.default_backend(), str(jax.devices()[0].device_kind)


def backend_label(backend: str, kind: str) -> str:
    return backend if kind.lower() == backend.lower() else f"{backend} ({kind})"


def _number(value: float | None, places: int) -> str:
    return "–" if value is None else f"{value:,.{places}f}"


def format_row(row: dict[str, Any]) -> str:
    return (
        f"| {row['backend']} | {row['n_envs']:,} | {_number(row['first_update_seconds'], 1)} | "
        f"{_number(row['steady_steps_per_second'], 0)} | {_number(row['steps_per_second'], 0)} | "
        f"{_number(row['wall_seconds'], 1)} |"
    )


def format_report(report: dict[str, Any]) -> str:
    lines = [HEADER, *(format_row(r) for r in report["rows"]), "", f"Command: `{report['command']}`"]
    lines += [f"Note: {note}" for note in report["notes"]]
    return "\n".join(lines) + "\n"


def overrides_for(
    n_envs: int, updates: int, n_steps: int, minibatches: int, eval_every: int, opponents: Sequence[str]
) -> list[str]:
    """The overrides of one batch size (the command's ``--set`` ones follow them and win)."""
    total = n_envs * n_steps * updates
    out = [
        "trainer=jax",
        f"train.n_envs={n_envs}",
        f"ppo.n_steps={n_steps}",
        f"ppo.batch_size={max(2, n_envs * n_steps // minibatches)}",
        f"train.total_timesteps={total}",
        f"train.checkpoint_every={total}",
        f"train.eval_every={eval_every}",
    ]
    if eval_every:
        out += ["train.eval_backend=jax", f"eval.opponents=[{','.join(opponents)}]"]
    return out


def _batched_opponents(config: str, overrides: Sequence[str]) -> list[str]:
    """The config's ``eval.opponents`` that have a batched bot (those ``train.eval_backend=jax`` can play)."""
    from parlour.baselines.jax_bots import bots
    from parlour.training.config import read_config

    cfg = read_config(config, overrides)
    batched = bots(cfg.game.name)
    return [o for o in cfg.eval.opponents if o in batched] or ["random"]


def _has_jax_eval() -> bool:
    """Whether this Parlour's config has ``train.eval_backend`` (periodic evaluations on the JAX core)."""
    import dataclasses

    from parlour.training.config import TrainBudget

    return any(f.name == "eval_backend" for f in dataclasses.fields(TrainBudget))


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(args_list)
    command = " ".join([COMMAND, *(shlex.quote(a) for a in args_list)])
    try:
        sizes = _batches(args.batches)
        updates = _count("--updates", args.updates, 1)
        n_steps = _count("--n-steps", args.n_steps, 2)
        minibatches = _count("--minibatches", args.minibatches, 1)
        eval_every = _count("--eval-every", args.eval_every, 0)
        limit = _seconds(args.time_limit)
    except GpuRunError as exc:
        print(f"gpu_run: {exc}", file=sys.stderr)
        return 2
    try:
        import jax  # noqa: F401
    except ImportError:
        print(f"gpu_run: JAX is not installed: {INSTALL}", file=sys.stderr)
        return 2
    from parlour.training.config import load_config
    from parlour.training.run import TrainingStopped
    from parlour.training.train import train

    backend, kind = device()
    label = backend_label(backend, kind)
    notes: list[str] = []
    if backend == "cpu":
        notes.append(f"no accelerator: JAX runs on its CPU backend, so these are CPU figures (for a GPU: {CUDA})")
        print(f"gpu_run: {notes[-1]}", flush=True)
    if eval_every and not _has_jax_eval():
        notes.append("--eval-every ignored: this Parlour has no train.eval_backend=jax, so no evaluations were played")
        print(f"gpu_run: {notes[-1]}", flush=True)
        eval_every = 0
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="parlour-gpu-run-"))
    report: dict[str, Any] = {
        "command": command,
        "config": args.config,
        "backend": backend,
        "device_kind": kind,
        "updates": updates,
        "n_steps": n_steps,
        "minibatches": minibatches,
        "eval_every": eval_every,
        "overrides": list(args.overrides),
        "rows": [],
        "notes": notes,
    }
    print(f"gpu_run: {label}, {len(sizes)} batch sizes of {updates} updates each, into {out}", flush=True)
    print(HEADER, flush=True)
    start = time.perf_counter()
    status = 0
    try:
        opponents = _batched_opponents(args.config, args.overrides) if eval_every else []
        for i, n_envs in enumerate(sizes):
            overrides = [*overrides_for(n_envs, updates, n_steps, minibatches, eval_every, opponents), *args.overrides]
            cfg = load_config(args.config, overrides)
            began = time.perf_counter()
            metrics = train(cfg, out / str(n_envs), command=command, progress=False, final_eval=False, overwrite=True)
            wall = time.perf_counter() - began
            row = {
                "backend": label,
                "n_envs": n_envs,
                "timesteps": metrics["timesteps"],
                "first_update_seconds": metrics.get("first_update_seconds"),
                "steady_steps_per_second": metrics.get("steady_steps_per_second"),
                "steps_per_second": metrics.get("steps_per_second"),
                "wall_seconds": wall,
                "overrides": overrides,
            }
            if eval_every:
                from parlour.training.run import evaluations

                row["curve"] = evaluations(out / str(n_envs))
            report["rows"].append(row)
            print(format_row(row), flush=True)
            left = sizes[i + 1 :]
            if left and limit is not None and time.perf_counter() - start >= limit:
                notes.append(
                    f"--time-limit {args.time_limit} s reached after n_envs={n_envs}: not started: "
                    f"{', '.join(map(str, left))}"
                )
                print(f"gpu_run: {notes[-1]}", flush=True)
                break
    except TrainingStopped as exc:
        notes.append(f"stopped: {exc}")
        print(f"gpu_run: {notes[-1]}", file=sys.stderr)
        status = 1
    except (ValueError, RuntimeError, ImportError, OSError) as exc:  # a config error, a folder in use, out of memory
        print(f"gpu_run: {exc}", file=sys.stderr)
        if not report["rows"]:
            return 2
        notes.append(
            f"failed after {len(report['rows'])} batch sizes: {str(exc).splitlines()[0] if str(exc) else exc!r}"
        )
        status = 2
    text = format_report(report)
    from parlour.envs.fileio import atomic_write

    atomic_write(out / "gpu_run.json", json.dumps(report, indent=1, default=str) + "\n")
    atomic_write(out / "gpu_run.md", text)
    print("\n" + text, end="", flush=True)
    print(f"gpu_run: written {out / 'gpu_run.md'} and {out / 'gpu_run.json'}", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
