"""BASELINES.md: its header, the "at a glance" table, and each game's sections, rendered from the stored results by
the renderers the tracks registry hands in (:func:`parlour.training.publish.tracks.render`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from parlour.baselines.policy_file import PolicyFileError
from parlour.baselines.tracks import TRACKS
from parlour.training.publish.results import (
    MALFORMED,
    malformed,
    reference_bots,
    results_file,
    seed_stats,
    stored_results,
)
from parlour.training.publish.schema import specs
from parlour.training.scenarios import cell
from parlour.training.stats import (
    CELL_METHOD,
    NORMALISED_METHOD,
    PAIRED_METHOD,
    SEED_T_METHOD,
    format_ci,
)


def at_a_glance(results: dict[str, dict[str, dict[str, Any]]], folder: Path | None = None) -> list[str]:
    """One row per game: at the heuristic's table, each rl family's IQM over seeds beside the distilled policy's and
    the heuristic's and expert's own win rates -- the benchmark's headroom in one table. Rendered from the same
    stored results as the game sections below; a part not yet stored says so."""
    games = [(env, parts) for env, parts in results.items() if "rl" in parts or "distilled" in parts]
    if not games:
        return []
    families = list(dict.fromkeys(f for _, p in games if "rl" in p for f in p["rl"]["families"]))

    def iqm(agg: dict[str, Any], n: int) -> str:
        return f"{agg['value']:.3f} ({format_ci(agg['ci'])}), {n} seeds"

    lines = [
        "## At a glance: learning from scratch against the distilled ceiling",
        "",
        "Each game's win rates first at the tables held out from training: a mixed table of the scenario's bots "
        "(the random, heuristic and expert bots together in the other seats, rotated by deal; every family trained "
        "with one kind of bot filling the table, so none met it), and the expert's (every other seat the expert bot; "
        "every rl family trains at the random and heuristic tables; the distilled track met it) -- then at the "
        "heuristic's, a training table. From the sections below: the rl track's families (learned from the environment alone) and "
        "the distilled track (the expert imitated, its inference among the inputs), as the mean over training seeds "
        f"({SEED_T_METHOD}); the heuristic's and the expert's own win rates at that table ({CELL_METHOD}). The "
        "**parity** column is the rate a copy of the table's bot wins there (one seat among its copies; at the "
        "mixed table, the mean of its bots' own rates there): the reference a policy is read against at that "
        "table. It replaces chance (1/players), which misleads where "
        "wins are shared (6 Suspects: every seat that votes for a culprit wins) or where nobody may win (Elevenses). "
        "The gap from the rl columns to the expert's is the benchmark's headroom for an RL algorithm. Regenerated "
        "with the game sections (`parlour baselines --render-only` rewrites it from the stored results).",
        "",
        "| game | scenario | table | "
        + " | ".join(f"rl `{f}`" for f in families)
        + " | distilled | heuristic | expert | parity |",
        "|---|---|---|" + "---|" * len(families) + "---|---|---|---|",
    ]
    for env, parts in games:
        try:
            lines += _glance_row(env, parts, families, iqm)
        except MALFORMED as exc:  # name the files the row was read from
            kinds = [k for k in ("rl", "distilled") if k in parts]
            where = " or ".join(str(results_file(folder or Path("."), env, k)) for k in kinds)
            raise malformed(where, " or ".join(kinds), exc) from None
    return [*lines, ""]


def _glance_row(env: str, parts: dict[str, dict[str, Any]], families: list[str], iqm: Any) -> list[str]:
    """One game's rows of :func:`at_a_glance`: the expert's table (held out from the rl track's training), then the
    heuristic's (none without both reference bots)."""
    any_part = parts.get("rl") or parts["distilled"]
    refs = reference_bots(list(any_part["policies"]))
    if refs is None:
        return []
    h, e = refs
    cells = {(m["policy"], m["opponent"]): m for m in any_part["matchups"]}
    rl = parts.get("rl")
    d = parts.get("distilled")
    sets = sorted({p["scenario_set"] for p in parts.values() if "scenario_set" in p and p.get("matchups")})
    out = _glance_mixed(env, parts, families, iqm, sets) if "heldout" in parts else []
    for table, label in ((e, "expert's (held out from the rl track)"), (h, "heuristic's (training)")):
        if (table, table) not in cells:  # a scenario without that table (a small test project's)
            continue
        rl_cells = [
            iqm(
                seed_stats(rl, rl["families"][f]["labels"], [table])["per_table"][table],
                len(rl["families"][f]["seeds"]),
            )
            if rl is not None and f in rl["families"]
            else "not trained yet"
            for f in families
        ]
        d_labels = [s["label"] for s in d["seeds"]] if d is not None else []
        distilled = (
            iqm(seed_stats(d, d_labels, [table])["per_table"][table], len(d_labels))
            if d is not None and d_labels and all((p, table) in _cells(d) for p in d_labels)
            else "—"
        )
        out.append(
            f"| {env} | {', '.join(sets)} | {label} | "
            + " | ".join(rl_cells)
            + f" | {distilled} | {cell(cells[(h, table)])} | {cell(cells[(e, table)])} | "
            f"{cells[(table, table)]['win_rate']:.3f} |"
        )
    return out


def _glance_mixed(
    env: str, parts: dict[str, dict[str, Any]], families: list[str], iqm: Any, sets: list[str]
) -> list[str]:
    """The mixed table's row of :func:`at_a_glance` (:mod:`parlour.training.publish.heldout`)."""
    from parlour.training.publish.heldout import parity

    r = parts["heldout"]
    table = r["table"]
    cells = {m["policy"]: m for m in r["matchups"]}

    def mean(labels: list[str] | None) -> str:
        if not labels:
            return "not evaluated yet"
        return iqm(seed_stats(r, labels, [table])["per_table"][table], len(labels))

    refs = reference_bots(r["bots"])
    if refs is None:
        return []
    h, e = refs
    return [
        f"| {env} | {', '.join(sets)} | mixed (held out) | "
        + " | ".join(mean(r["families"].get(f"rl {f}")) for f in families)
        + f" | {mean(r['families'].get('distilled'))} | {cell(cells[h])} | {cell(cells[e])} | {parity(r):.3f} |"
    ]


def _cells(r: dict[str, Any]) -> set[tuple[str, str]]:
    return {(m["policy"], m["opponent"]) for m in r["matchups"]}


def render(folder: Path, renderers: Mapping[str, Callable[[dict[str, Any]], list[str]]]) -> str:
    """BASELINES.md from every stored result in ``folder`` (:func:`~parlour.training.publish.results.stored_results`),
    each part drawn by its track's renderer (``renderers``: track name -> function of the stored result), in the
    tracks' declared order (:data:`parlour.baselines.tracks.TRACKS`)."""

    lines = [
        "# Published baselines",
        "",
        "Every game has up to four parts, each regenerated by the command written in it (from the repository root,",
        "from the committed `configs/<game>/baselines.yaml` and the training configs it names):",
        "",
        "- **rl track** (`parlour baselines --track rl`): what reinforcement learning reaches from the environment",
        "  alone -- its observation, its mask and the game's outcome -- at a fixed budget of learner steps, over five",
        "  training seeds and up to three algorithm families (`ppo` and `selfplay` on Stable-Baselines3 at 1M steps,",
        "  `jaxppo` on the jitted trainer at 20M), with learning curves, sample efficiency and a cross-play table.",
        "  This is the reference for a researcher benchmarking an RL algorithm. It ships as `<game>_rl` (the family",
        "  and seed each game's section names).",
        "- **distilled track** (`parlour baselines`): the scripted expert distilled -- the network first imitates",
        "  `<game>_expert`, and its inputs include the expert's inference (the feature sets) -- then PPO. A ceiling",
        "  reference, not RL from scratch. It ships as `<game>_distilled` (`<game>_ppo` is its old name).",
        "- **exploitability** (`parlour baselines --track exploit`): how much more than a policy itself any response",
        "  we have wins at a table of its copies -- trained best responses and every published policy and bot; a lower",
        "  bound, with its budget and curves (a game not yet recomputed shows its earlier table, from scratch).",
        "- **held-out mixed table** (`parlour baselines --track heldout`): every published policy at a table of the",
        "  scenario's bots together, seat-rotated -- a table no family met in training.",
        "",
        "`parlour benchmark ENV POLICY` puts any policy on the same scenario and prints its row in this format;",
        "`--compare` prints it beside these rows with the paired difference.",
        "",
        "**How to read a table.** Each cell seats the row's policy once and fills every other seat with the column's",
        "opponent; every deal of the scenario's deal set is played once with the policy in each seat. Cells give the win",
        f"rate and its interval: {CELL_METHOD}.",
        f"A trained policy is reported for every training seed and aggregated over seeds: the {SEED_T_METHOD}.",
        f"Where a family stands against a bot at a table: a {PAIRED_METHOD}.",
        f"Its score over all tables: the {NORMALISED_METHOD} (a mean of raw win rates would weigh each table by its "
        "range, and drop the hardest).",
        "A shipped policy is the seed named in the spec before training, not the best one.",
        "",
    ]
    try:  # every part's notes are the spec's as they are now (from the repository root), else as stored
        current = {env: spec for env, (_, spec) in specs(Path.cwd()).items()}
    except (FileNotFoundError, ValueError):
        current = {}
    results = stored_results(folder)
    for env, parts in results.items():
        if (spec := current.get(env)) is not None:
            for part, owner in (("distilled", spec), ("rl", spec.rl), ("exploit", spec.exploit)):
                if part in parts and owner is not None:
                    parts[part]["notes"] = list(owner.notes)
    lines += at_a_glance(results, folder)
    for env, parts in results.items():
        lines += [f"## {env}", ""]
        for kind in TRACKS:
            if kind in parts:
                draw = renderers[kind]
                try:
                    lines += draw(parts[kind])
                except PolicyFileError:
                    raise  # a seed's policy file, named by its own message
                except MALFORMED as exc:  # a file with the right keys but not what they must hold
                    raise malformed(results_file(folder, env, kind), kind, exc) from None
    return "\n".join(lines)
