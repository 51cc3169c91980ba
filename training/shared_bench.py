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


def _parlour() -> list[str]:
    return [sys.executable, "-m", "parlour.training.cli"]


def train_rate(config: str, steps: int, threads: int, beside: int, max_seconds: float) -> dict[str, Any]:
    """Train ``config`` for ``steps`` with ``threads`` learner threads beside ``beside`` busy processes."""
    busy = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(beside)]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            run = Path(tmp) / "run"
            cmd = [
                *_parlour(),
                "train",
                config,
                f"train.total_timesteps={steps}",
                f"train.torch_threads={threads}",
                "train.eval_every=0",
                f"train.checkpoint_every={steps}",
                "eval.games=1",
                "eval.reference=[]",
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
        "threads": threads,
        "beside": beside,
        "timesteps": done,
        "train_seconds": seconds,
        "steps_per_s": done / seconds if seconds > 0 else 0.0,
        "finished": done >= steps,
        "command_seconds": wall,
    }


def run_train_bench(
    config: str, steps: int, threads: Sequence[int], beside: int, max_seconds: float, repeats: int = 1
) -> list[dict[str, Any]]:
    rows = []
    for _ in range(repeats):
        for t in threads:
            for b in (0, beside):  # interleaved: alone, then shared, for each thread count
                rows.append(train_rate(config, steps, t, b, max_seconds))
    return rows


def format_train_bench(rows: Sequence[dict[str, Any]], cpus: int | None = None) -> str:
    cpus = cpus or os.cpu_count() or 1
    alone: dict[int, list[float]] = {}
    for r in rows:
        if r["beside"] == 0:
            alone.setdefault(r["threads"], []).append(r["steps_per_s"])
    lines = [
        f"Training steps per second on {cpus} CPUs (the final evaluation not timed):",
        "",
        "| learner threads | busy processes beside | steps | train seconds | steps/s | × alone |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        base = alone.get(r["threads"])
        ratio = r["steps_per_s"] / (sum(base) / len(base)) if base and r["beside"] else 1.0
        note = "" if r["finished"] else " (stopped)"
        lines.append(
            f"| {r['threads']} | {r['beside']} | {r['timesteps']:,}{note} | {r['train_seconds']:.0f} | "
            f"{r['steps_per_s']:,.0f} | {ratio:.2f} |"
        )
    return "\n".join(lines)
