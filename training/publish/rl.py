"""``parlour baselines --track rl``: what reinforcement learning reaches on each game from the environment alone.

The ``rl:`` block of ``configs/<game>/baselines.yaml`` names the algorithm families (each a committed ``track: rl``
config: no imitation, no feature set, a game-outcome reward), the training seeds, and which seed of which family
ships as ``<game>_rl`` (fixed before training). For each game the command:

1. trains every family × seed whose run folder (``--runs``, default ``docs/archive/runs``: ``<game>/<family>-seed<K>``)
   has not finished its budget, resuming any that stopped; each run evaluates itself at ten points of its budget on a fixed
   subset of the scenario's deals (``evaluations.jsonl``: the learning curve);
2. exports each finished seed as ``docs/archive/seeds/<env>_rl_<family>_seed<K>.json`` (+ ``.safetensors``) and
   ships the named one as ``<env>_rl.json``;
3. evaluates every seed and the scripted bots on the game's benchmark scenario (the full deal set), aggregates seeds
   per family (IQM and mean, stratified bootstrap), and plays every seed against every other seed (the cross-play
   table: one seat of the row's policy, every other seat the column's, on ``cross_play_deals`` deals);
4. computes per family and table the learning curve's IQM with its seed band, the area under it and the steps at
   which it first reaches the heuristic's level (:mod:`parlour.training.learning_curves`), draws the curves, and
   stores everything in ``baselines/checkpoints/<env>_rl_results.json``, which ``BASELINES.md`` renders.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

from parlour.baselines import CHECKPOINT_DIR, available, game_name, make
from parlour.baselines.policy_file import PolicyFile, read_spec, read_weights, save_policy, table_for
from parlour.envs.fileio import atomic_write
from parlour.training.publish.distilled import reference_bots
from parlour.training.publish.results import (
    aggregate_rows,
    minutes,
    read_results,
    results_file,
    seed_stats,
    ship_seed,
    standing_lines,
)
from parlour.training.publish.reuse import Reuse, refuse_mismatch, reuse, run_metrics, train_or_reuse
from parlour.training.publish.schema import ARCHIVE, FIGURES, BaselineSpec, RLSpec, SweepSpec, chosen, seeds_folder
from parlour.training.scenarios import benchmark_report, scenario
from parlour.training.stats import CELL_METHOD, CLUSTER_METHOD, NORMALISED_METHOD, PAIRED_METHOD, SEED_T_METHOD

#: Where the rl track's run folders live by default (``<runs>/<game>/<family>-seed<K>``). The published runs' records
#: are committed there (config, command, versions, learning curve, metrics); their checkpoints, logs and weights are
#: not (the weights ship as the exported seed files), so a fresh clone re-evaluates them without retraining, and
#: ``--runs`` with an empty folder retrains everything from scratch.
RUNS = ARCHIVE / "runs"


def results_path(env_name: str, folder: Path = CHECKPOINT_DIR) -> Path:
    return results_file(folder, env_name, "rl")


def seed_file(env_name: str, family: str, seed: int, folder: Path = CHECKPOINT_DIR) -> Path:
    return seeds_folder(folder) / f"{env_name}_rl_{family}_seed{seed}.json"


def run_folder(runs: Path, env_name: str, family: str, seed: int) -> Path:
    return runs / game_name(env_name) / f"{family}-seed{seed}"


def load_family(root: Path, config: str, seed: int, overrides: tuple[str, ...] = ()) -> Any:
    """A family's training config for ``seed`` (with ``overrides``), refused unless it is an ``rl``-track config."""
    from parlour.training.config import ConfigError, load_config

    cfg = load_config(root / config, [f"seed={seed}", *overrides])
    if cfg.track != "rl":
        raise ConfigError(
            f"{config}: the rl track trains track: rl configs only (no teacher, no feature set, a game-outcome "
            f"reward), but this one says track: {cfg.track or '(none)'}"
        )
    return cfg


#: What a run of the rl track or its sweep that another config trained says to do (they are refused, not retrained:
#: their folders hold the published runs' committed records, and may hold days of training).
RETRAIN = "move the folder away (or choose another --runs) to retrain it from scratch"


def _job_config(job: tuple[Any, ...]) -> Any:
    """The config a job of :func:`_run_jobs` asks for: ``(env, config, root, seed, run folder[, overrides])``."""
    return load_family(Path(job[2]), job[1], job[3], tuple(job[5]) if len(job) > 5 else ())


def run_reuse(run: Path, cfg: Any) -> Reuse:
    """Whether the rl track's run folder ``run`` holds ``cfg``'s run; another config's run is refused in one line
    naming the differing keys (:func:`parlour.training.publish.reuse`)."""
    state = reuse(run, cfg)
    refuse_mismatch(run, state, "a run", RETRAIN)
    return state


def _train_run(job: tuple[Any, ...]) -> dict[str, Any]:
    """Train (or resume) one family × seed in its run folder; a finished run of the same config is kept as it is.
    ``job``: ``(env, config, root, seed, run folder[, overrides])``."""
    env_name, config, _, seed, run_path = job[:5]
    cfg = _job_config(job)
    run = Path(run_path)
    metrics = train_or_reuse(
        cfg, run, run_reuse(run, cfg), f"parlour baselines --track rl {env_name} ({config}, seed {seed})"
    )
    return {"run": run_path, "train_wall_seconds": metrics.get("train_wall_seconds")}


def train_runs(env_name: str, rl: RLSpec, root: Path, runs: Path, jobs: int) -> None:
    """Train every family × seed that has not finished its budget (``jobs`` at a time, one process each)."""
    jobs_ = [
        (env_name, config, str(root), seed, str(run_folder(runs, env_name, family, seed)), ())
        for family, config in rl.algorithms.items()
        for seed in rl.seeds
    ]
    _run_jobs(env_name, "rl", jobs_, root, jobs)


def _run_jobs(env_name: str, what: str, work: list[tuple[Any, ...]], root: Path, jobs: int) -> None:
    """Train the runs of ``work`` that have not finished their budget; another config's run in any of their folders
    is refused before anything is trained."""
    todo = [job for job in work if run_reuse(Path(job[4]), _job_config(job)).state != "finished"]
    if not todo:
        print(f"{env_name}: every {what} run has finished its budget; nothing to train")
        return
    print(f"{env_name}: training {len(todo)} {what} run(s) ({min(jobs, len(todo))} at a time)")
    if jobs <= 1 or len(todo) == 1:
        for job in todo:
            _train_run(job)
    else:
        with ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=get_context("spawn")) as pool:
            list(pool.map(_train_run, todo))


def export_runs(env_name: str, rl: RLSpec, root: Path, runs: Path, folder: Path) -> dict[str, list[int]]:
    """Export every finished run's policy; returns the finished seeds per family."""
    from parlour.training.run import POLICY_STEM

    done: dict[str, list[int]] = {}
    for family, config in rl.algorithms.items():
        done[family] = []
        for seed in rl.seeds:
            run = run_folder(runs, env_name, family, seed)
            if run_reuse(run, load_family(root, config, seed)).state != "finished":
                continue  # not trained yet, or not to its budget
            src, out = run / f"{POLICY_STEM}.json", seed_file(env_name, family, seed, folder)
            if src.is_file():
                spec = read_spec(src)
                spec["training"]["family"] = family
                save_policy(out, read_weights(src, spec), spec)
            else:
                _check_exported(run, out)  # a committed run record: its weights are the exported seed file
            done[family].append(seed)
    return done


def _check_exported(run: Path, exported: Path) -> None:
    """A finished run without its weights must have been exported, at the step the run finished."""

    if not exported.is_file():
        raise FileNotFoundError(
            f"{run} has finished but holds no policy.json, and {exported} is missing: retrain the run (remove the "
            "folder) or restore its exported policy file"
        )
    metrics = run_metrics(run)
    if not isinstance(metrics.get("timesteps"), int):
        raise ValueError(f"{run / 'metrics.json'} is not a valid metrics file (no whole 'timesteps')")
    steps = metrics["timesteps"]
    exported_steps = int(read_spec(exported)["training"].get("timesteps", -1))
    if exported_steps != steps:
        raise ValueError(
            f"{exported} was exported at step {exported_steps:,}, but {run} finished at step {steps:,}: they are not "
            "the same run"
        )


def ship(env_name: str, rl: RLSpec, folder: Path) -> Path | None:
    """``<env>_rl.json`` and its weights: the named family and seed's (:func:`~.results.ship_seed`), once it is
    trained."""
    source = seed_file(env_name, rl.shipped_algorithm, rl.shipped_seed, folder)
    if not source.is_file():
        return None
    shipped = {"shipped": {"family": rl.shipped_algorithm, "seed": rl.shipped_seed}}
    return ship_seed(source, folder / f"{env_name}_rl.json", shipped)


def curves_report(
    env_name: str, rl: RLSpec, root: Path, runs: Path, done: dict[str, list[int]], levels: dict[str, float]
) -> dict[str, Any]:
    """Per family and evaluation table: the learning curve over seeds, its AUC and the steps to the heuristic's
    level at that table (``levels``: table -> the heuristic's win rate there)."""
    from parlour.training.learning_curves import CURVE_METHOD, read_runs, summary

    out: dict[str, Any] = {"method": CURVE_METHOD, "families": {}}
    for family, seeds in done.items():
        if not seeds:
            continue
        cfg = load_family(root, rl.algorithms[family], seeds[0])
        folders = [run_folder(runs, env_name, family, k) for k in seeds]
        out["families"][family] = {
            "budget": cfg.train.total_timesteps,
            "points_games": cfg.eval.periodic_games,
            # where the periodic points were played: the scalar env on the deal set's first deals, or the JAX core
            # against the batched bots on deals of its own key (train.eval_backend: jax; no expert there)
            "backend": cfg.train.eval_backend,
            "tables": {
                table: summary(read_runs(folders, table), cfg.train.total_timesteps, level)
                for table, level in levels.items()
                if table in cfg.eval.opponents
            },
        }
    return out


def plot_curves(report: dict[str, Any], out: Path) -> Path | None:
    """One panel per table: each family's IQM curve with its seed band; the heuristic's and expert's levels."""
    from parlour.training.learning_curves import plot

    curves = report["curves"]["families"]
    if not curves:
        return None
    tables = list(dict.fromkeys(t for c in curves.values() for t in c["tables"]))
    panels = {t: {family: c["tables"][t] for family, c in curves.items() if t in c["tables"]} for t in tables}
    names = report["levels"]["names"]
    levels = {names[k]: report["levels"][k] for k in ("heuristic", "expert")}
    return plot(
        panels,
        levels,
        out,
        title=f"{report['env']}: rl track, win rate at each table over the budget",
        budget=max(c["budget"] for c in curves.values()),
        # families of budgets far apart (1M and 20M steps): a linear axis would squeeze the shorter into a corner
        log_from=min(c["budget"] for c in curves.values()) // 10 if _budgets_apart(curves) else None,
    )


def _budgets_apart(curves: dict[str, Any]) -> bool:
    budgets = [c["budget"] for c in curves.values()]
    return max(budgets) >= 4 * min(budgets)


def evaluate(
    env_name: str,
    spec: BaselineSpec,
    root: Path,
    runs: Path,
    done: dict[str, list[int]],
    *,
    progress: bool,
    folder: Path,
    workers: int = 1,
) -> dict[str, Any]:
    """Every trained seed of every family and the scripted bots on the scenario; seeds aggregated per family;
    the cross-play table; the learning curves."""
    rl = spec.rl
    assert rl is not None
    sc = scenario(env_name, spec.scenarios)
    table = table_for(env_name, sc.num_players, sc.options)
    trained = {
        family: [PolicyFile(seed_file(env_name, family, k, folder), table, label=f"{family}@seed{k}") for k in seeds]
        for family, seeds in done.items()
        if seeds
    }
    if not trained:
        raise FileNotFoundError(f"{env_name}: no rl run has finished its budget under {runs}: train them first")
    own = f"{game_name(env_name)}_rl"
    bots = [make(b, env_name) for b in available(env_name) if b not in spec.skip_bots and b != own]
    everyone = [p for ps in trained.values() for p in ps]
    start = time.perf_counter()
    report = benchmark_report([*everyone, *bots], sc, spec.scenarios, progress=progress, workers=workers)
    report["evaluation_seconds"] = time.perf_counter() - start
    cells = {(m["policy"], m["opponent"]): m["win_rate"] for m in report["matchups"]}
    decisions = {(m["policy"], m["opponent"]): m.get("mean_decisions") for m in report["matchups"]}
    families = {}
    for family, policies in trained.items():
        cfg = load_family(root, rl.algorithms[family], done[family][0])
        metrics = [_metrics(run_folder(runs, env_name, family, k)) for k in done[family]]
        # the budget in games: the seeds' decisions a game at the tables they trained at (the bots among them)
        met = [o for o in sc.opponents if o in cfg.opponents]
        per_game = [decisions[(p.name, o)] for p in policies for o in met]
        families[family] = {
            "config": rl.algorithms[family],
            "seeds": done[family],
            "labels": [p.name for p in policies],
            "budget": cfg.train.total_timesteps,
            "decisions_per_game": float(np.mean(per_game)) if per_game and None not in per_game else None,
            "decisions_tables": met,
            "opponents": list(cfg.opponents),
            # the same derivation the rendering makes from the matchups (seed_stats), stored beside them
            "stats": seed_stats(report, [p.name for p in policies], list(sc.opponents)),
            "train_wall_seconds": [m.get("train_wall_seconds") for m in metrics],
        }
    report["families"] = families
    report["method"] = f"{SEED_T_METHOD}; {NORMALISED_METHOD}; {PAIRED_METHOD}"
    report["spec_seeds"] = list(rl.seeds)
    report["shipped"] = {"name": own, "family": rl.shipped_algorithm, "seed": rl.shipped_seed}
    refs = reference_bots([b.name for b in bots])
    report["levels"] = {}
    if refs is not None:
        h, e = refs
        report["levels"] = {
            "heuristic": {o: cells[(h, o)] for o in sc.opponents},
            "expert": {o: cells[(e, o)] for o in sc.opponents},
            "names": {"heuristic": h, "expert": e},
        }
        report["curves"] = curves_report(env_name, rl, root, runs, done, report["levels"]["heuristic"])
    else:
        report["curves"] = {"families": {}}
    start = time.perf_counter()
    cross = benchmark_cross_play(env_name, everyone, sc, rl.cross_play_deals, progress=progress)
    report["cross_play"] = cross
    report["cross_play_seconds"] = time.perf_counter() - start
    report["notes"] = list(rl.notes)
    return report


def benchmark_cross_play(
    env_name: str, policies: list[PolicyFile], sc: Any, deals: int, *, progress: bool
) -> dict[str, Any]:
    """Every seed seated once at a table of every other seed (and of itself), on ``deals`` deals of the
    scenario's deal set: ``rates[row][column]`` is the row's win rate."""
    from parlour.training.evaluation.matchups import run_evaluation

    r = run_evaluation(
        env_name,
        policies,
        None,
        num_players=sc.num_players,
        games=deals,
        seed_set=sc.deal_set,
        env_kwargs=sc.options,
        progress=progress,
    )
    return {"deals": deals, "rates": r["cross_play"], "matchups": r["matchups"]}


def _metrics(run: Path) -> dict[str, Any]:
    return run_metrics(run)


def refresh_curves(
    games: list[str] | None,
    *,
    root: Path | None = None,
    runs: Path | None = None,
    folder: Path = CHECKPOINT_DIR,
    figures: Path = FIGURES,
) -> None:
    """Recompute the stored rl results' learning curves (AUC, steps to the heuristic's level, the figure) from the
    run folders' ``evaluations.jsonl`` -- after :mod:`parlour.training.publish.initial_point` added a step-0 point, say --
    (:func:`parlour.training.publish.tracks.refresh_curves` then rewrites ``BASELINES.md``); nothing is trained or played. Each run folder must hold the records of the seeds
    the stored results publish."""
    from parlour.training.publish.results import read_results

    root = root or Path.cwd()
    runs = runs or root / RUNS
    for env_name, _, spec in chosen(root, games, lambda sp: sp.rl is not None, "rl: block"):
        rl = spec.rl
        assert rl is not None
        path = results_path(env_name, folder)
        if not path.is_file():
            continue
        report = read_results(path, "rl")
        done = {family: list(f["seeds"]) for family, f in report["families"].items()}
        for family, seeds in done.items():
            for k in seeds:
                if not (run_folder(runs, env_name, family, k) / "evaluations.jsonl").is_file():
                    raise FileNotFoundError(f"{run_folder(runs, env_name, family, k)} holds no evaluations.jsonl")
        report["curves"] = curves_report(env_name, rl, root, runs, done, report["levels"]["heuristic"])
        figure = plot_curves(report, figures / f"{env_name}_rl_learning_curves.png")
        report["figure"] = os.path.relpath(figure, root) if figure is not None else None
        atomic_write(path, json.dumps(report, indent=1) + "\n")


def regenerate(
    games: list[str] | None,
    *,
    train_models: bool,
    progress: bool,
    jobs: int = 2,
    root: Path | None = None,
    runs: Path | None = None,
    folder: Path = CHECKPOINT_DIR,
    figures: Path = FIGURES,
    workers: int = 1,
) -> None:
    """Train (unless ``train_models`` is false), evaluate and publish the rl track of ``games`` (default: every spec
    with an ``rl:`` block) into its stored results (:func:`parlour.training.publish.tracks.regenerate` then rewrites
    ``BASELINES.md``)."""

    root = root or Path.cwd()
    runs = runs or root / RUNS
    for env_name, spec_path, spec in chosen(root, games, lambda sp: sp.rl is not None, "rl: block"):
        rl = spec.rl
        assert rl is not None
        if train_models:
            train_runs(env_name, rl, root, runs, jobs)
        done = export_runs(env_name, rl, root, runs, folder)
        ship(env_name, rl, folder)
        report = evaluate(env_name, spec, root, runs, done, progress=progress, folder=folder, workers=workers)
        report["spec"] = str(spec_path.relative_to(root))
        figure = plot_curves(report, figures / f"{env_name}_rl_learning_curves.png")
        report["figure"] = os.path.relpath(figure, root) if figure is not None else None
        atomic_write(results_path(env_name, folder), json.dumps(report, indent=1) + "\n")


def render(r: dict[str, Any]) -> list[str]:
    """The rl-track section of a game in BASELINES.md."""
    from parlour.training.scenarios import cell, header

    families = r["families"]
    opponents = list(dict.fromkeys(m["opponent"] for m in r["matchups"]))
    stats = {name: seed_stats(r, f["labels"], opponents) for name, f in families.items()}
    cells = {(m["policy"], m["opponent"]): m for m in r["matchups"]}
    trained_labels = {label for f in families.values() for label in f["labels"]}
    budgets = {name: f["budget"] for name, f in families.items()}
    budget_text = (
        f"Budget: {next(iter(budgets.values())):,} learner steps a seed."
        if len(set(budgets.values())) == 1
        else "Budgets, in learner steps a seed: " + ", ".join(f"`{n}` {b:,}" for n, b in budgets.items()) + "."
    )
    lines = [
        "### rl track: learned from the environment alone",
        "",
        "Each family learns from the environment only -- its observation, its action mask and the game's outcome as the "
        "reward: no imitation, no feature set derived from a bot or from the rules, no reward computed from hidden "
        f"state. {budget_text} "
        + " ".join(
            f"`{name}` (`{f['config']}`) trains against {', '.join(f['opponents'])}; seeds {f['seeds']}"
            + _in_games(f)
            + (
                f" of the spec's {r['spec_seeds']} (the others are not trained yet)"
                if f["seeds"] != r["spec_seeds"]
                else ""
            )
            + "."
            for name, f in families.items()
        )
        + f" The tables of opponents a family never met in training are held out (here: "
        f"{', '.join(o for o in opponents if not any(o in f['opponents'] for f in families.values())) or 'none'}). "
        f"`{r['shipped']['name']}` ships seed {r['shipped']['seed']} of `{r['shipped']['family']}` (chosen before "
        "training). Regenerate: `parlour baselines --track rl " + r["env"] + "`.",
        "",
        *header(r),
    ]
    for name in families:
        lines += aggregate_rows(name, stats[name], opponents)
    for name, f in families.items():
        for k, label in zip(f["seeds"], f["labels"], strict=True):
            tag = (
                f" (ships as {r['shipped']['name']})"
                if (name, k) == (r["shipped"]["family"], r["shipped"]["seed"])
                else ""
            )
            lines.append(f"| {name} seed {k}{tag} | " + " | ".join(cell(cells[(label, o)]) for o in opponents) + " |")
    for p in r["policies"]:
        if p not in trained_labels:
            lines.append(f"| {p} | " + " | ".join(cell(cells[(p, o)]) for o in opponents) + " |")
    lines += ["", f"Seeds: {SEED_T_METHOD}; cells: {CELL_METHOD}.", ""]
    levels = r.get("levels") or {}
    if levels:
        lines += [
            f"**Where RL stands** (each family's mean over seeds at each table, and against the bots there: {PAIRED_METHOD}; "
            "then its normalised score over the tables):",
            "",
        ]
        for name in families:
            lines += standing_lines(name, stats[name], opponents)
        lines.append("")
    curves = r.get("curves", {}).get("families", {})
    if curves:
        from parlour.training.learning_curves import CURVE_METHOD, area_under_curve, confirmed_crossing

        h = levels["names"]["heuristic"]
        lines += [
            f"**Sample efficiency** ({CURVE_METHOD}; each point on the first games of the deal set, the same for every "
            f"seed). The level is {h}'s own win rate at that table; AUC and steps to it are re-read from the stored "
            "curves when this page is rendered." + _jax_points(curves),
            "",
            "| family | table | AUC | steps to the heuristic's level | IQM at the last point |",
            "|---|---|---:|---:|---:|",
        ]
        for name, c in curves.items():
            for table, t in c["tables"].items():
                steps = confirmed_crossing(t["steps"], t["iqm"], levels["heuristic"][table])
                auc = area_under_curve(
                    np.asarray(t["steps"], float), np.asarray(t["iqm"], float), families[name]["budget"]
                )
                reached = "not within budget" if steps is None else f"{steps:,}"
                lines.append(f"| {name} | {table} | {auc:.3f} | {reached} | {t['iqm'][-1]:.3f} |")
        lines.append("")
    if r.get("figure"):
        lines += [f"![{r['env']} rl-track learning curves]({r['figure']})", ""]
    lines += _render_cross_play(r)
    hours = "; ".join(
        f"`{name}` {sum(s or 0 for s in f['train_wall_seconds']) / 3600:.1f} h over {len(f['seeds'])} seeds"
        + (" (some runs did not record their time)" if any(s is None for s in f["train_wall_seconds"]) else "")
        for name, f in families.items()
    )
    lines += [
        f"Wall-clock time on our 2-core machine (one run per core): training {hours}; this evaluation "
        f"{minutes(r['evaluation_seconds'])}, the cross-play table {minutes(r['cross_play_seconds'])}. "
        + _ray_sentence(budgets),
        "",
    ]
    if r.get("notes"):
        lines += [*r["notes"], ""]
    return lines


def _jax_points(curves: dict[str, Any]) -> str:
    """Which families' curve points were played on the JAX core (``train.eval_backend: jax``), said beside the
    curve table: the same game, other deals, and no expert (it has no batched version)."""
    jax = [name for name, c in curves.items() if c.get("backend") == "jax"]
    if not jax:
        return ""
    return (
        f" The points of {', '.join(f'`{n}`' for n in jax)} were played inside the jitted trainer "
        "(`train.eval_backend: jax`): on the game's JAX core against the batched bots, each deal once per seat, on "
        "deals drawn from the run's own key rather than the deal set -- the same game and tables, other deals -- and "
        "not at the expert's table, which has no batched bot."
    )


def _ray_sentence(budgets: dict[str, int]) -> str:
    """Where a ten-times budget of the smallest family fits (a Ray cluster, the same config)."""
    small = min(budgets.values())
    which = "this one" if len(set(budgets.values())) == 1 else "the smallest"
    return (
        f"A {10 * small / 1e6:g}M-step budget a seed (ten times {which}) fits a Ray cluster: `trainer: rllib` with "
        f"`train.total_timesteps={10 * small}` and `rllib.ray_address` set runs the same config there."
    )


def _in_games(f: dict[str, Any]) -> str:
    """A family's budget in games: the budget over its seeds' decisions a game at their training bots' tables."""
    per_game = f.get("decisions_per_game")
    if not per_game:
        return ""
    return (
        f"; the budget is about {round(f['budget'] / per_game, -2):,.0f} games a seed (its seeds take {per_game:.1f} decisions "
        f"a game at the tables of {', '.join(f['decisions_tables'])} in the evaluation)"
    )


def _render_cross_play(r: dict[str, Any]) -> list[str]:
    cross = r.get("cross_play")
    if not cross:
        return []
    rates = cross["rates"]
    names = list(rates)
    family_of = {label: name for name, f in r["families"].items() for label in f["labels"]}
    within: list[float] = []
    across: list[float] = []
    for a in names:
        for b in names:
            if a != b:
                (within if family_of[a] == family_of[b] else across).append(rates[a][b])
    n = r["num_players"]
    lines = [
        f"**Cross-play** ({cross['deals']} deals × {n} seats a cell): the row's policy in one seat, every other seat "
        f"the column's; chance is {1 / n:.3f}. A policy that wins far above chance at a table of another seed's "
        "copies exploits that seed's conventions; one near chance everywhere plays alike.",
        "",
        "| row \\ table of | " + " | ".join(names) + " |",
        "|---|" + "---:|" * len(names),
    ]
    for a in names:
        lines.append(f"| {a} | " + " | ".join(f"{rates[a][b]:.2f}" for b in names) + " |")
    summary = []
    if within:
        summary.append(f"mean over pairs of seeds of one family {np.mean(within):.3f}")
    if across:
        summary.append(f"of different families {np.mean(across):.3f}")
    lines += ["", ("Off the diagonal: " + ", ".join(summary) + ".") if summary else "", ""]
    return lines


# ----------------------------------------------------------------------------------------------- the tuning sweep
#: What a sweep run changes besides its setting: the sweep's budget, evaluated at ten points of it.
def sweep_budget(steps: int) -> tuple[str, ...]:
    return (
        f"train.total_timesteps={steps}",
        f"train.eval_every={max(1, steps // 10)}",
        f"train.checkpoint_every={max(1, steps // 10)}",
    )


def sweep_settings(sweep: SweepSpec) -> list[tuple[str, tuple[str, ...]]]:
    """``(label, overrides)``: the family's config as published, then each grid value alone; an ablation's rungs in
    order."""
    if sweep.ladder:
        return [(label, tuple(overrides)) for label, overrides in sweep.ladder.items()]
    out: list[tuple[str, tuple[str, ...]]] = [("as published", ())]
    for key, values in sweep.grid.items():
        out += [(f"{key}={value}", (f"{key}={value}",)) for value in values]
    return out


def sweep_folder(runs: Path, env_name: str, label: str, seed: int, kind: str = "sweep") -> Path:
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in label)
    return runs / game_name(env_name) / kind / f"{safe}-seed{seed}"


def bot_levels(env_name: str, folder: Path) -> dict[str, dict[str, float]]:
    """The heuristic's and expert's win rates at each scenario table, from any stored evaluation of the game."""
    from parlour.training.publish.results import MALFORMED, malformed

    for path, kind in (
        (results_path(env_name, folder), "rl"),
        (results_file(folder, env_name, "distilled"), "distilled"),
    ):
        if path.is_file():
            r = read_results(path, kind)
            try:
                refs = reference_bots(list(r["policies"]))
                if refs is not None:
                    cells = {(m["policy"], m["opponent"]): m["win_rate"] for m in r["matchups"]}
                    tables = list(dict.fromkeys(m["opponent"] for m in r["matchups"]))
                    return {
                        kind: {o: float(cells[(bot, o)]) for o in tables}
                        for kind, bot in zip(("heuristic", "expert"), refs, strict=True)
                    }
            except MALFORMED as exc:
                raise malformed(path, kind, exc) from None
    raise FileNotFoundError(f"{env_name}: no stored evaluation of its heuristic and expert in {folder}")


def run_sweep(
    env_name: str,
    spec: BaselineSpec,
    root: Path,
    runs: Path,
    jobs: int,
    folder: Path,
    *,
    train_models: bool,
    kind: str = "sweep",
) -> dict[str, Any]:
    """Train (unless ``train_models`` is false) and score every setting of the game's sweep (``kind="sweep"``) or
    every rung of its ablation (``"ablation"``)."""
    from parlour.training.learning_curves import read_runs, summary
    from parlour.training.run import evaluations

    assert spec.rl is not None
    rl, sweep = spec.rl, getattr(spec.rl, kind)
    assert sweep is not None
    config = sweep.config or rl.algorithms[sweep.family]
    settings = sweep_settings(sweep)
    work = [
        (
            env_name,
            config,
            str(root),
            k,
            str(sweep_folder(runs, env_name, label, k, kind)),
            (*sweep_budget(sweep.steps), *o),
        )
        for label, o in settings
        for k in sweep.seeds
    ]
    if train_models:
        _run_jobs(env_name, kind, work, root, jobs)
    levels = bot_levels(env_name, folder)
    rows = []
    for label, overrides in settings:
        folders = [sweep_folder(runs, env_name, label, k, kind) for k in sweep.seeds]
        asked = [load_family(root, config, k, (*sweep_budget(sweep.steps), *overrides)) for k in sweep.seeds]
        if any(run_reuse(f, cfg).state != "finished" for f, cfg in zip(folders, asked, strict=True)):
            continue  # not trained yet, or not to its budget
        # the tables every run was evaluated at (a run evaluated on the JAX core meets no expert: it has no batched bot)
        present = set.intersection(
            *({k for row in evaluations(f) for k in row if isinstance(row[k], dict)} for f in folders)
        )
        tables = {
            t: summary(read_runs(folders, t), sweep.steps, level)
            for t, level in levels["heuristic"].items()
            if t in present
        }
        last = [max(evaluations(f), key=lambda row: row["timesteps"]) for f in folders]
        rows.append(
            {
                "setting": label,
                "tables": tables,
                "train_wall_seconds": sum(_metrics(f).get("train_wall_seconds") or 0.0 for f in folders),
                # the last point's 95% interval at each table (its games clustered by deal), for the noise line
                "last_ci": {t: [row[t]["win_ci"] for row in last] for t in tables},
                "point_games": last[0][next(iter(tables))]["games"],
            }
        )
    backends = {
        row.get("backend", "scalar")
        for label, _ in settings
        for k in sweep.seeds
        for row in evaluations(sweep_folder(runs, env_name, label, k, kind))
        if isinstance(row, dict)
    }
    return {
        "env": env_name,
        "kind": kind,
        "backend": "jax" if backends == {"jax"} else "scalar" if backends <= {"scalar"} else "mixed",
        "family": sweep.family,
        "config": config,
        "fixes": sweep.fixes,
        "seeds": list(sweep.seeds),
        "published_seeds": list(rl.seeds),
        "steps": sweep.steps,
        "settings": [label for label, _ in settings],
        "rows": rows,
        "levels": levels,
    }


def regenerate_sweep(
    games: list[str] | None,
    *,
    train_models: bool,
    jobs: int = 2,
    root: Path | None = None,
    runs: Path | None = None,
    folder: Path = CHECKPOINT_DIR,
    kind: str = "sweep",
) -> None:
    """The tuning sweep (``kind="sweep"``) or the ablation (``"ablation"``) of ``games`` (default: every spec with
    an ``rl.<kind>``): trained, scored, stored in ``<env>_<kind>_results.json``."""

    root = root or Path.cwd()
    runs = runs or root / RUNS
    has_it = lambda sp: sp.rl is not None and getattr(sp.rl, kind) is not None  # noqa: E731
    for env_name, _, spec in chosen(root, games, has_it, f"rl.{kind} block"):
        result = run_sweep(env_name, spec, root, runs, jobs, folder, train_models=train_models, kind=kind)
        atomic_write(results_file(folder, env_name, kind), json.dumps(result, indent=1) + "\n")


def render_sweep(r: dict[str, Any]) -> list[str]:
    tables = [t for t in r["levels"]["heuristic"] if all(t in row["tables"] for row in r["rows"])]
    if r.get("kind") == "ablation":
        head = (
            f"**Ablation** (family `{r['family']}`, `{r['config']}`): each row adds one part of the family's recipe "
            f"to the row above, the last being the family as first designed; on seeds {r['seeds']} kept apart from the "
            f"published seeds {r['published_seeds']}, {r['steps']:,} learner steps each, scored by the area under the "
            "learning curve (AUC) at each table. The config is fixed from these rows before the published seeds "
            f"train. Regenerate: `parlour baselines --track ablation {r['env']}`."
        )
    else:
        head = (
            f"**Tuning sweep** (family `{r['family']}`, `{r['config']}`): one setting changed at a time, on seeds "
            f"{r['seeds']} kept apart from the published seeds {r['published_seeds']}, {r['steps']:,} learner steps "
            "each, scored by the area under the learning curve (AUC) at each table. The published config was fixed "
            "before the sweep ran: the table shows whether another setting would have done better, not how the config "
            f"was chosen. Regenerate: `parlour baselines --track sweep {r['env']}`."
        )
    if r.get("backend") == "jax":
        head += (
            " The curves' points were played on the game's JAX core against its batched bots (`train.eval_backend: "
            "jax`: deals of their own, not the benchmark's, and no expert, which has no batched version)."
        )
    lines = [
        head,
        "",
        "| setting | "
        + " | ".join(f"AUC at the {t} table" for t in tables)
        + " | last point at the "
        + " | last point at the ".join(tables)
        + " | hours |",
        "|---|" + "---:|" * (2 * len(tables) + 1),
    ]
    for row in r["rows"]:
        aucs = " | ".join(f"{row['tables'][t]['auc']:.3f}" for t in tables)
        last = " | ".join(f"{row['tables'][t]['iqm'][-1]:.3f}" for t in tables)
        lines.append(f"| {row['setting']} | {aucs} | {last} | {row['train_wall_seconds'] / 3600:.1f} |")
    missing = [s for s in r["settings"] if s not in {row["setting"] for row in r["rows"]}]
    widths = [(hi - lo) / 2 for row in r["rows"] for cis in row.get("last_ci", {}).values() for lo, hi in cis]
    if widths:
        lines += [
            "",
            f"Each point is a seed's win rate on {r['rows'][0]['point_games']} games; the last points' 95% intervals "
            f"({CLUSTER_METHOD}) are ±{np.mean(widths):.3f} on average (±{min(widths):.3f} to ±{max(widths):.3f}), so "
            "settings whose last points differ by less than that are not told apart by this sweep.",
        ]
    if r.get("kind") == "ablation" and r.get("fixes") and r["rows"] and tables:
        reference = next((t for t in tables if t.endswith("_heuristic")), tables[-1])  # the heuristic's table
        best = max(r["rows"], key=lambda row: row["tables"][reference]["auc"])
        lines += [
            "",
            f"The family's config is fixed at the row with the largest AUC at the {reference} table, **{best['setting']}**"
            f" (`{r['fixes']}`).",
        ]
    if missing:
        lines += ["", f"Not trained yet: {', '.join(missing)}."]
    return [*lines, ""]
