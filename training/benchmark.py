"""``parlour benchmark``: any policy on a game's benchmark scenario, printed in BASELINES.md's row format.

A policy is a bot or shipped name, a policy file, or ``module:NAME`` or ``path/to/file.py:NAME`` naming your own
:class:`~parlour.baselines.base.Policy` (``act(observation, action_mask, rng) -> int``). It is evaluated exactly as
``parlour baselines`` evaluates the published policies (same scenario set, deals, seats, opponents, seeds and
statistics), so its row can stand beside ours; the published rows of the same scenario set are printed below it.
Results of different scenario sets are refused side by side.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from parlour.baselines import CHECKPOINT_DIR, resolve, short_label
from parlour.envs.fileio import atomic_write, read_json
from parlour.training.scenarios import (
    ScenarioError,
    benchmark_report,
    check_same_set,
    current,
    header,
    rows,
    scenario,
)
from parlour.training.stats import CLUSTER_METHOD

BenchmarkError = ScenarioError


def published(env_name: str) -> dict[str, Any] | None:
    """The stored results behind BASELINES.md for ``env_name`` (None if there are none)."""
    path = CHECKPOINT_DIR / f"{env_name}_results.json"
    if not path.is_file():
        return None
    results: dict[str, Any] = json.loads(path.read_text())
    return results


def run_benchmark(
    env_name: str,
    specs: Sequence[str],
    *,
    version: str | None = None,
    out: str | Path | None = None,
    compare: str | Path | None = None,
    trust_pickle: bool = False,
    progress: bool = False,
    workers: int = 1,
    ray_address: str = "",
) -> str:
    """Evaluate ``specs`` on the scenario (``workers``: Ray workers sharing the deals); returns the Markdown printed
    (and written to ``out``)."""
    version = version or current(env_name)
    sc = scenario(env_name, version)
    other = None
    if compare is not None:
        try:
            other = read_json(compare, "benchmark result")
        except ValueError as exc:
            raise BenchmarkError(f"--compare: {exc}") from None
        if not isinstance(other, dict) or not isinstance(other.get("matchups"), list):
            raise BenchmarkError(f"--compare {compare}: not a benchmark result (no matchups)")
        check_same_set({"env": env_name, "scenario_set": version}, other, f"with {compare}")
    policies = [
        resolve(s, env_name, sc.num_players, sc.options, trust_pickle=trust_pickle, label=short_label(s)) for s in specs
    ]
    report = benchmark_report(policies, sc, version, progress=progress, workers=workers, ray_address=ray_address)
    lines = [
        f"{env_name}, benchmark scenario set {version}: {sc.num_players} players, deal set {sc.deal_set}, {sc.deals} "
        f"deals × {sc.num_players} seats = {sc.deals * sc.num_players} games per cell; parlour "
        f"{report['package_version']}. Win rate with its {CLUSTER_METHOD}.",
        "",
        *header(report),
        *rows(report),
    ]
    pub = published(env_name)
    if pub is not None:
        lines.append("")
        if pub.get("scenario_set") == version:
            lines += ["Published (BASELINES.md, same scenario set):", "", *header(pub), *rows(pub)]
        else:
            lines.append(
                f"(BASELINES.md for {env_name} is on scenario set {pub.get('scenario_set')!r}, not {version!r}: "
                "not compared)"
            )
    if other is not None:
        lines += ["", f"From {compare}:", "", *header(other), *rows(other)]
    text = "\n".join(lines)
    if out is not None:
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(folder / "benchmark.json", json.dumps(report, indent=1) + "\n")
        atomic_write(folder / "benchmark.md", text + "\n")
        text += f"\n\nwrote {folder / 'benchmark.json'} and {folder / 'benchmark.md'}"
    return text
