"""The second held-out table: every published policy at a mixed table of the scenario's bots, seat-rotated.

Both rl families and the distilled track train with one draw filling the table (``opponent_draw: table``): every
table they met had a single kind of opponent. The mixed table seats the scenario's bots *together* -- the random,
heuristic and expert bots in the other seats of one game (:class:`~parlour.baselines.base.MixedTable`, spec
``mixed:A+B+C``), rotated by deal so that each bot sits in every position relative to the evaluated seat equally
often -- so no published policy met it in training. ``parlour baselines --track heldout`` plays, on the game's
scenario deals, every rl-track seed, every distilled seed and each of the scenario's bots there, and stores
``<env>_heldout_results.json``; BASELINES.md's "at a glance" table headlines it beside the expert's table.

Its **parity** level is the mean of the scenario bots' own win rates there (each seated as the evaluated policy):
the rate an average seat of that table wins, the reference a policy is read against, as the parity of a one-bot
table is the rate a copy of its bot wins there.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from parlour.baselines.base import MIXED_PREFIX
from parlour.training.scenarios import Scenario, benchmark_report, cell, current, scenario

#: What the parity level of a mixed table is, printed beside it.
PARITY_METHOD = "the mean of the table's bots' own win rates there (each seated as the evaluated policy)"


def mixed_spec(sc: Scenario) -> str:
    """The mixed table of a scenario: its bots, in its order, seat-rotated (``mixed:A+B+C``)."""
    return MIXED_PREFIX + "+".join(sc.opponents)


def table_scenario(env_name: str, version: str | None = None) -> Scenario:
    """The game's scenario with the mixed table as its one opponent: the same players, deal set, deals and rules."""
    sc = scenario(env_name, version)
    return Scenario(sc.env, sc.num_players, (mixed_spec(sc),), sc.deals, sc.deal_set, dict(sc.options))


def published(env_name: str, folder: Path) -> tuple[dict[str, list[tuple[str, Path]]], str]:
    """The published trained policies of a game, by family (``rl ppo``, ``rl selfplay``, ``distilled``): each
    seed's label and policy file, read from the stored rl and distilled results in ``folder`` (a part not stored
    has no entry), and the scenario set they were published on."""
    from parlour.baselines import game_name
    from parlour.training.publish.results import read_results, results_file
    from parlour.training.publish.rl import seed_file
    from parlour.training.publish.schema import seed_path

    out: dict[str, list[tuple[str, Path]]] = {}
    sets: list[str] = []
    rl_path = results_file(folder, env_name, "rl")
    if rl_path.is_file():
        rl = read_results(rl_path, "rl")
        sets.append(str(rl.get("scenario_set", "")))
        for family, f in rl["families"].items():
            out[f"rl {family}"] = [
                (label, seed_file(env_name, family, k, folder))
                for label, k in zip(f["labels"], f["seeds"], strict=True)
            ]
    d_path = results_file(folder, env_name, "distilled")
    if d_path.is_file():
        d = read_results(d_path, "distilled")
        sets.append(str(d.get("scenario_set", "")))
        name = f"{game_name(env_name)}_distilled"
        out["distilled"] = [(f"{name}@seed{s['seed']}", seed_path(env_name, s["seed"], folder)) for s in d["seeds"]]
    if len(set(sets)) > 1:
        raise ValueError(f"{env_name}: the rl and distilled results are of different scenario sets ({sets})")
    return out, sets[0] if sets else ""


def evaluate(env_name: str, folder: Path, *, progress: bool = False, workers: int = 1) -> dict[str, Any]:
    """Every published seed (:func:`published`) and each of the scenario's bots at the mixed table."""
    from parlour.baselines import make
    from parlour.baselines.policy_file import PolicyFile, table_for

    trained, version = published(env_name, folder)
    if not trained:
        raise FileNotFoundError(f"{env_name}: no stored rl or distilled results in {folder}: publish them first")
    sc = table_scenario(env_name, version or None)
    table = table_for(env_name, sc.num_players, sc.options)
    policies = [PolicyFile(path, table, label=label) for seeds in trained.values() for label, path in seeds]
    bots = [make(b, env_name) for b in scenario(env_name, version or None).opponents]
    start = time.perf_counter()
    report = benchmark_report([*policies, *bots], sc, version or current(env_name), progress=progress, workers=workers)
    report["evaluation_seconds"] = time.perf_counter() - start
    report["families"] = {family: [label for label, _ in seeds] for family, seeds in trained.items()}
    report["bots"] = [b.name for b in bots]
    report["table"] = report["matchups"][0]["opponent"]  # the mixed table's name, as its cells name it
    return report


def parity(r: dict[str, Any]) -> float:
    """The mixed table's parity level (:data:`PARITY_METHOD`)."""
    cells = {m["policy"]: m for m in r["matchups"]}
    return float(sum(cells[b]["win_rate"] for b in r["bots"]) / len(r["bots"]))


def regenerate(
    games: Sequence[str] | None, *, progress: bool, folder: Path | None = None, root: Path | None = None
) -> None:
    """Evaluate every chosen game's published policies at its mixed table, store ``<env>_heldout_results.json``."""
    from parlour.baselines import CHECKPOINT_DIR
    from parlour.envs.fileio import atomic_write
    from parlour.training.publish.results import results_file
    from parlour.training.publish.schema import chosen

    root = root or Path.cwd()
    folder = folder or CHECKPOINT_DIR
    for env_name, _, _ in chosen(root, list(games) if games else None, lambda sp: True, "game spec"):
        report = evaluate(env_name, folder, progress=progress)
        atomic_write(results_file(folder, env_name, "heldout"), json.dumps(report, indent=1) + "\n")


def render(r: dict[str, Any]) -> list[str]:
    """A game's held-out mixed-table section in BASELINES.md: each family's mean over seeds, every seed, the bots."""
    from parlour.training.publish.results import seed_stats
    from parlour.training.stats import CELL_METHOD, SEED_T_METHOD

    table = r["table"]
    cells = {m["policy"]: m for m in r["matchups"]}
    lines = [
        "### Held out: a mixed table of the scenario's bots",
        "",
        f"Every other seat filled by a different bot -- `{table}`, rotated by deal so that each bot sits in every "
        "position relative to the policy equally often -- on the scenario's deals (set "
        f"{r['scenario_set']}, {r['deals']} deals × every seat). Every family here trained with one draw filling the "
        "table, so none met bots of different kinds together: the table is held out for all of them. Families: "
        f"mean over training seeds ({SEED_T_METHOD}); cells: {CELL_METHOD}. Parity: {PARITY_METHOD}, "
        f"{parity(r):.3f}. Regenerate: `parlour baselines --track heldout {r['env']}`.",
        "",
        "| policy | at the mixed table |",
        "|---|---|",
    ]
    for family, labels in r["families"].items():
        if len(labels) > 1:
            agg = seed_stats(r, labels, [table])["per_table"][table]
            lines.append(
                f"| **{family}**, mean over {len(labels)} seeds | {agg['value']:.3f} "
                f"({agg['ci'][0]:.3f}–{agg['ci'][1]:.3f}) |"
            )
    for labels in r["families"].values():
        lines += [f"| {label} | {cell(cells[label])} |" for label in labels]
    lines += [f"| {b} | {cell(cells[b])} |" for b in r["bots"]]
    return [*lines, ""]
