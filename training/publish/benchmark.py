"""``parlour benchmark``: any policy on a game's benchmark scenario, printed in BASELINES.md's row format.

A policy is a bot or shipped name, a policy file, or ``module:NAME`` or ``path/to/file.py:NAME`` naming your own
:class:`~parlour.baselines.base.Policy` (``act(observation, action_mask, rng) -> int``). It is evaluated exactly as
``parlour baselines`` evaluates the published policies (same scenario set, deals, seats, opponents, seeds and
statistics), so its row can stand beside ours; the published rows of the same scenario set are printed below it.
Results of different scenario sets are refused side by side.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from parlour.baselines import CHECKPOINT_DIR, resolve, short_label
from parlour.baselines.base import Policy
from parlour.envs import make
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
from parlour.training.stats import CLUSTER_METHOD, MIN_DEALS_FOR_INTERVAL, clustered_interval

BenchmarkError = ScenarioError


#: What reading a stored result with the right keys but not what they must hold raises.
MALFORMED = (KeyError, TypeError, ValueError, IndexError, AttributeError)


def published(env_name: str) -> dict[str, Any] | None:
    """The stored results behind BASELINES.md for ``env_name``: the distilled track's, with the rl track's trained
    seeds added where that section is published (its rows labelled ``rl/<family>@seed<K>``); None if there are
    none."""
    from parlour.training.publish.results import malformed, read_results, results_file

    path = results_file(CHECKPOINT_DIR, env_name, "distilled")
    rl_path = results_file(CHECKPOINT_DIR, env_name, "rl")
    if not path.is_file() and not rl_path.is_file():
        return None
    # a malformed file is one line naming it (read_results: not JSON, not an object, a key missing or mistyped)
    used = ("matchups", "policies", "families")  # what the rows and their pairing read
    results = read_results(path, "distilled", used) if path.is_file() else read_results(rl_path, "rl", used)
    if path.is_file() and rl_path.is_file():
        rl = read_results(rl_path, "rl", used)
        if rl.get("scenario_set") == results.get("scenario_set"):
            try:
                trained = {label for f in rl["families"].values() for label in f["labels"]}
                results["matchups"] = [
                    *results["matchups"],
                    *({**m, "policy": f"rl/{m['policy']}"} for m in rl["matchups"] if m["policy"] in trained),
                ]
                results["policies"] = {
                    **results["policies"],
                    **{f"rl/{k}": v for k, v in rl["policies"].items() if k in trained},
                }
            except MALFORMED as exc:
                raise malformed(rl_path, "rl", exc) from None
    return results


def _sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def provenance(spec: str, policy: Policy) -> dict[str, Any]:
    """What a reader needs to know which policy a row is: a policy file's path and SHA-256 (and its weights'), or the
    source file (and its SHA-256) of a bot or of a user's code."""
    from parlour.baselines.policy_file import PolicyFile

    if isinstance(policy, PolicyFile):
        return {
            "spec": spec,
            "kind": "policy file",
            "file": str(policy.path),
            "sha256": _sha256(policy.path),
            "weights_sha256": policy.spec["weights"]["sha256"],
        }
    inner = getattr(policy, "inner", policy)
    target = inner if inspect.isfunction(inner) or inspect.isclass(inner) else type(inner)
    try:
        source = inspect.getsourcefile(target)
    except TypeError:
        source = None
    out: dict[str, Any] = {"spec": spec, "kind": "code"}
    if source is not None and Path(source).is_file():
        out |= {"file": source, "sha256": _sha256(source)}
    return out


def paired_rows(ours: dict[str, Any], theirs: dict[str, Any], label: str) -> list[str]:
    """Markdown rows of the paired per-deal difference (ours − theirs) of every policy of ``ours`` against every
    policy of ``theirs``, at each table both played, on the deals both played (the same deal set: the first deals
    of a set are the same whatever the count), with its deal-clustered interval -- none on fewer than
    :data:`~parlour.training.stats.MIN_DEALS_FOR_INTERVAL` deals, where it would not hold its coverage."""
    n = ours["num_players"]
    mine = {(m["policy"], m["opponent"]): m for m in ours["matchups"]}
    other = {(m["policy"], m["opponent"]): m for m in theirs["matchups"]}
    opponents = [o for o in dict.fromkeys(m["opponent"] for m in ours["matchups"]) if any(k[1] == o for k in other)]
    if not opponents:
        return []
    deals = min(len(m["deal_wins"]) for m in ours["matchups"])
    shown = deals >= MIN_DEALS_FOR_INTERVAL
    method = CLUSTER_METHOD if shown else f"no interval on {deals} deals"
    lines = [
        f"Paired difference, ours − {label} (win rate on the same deals; {method}):",
        "",
        "| policy − row | " + " | ".join(f"vs {o}" for o in opponents) + " |",
        "|---|" + "---|" * len(opponents),
    ]
    for p in ours["policies"]:
        for q in dict.fromkeys(k[0] for k in other):
            cells = []
            for o in opponents:
                if (q, o) not in other:
                    cells.append("—")
                    continue
                a, b = (np.asarray(t[(x, o)]["deal_wins"], float) / n for t, x in ((mine, p), (other, q)))
                k = min(len(a), len(b))
                diff = a[:k] - b[:k]
                if not shown:
                    cells.append(f"{diff.mean():+.3f}")
                    continue
                lo, hi = clustered_interval(diff, proportion=False)
                cells.append(f"{diff.mean():+.3f} ({lo:+.3f}–{hi:+.3f})")
            lines.append(f"| {p} − {q} | " + " | ".join(cells) + " |")
    return lines


def language_rows(report: dict[str, Any]) -> list[str]:
    """What each language agent's games cost, per matchup: requests, refused answers, forfeits, tokens and latency
    per game (and the belief probe's scores where it was asked)."""
    talk = [m for m in report["matchups"] if "language_agent" in m]
    if not talk:
        return []

    def per_game(x: float | None) -> str:
        return "–" if x is None else f"{x:,.1f}"

    lines = [
        "",
        "Language agents, per game: requests, refused answers, forfeits (games), prompt and completion tokens, "
        "seconds waiting for answers; the belief probe's mean log score (the seat's exact posterior's on the same "
        "questions) and expected calibration error where it was asked:",
        "",
        "| policy | opponent | requests | refused | forfeits | prompt tokens | completion tokens | seconds | probe |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for m in talk:
        a = m["language_agent"]
        p = a.get("probe")
        probe = "–"
        if p and p.get("scored"):
            posterior = f" ({p['posterior_log_score']:.3f})" if "posterior_log_score" in p else ""
            probe = f"{p['log_score']:.3f}{posterior}, ECE {p['calibration']['ece']:.3f}"
        lines.append(
            f"| {m['policy']} | {m['opponent']} | {per_game(a['requests_per_game'])} | {per_game(a['invalid_per_game'])}"
            f" | {a['forfeits']} | {per_game(a['prompt_tokens_per_game'])} | "
            f"{per_game(a['completion_tokens_per_game'])} | {per_game(a['latency_s_per_game'])} | {probe} |"
        )
    return lines


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
    deals: int | None = None,
    overwrite: bool = False,
) -> str:
    """Evaluate ``specs`` on the scenario (``workers``: Ray workers sharing the deals); returns the Markdown printed
    (and written to ``out``). ``deals`` plays only the scenario's first deals: a quick partial run, labelled so and
    not comparable with BASELINES.md (its paired differences use those deals only). A ``benchmark.json`` or
    ``benchmark.md`` already in ``out`` is refused before anything is played, unless ``overwrite``."""
    from parlour.training.evaluation.games import check_new_file

    if out is not None:
        for name in ("benchmark.json", "benchmark.md"):
            check_new_file("--out", Path(out) / name, overwrite)
    version = version or current(env_name)
    sc = scenario(env_name, version)
    full = sc.deals
    if deals is not None:
        if not 1 <= deals <= full:
            raise BenchmarkError(f"--deals {deals} is out of range: the scenario has {full} deals (1..{full})")
        sc = dataclasses.replace(sc, deals=deals)
    other = None
    if compare is not None:
        try:
            other = read_json(compare, "benchmark result")
        except ValueError as exc:
            raise BenchmarkError(f"--compare: {exc}") from None
        if not isinstance(other, dict) or not isinstance(other.get("matchups"), list):
            raise BenchmarkError(f"--compare {compare}: not a benchmark result (no matchups)")
        check_same_set({"env": env_name, "scenario_set": version}, other, f"with {compare}")
    pub = published(env_name)  # read (and a malformed file refused) before the games, not after
    policies = [
        resolve(s, env_name, sc.num_players, sc.options, trust_pickle=trust_pickle, label=short_label(s)) for s in specs
    ]
    report = benchmark_report(policies, sc, version, progress=progress, workers=workers, ray_address=ray_address)
    partial = sc.deals < full
    report |= {
        "env_version": make(env_name).env_version,
        "scenario": {**dataclasses.asdict(sc), "deals_in_set": full, "partial": partial},
        "provenance": {p.name: provenance(s, p) for s, p in zip(specs, policies, strict=True)},
    }
    shown = sc.deals >= MIN_DEALS_FOR_INTERVAL
    lines = [
        f"{env_name} (version {report['env_version']}), benchmark scenario set {version}: {sc.num_players} players, "
        f"deal set {sc.deal_set}, {sc.deals} deals × {sc.num_players} seats = {sc.deals * sc.num_players} games per "
        f"cell; parlour {report['package_version']}. Win rate" + (f" with its {CLUSTER_METHOD}." if shown else "."),
    ]
    if partial:
        lines.append(
            f"PARTIAL RUN: the first {sc.deals} of the scenario's {full} deals (--deals). Only the full scenario is "
            "comparable with BASELINES.md; the differences below are paired on these deals alone."
        )
    if not shown:
        lines.append(
            f"No intervals: {sc.deals} deals are too few for a deal-clustered interval to hold its 95% coverage (it "
            f"needs at least {MIN_DEALS_FOR_INTERVAL} deals); these figures describe these deals alone."
        )
    lines += ["", *header(report), *rows(report, intervals=shown), *language_rows(report)]
    if pub is not None:
        lines.append("")
        if pub.get("scenario_set") == version:
            try:
                published_rows = [*header(pub), *rows(pub), "", *paired_rows(report, pub, "BASELINES.md")]
            except MALFORMED as exc:
                raise BenchmarkError(f"the published results of {env_name} in {CHECKPOINT_DIR}: {exc!r}") from None
            lines += ["Published (BASELINES.md, same scenario set):", "", *published_rows]
        else:
            lines.append(
                f"(BASELINES.md for {env_name} is on scenario set {pub.get('scenario_set')!r}, not {version!r}: "
                "not compared)"
            )
    if other is not None:
        lines += [
            "",
            f"From {compare}:",
            "",
            *header(other),
            *rows(other),
            "",
            *paired_rows(report, other, str(compare)),
        ]
    text = "\n".join(lines)
    if out is not None:
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(folder / "benchmark.json", json.dumps(report, indent=1) + "\n", replace=overwrite)
        atomic_write(folder / "benchmark.md", text + "\n", replace=overwrite)
        text += f"\n\nwrote {folder / 'benchmark.json'} and {folder / 'benchmark.md'}"
    return text
