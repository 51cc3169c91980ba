"""``parlour bench --train CONFIG``: how training speed holds up when other work shares the machine.

For each learner thread count, the config is trained for a fixed number of steps alone and then beside
``beside`` busy processes (each a Python loop that never sleeps, standing in for another CPU-bound job), in
interleaved order so that a drift of the machine's speed hits both alike. Each run is a real ``parlour train`` in
its own process (a fresh interpreter, its own run folder); its training steps per second come from the run's
``metrics.json`` (the final evaluation is not timed). A run that outlasts ``max_seconds`` is stopped with SIGINT,
which saves its checkpoint and its steps so far, and its rate is read from those.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: A CPU-bound process that never sleeps.
BUSY_LOOP = "while True: pass"
#: ``parlour`` on Python 3.10, which lacks ``-P``: ``-c`` puts the current folder ('') first on ``sys.path``, and
#: this drops it before anything is imported from there.
SAFE_MAIN = (
    "import sys\nif sys.path[:1] == ['']:\n    del sys.path[0]\nfrom parlour.training.cli import main\nsys.exit(main())"
)


def parlour_command(version: tuple[int, ...] = tuple(sys.version_info[:2])) -> list[str]:
    """The command line that runs ``parlour`` in a fresh process of this interpreter with the current folder kept
    off ``sys.path`` (``python -m`` puts it first: a stray ``omegaconf.py`` in the folder a run starts in would run
    in place of the library): ``-P`` on Python 3.11+, a ``-c`` that drops it on 3.10 (``version``: for tests)."""
    if version >= (3, 11):
        return [sys.executable, "-P", "-m", "parlour.training.cli"]
    return [sys.executable, "-c", SAFE_MAIN]


def train_rate(
    config: str,
    steps: int,
    threads: int,
    beside: int,
    max_seconds: float,
    trainer: str | None = None,
    overrides: Sequence[str] = (),
) -> dict[str, Any]:
    """Train ``config`` (with ``overrides``) for ``steps`` with ``threads`` learner threads beside ``beside`` busy
    processes (with ``trainer``: that trainer instead of the config's, the same config otherwise)."""
    # -I: the loop imports nothing, so nothing from the current folder or the user's site either
    busy = [subprocess.Popen([sys.executable, "-I", "-c", BUSY_LOOP]) for _ in range(beside)]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            run = Path(tmp) / "run"
            cmd = [
                *parlour_command(),
                "train",
                config,
                f"train.total_timesteps={steps}",
                f"train.torch_threads={threads}",
                "train.eval_every=0",
                f"train.checkpoint_every={steps}",
                "eval.games=1",
                "eval.reference=[]",
                *([f"trainer={trainer}"] if trainer else []),
                *overrides,
                "--out",
                str(run),
                "--no-progress",
            ]
            start = time.perf_counter()
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            try:
                _, err = proc.communicate(timeout=max_seconds)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGINT)  # saves the steps so far and their time
                _, err = proc.communicate()
            wall = time.perf_counter() - start
            metrics_path = run / "metrics.json"
            if not metrics_path.is_file():
                raise RuntimeError(f"the training run failed: {err.strip().splitlines()[-1:]}")
            metrics = json.loads(metrics_path.read_text())
    finally:
        for p in busy:
            p.kill()
            p.wait()
    done = int(metrics["timesteps"])
    seconds = float(metrics["train_wall_seconds"])
    return {
        "trainer": trainer or "config",
        "threads": threads,
        "beside": beside,
        "timesteps": done,
        "train_seconds": seconds,
        "steps_per_s": done / seconds if seconds > 0 else 0.0,
        # trainer: jax compiles in its first update; its rate after it is the steady one (None for the others)
        "first_update_seconds": metrics.get("first_update_seconds"),
        "steady_steps_per_s": metrics.get("steady_steps_per_second"),
        "finished": done >= steps,
        "command_seconds": wall,
    }


def run_train_bench(
    config: str,
    steps: int,
    threads: Sequence[int],
    beside: int,
    max_seconds: float,
    repeats: int = 1,
    trainers: Sequence[str | None] = (None,),
    overrides: Sequence[str] = (),
) -> list[dict[str, Any]]:
    rows = []
    for _ in range(repeats):
        for trainer in trainers:
            for t in threads:
                for b in dict.fromkeys((0, beside)):  # interleaved: alone, then shared, for each thread count
                    rows.append(train_rate(config, steps, t, b, max_seconds, trainer, overrides))
    return rows


def format_train_bench(rows: Sequence[dict[str, Any]], cpus: int | None = None) -> str:
    cpus = cpus or os.cpu_count() or 1
    alone: dict[tuple[str, int], list[float]] = {}
    for r in rows:
        if r["beside"] == 0:
            alone.setdefault((r.get("trainer", "config"), r["threads"]), []).append(r["steps_per_s"])
    lines = [
        f"Training steps per second on {cpus} CPUs (the final evaluation not timed):",
        "",
        "| trainer | learner threads | busy processes beside | steps | train seconds | steps/s | × alone | "
        "first update s | steps/s after it |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        base = alone.get((r.get("trainer", "config"), r["threads"]))
        ratio = r["steps_per_s"] / (sum(base) / len(base)) if base and r["beside"] else 1.0
        note = "" if r["finished"] else " (stopped)"
        lines.append(
            f"| {r.get('trainer', 'config')} | {r['threads']} | {r['beside']} | {r['timesteps']:,}{note} | "
            f"{r['train_seconds']:.0f} | {r['steps_per_s']:,.0f} | {ratio:.2f} | {_maybe(r.get('first_update_seconds'), '.1f')} | "
            f"{_maybe(r.get('steady_steps_per_s'), ',.0f')} |"
        )
    lines += ["", "(first update: trainer jax compiles its whole update loop then; – where a trainer has no such step)"]
    return "\n".join(lines)


def _maybe(value: float | None, spec: str) -> str:
    return "–" if value is None else format(value, spec)


def run_eval_bench(env_name: str, workers: Sequence[int], games: int, address: str = "") -> list[dict[str, Any]]:
    """Evaluation games per second of the game's benchmark scenario (every bot of its ladder against each opponent
    table) played by each number of Ray workers; Ray's start and its workers' first start are not timed."""
    from parlour.baselines import make
    from parlour.training.distributed import map_shards, start_ray
    from parlour.training.evaluation.matchups import run_evaluation
    from parlour.training.scenarios import resolve_opponents, scenario

    sc = scenario(env_name, "v1")
    policies = [make(name, env_name) for name in sc.opponents]
    opponents = resolve_opponents(sc)
    rows = []
    for w in workers:
        if w > 1:
            start_ray(address)
            map_shards(lambda xs: list(xs), list(range(w)), w, address=address)  # the workers are up
        start = time.perf_counter()
        report = run_evaluation(
            env_name, policies, opponents, num_players=sc.num_players, games=games, seed_set=sc.deal_set,
            env_kwargs=sc.options, workers=w, ray_address=address,
        )  # fmt: skip
        seconds = time.perf_counter() - start
        played = sum(m["games"] for m in report["matchups"])
        rows.append({"workers": w, "games": played, "seconds": seconds, "games_per_s": played / seconds})
    return rows


def format_eval_bench(env_name: str, rows: Sequence[dict[str, Any]]) -> str:
    base = rows[0]["games_per_s"] if rows else 1.0
    lines = [
        f"{env_name}: evaluation games per second (the benchmark scenario's bots against each other), by Ray workers:",
        "",
        "| workers | games | seconds | games/s | × first row |",
        "|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['workers']} | {r['games']:,} | {r['seconds']:.1f} | {r['games_per_s']:,.1f} | "
            f"{r['games_per_s'] / base:.2f} |"
        )
    return "\n".join(lines)
