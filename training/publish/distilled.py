"""The distilled track (``parlour baselines``): the scripted expert imitated, then PPO, over several seeds.

Each game has ``configs/<game>/baselines.yaml``: the training config, the training seeds, the benchmark scenario set
(:mod:`parlour.training.scenarios`: player count, opponents, deals) and the seed that ships as ``<game>_distilled``
(fixed before training, so the shipped policy is never the luckiest seed). For each game the track:

1. trains every seed whose policy file is missing or was trained from another config (seeds run in parallel
   processes, ``--jobs``; a run folder left by an interrupted run is resumed), exporting
   ``<env>_distilled_seed<K>.json`` + ``.safetensors``; ``<env>_distilled.json`` is the shipped seed's spec;
2. evaluates every seed and every scripted bot on the scenario (:func:`~parlour.training.scenarios.benchmark_report`),
   with deal-clustered intervals;
3. aggregates the seeds (:mod:`parlour.training.stats`), draws the learning curves and stores everything in
   ``<env>_results.json``; :func:`render` draws its section of BASELINES.md."""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

from parlour.baselines import available, game_name, make
from parlour.baselines.policy_file import PolicyFile, read_spec, read_weights, save_policy, table_for
from parlour.envs.fileio import atomic_write
from parlour.training.publish.results import (
    GAP_TARGET,
    aggregate_rows,
    minutes,
    reference_bots,
    results_file,
    seed_stats,
    ship_seed,
    standing_lines,
)
from parlour.training.publish.reuse import fresh_or_reused, is_current, train_or_reuse
from parlour.training.publish.schema import CHECKPOINTS, FIGURES, BaselineSpec, seed_path, seeds_folder, specs
from parlour.training.scenarios import benchmark_report, cell, cell_ci, header, scenario
from parlour.training.stats import (
    CELL_METHOD,
    CLUSTER_METHOD,
    NORMALISED_METHOD,
    PAIRED_METHOD,
    SEED_T_METHOD,
    format_ci,
)


def _train_seed(job: tuple[str, str, int, str, str]) -> dict[str, Any]:
    """Train one seed in its run folder (resuming one left by an interrupted run of the same config) and export its
    policy file."""
    from parlour.training.config import load_config
    from parlour.training.run import POLICY_STEM

    env_name, config_path, seed, root, folder = job
    cfg = load_config(config_path, [f"seed={seed}"])
    run = Path(root) / "runs" / "baselines" / env_name / f"seed{seed}"
    state = fresh_or_reused(run, cfg, f"seed {seed}")
    # a finished run was trained before from this config: only its export was missing
    metrics = train_or_reuse(cfg, run, state, f"parlour baselines {env_name} (seed {seed})")
    src = run / f"{POLICY_STEM}.json"
    spec = read_spec(src)
    save_policy(seed_path(env_name, seed, Path(folder)), read_weights(src, spec), spec)
    return {"seed": seed, "train_wall_seconds": metrics.get("train_wall_seconds"), "timesteps": metrics["timesteps"]}


def train_seeds(env_name: str, spec: BaselineSpec, root: Path, jobs: int, folder: Path = CHECKPOINTS) -> list[int]:
    """Train the seeds whose policy file is missing or stale; returns them."""
    from parlour.training.config import load_config

    todo = [
        k
        for k in spec.seeds
        if not is_current(seed_path(env_name, k, folder), load_config(root / spec.config, [f"seed={k}"]))
    ]
    if not todo:
        print(f"{env_name}: every seed's policy is current ({spec.seeds}); nothing to train")
        return []
    print(f"{env_name}: training seeds {todo} ({min(jobs, len(todo))} at a time)")
    work = [(env_name, str(root / spec.config), k, str(root), str(folder)) for k in todo]
    if jobs <= 1 or len(todo) == 1:
        done = [_train_seed(w) for w in work]
    else:
        # Each seed is its own process (spawned: no state shared with this one), one torch thread each.
        with ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=get_context("spawn")) as pool:
            done = list(pool.map(_train_seed, work))
    for d in done:
        print(f"{env_name} seed {d['seed']}: {d['timesteps']} steps in {minutes(d['train_wall_seconds'])}")
    return todo


def clone_path(env_name: str, folder: Path = CHECKPOINTS) -> Path:
    """The shipped seed's clone: its network after behaviour cloning, before any PPO step (the clone row)."""
    return seeds_folder(folder) / f"{env_name}_distilled_clone.json"


def _clone_seed(job: tuple[str, str, int, str, str]) -> None:
    """Behaviour cloning alone for one seed (the same teacher games and epochs as its full run, so the same
    network PPO started from), exported as the game's clone."""
    from parlour.training.config import load_config
    from parlour.training.run import CLONE_STEM
    from parlour.training.train import train

    env_name, config_path, seed, root, folder = job
    cfg = load_config(config_path, [f"seed={seed}"])
    run = Path(root) / "runs" / "baselines" / env_name / f"clone-seed{seed}"
    state = fresh_or_reused(run, cfg, f"the clone of seed {seed}")
    train(cfg, run, resume=state.state != "new", command=f"parlour baselines {env_name} (clone of seed {seed})",
          progress=False, final_eval=False, clone_only=True)  # fmt: skip
    src = run / f"{CLONE_STEM}.json"
    spec = read_spec(src)
    save_policy(clone_path(env_name, Path(folder)), read_weights(src, spec), spec)


def train_clone(env_name: str, spec: BaselineSpec, root: Path, folder: Path = CHECKPOINTS) -> bool:
    """Clone the shipped seed's teacher unless its clone is current (a config without a teacher has none)."""
    from parlour.training.config import load_config

    cfg = load_config(root / spec.config, [f"seed={spec.shipped_seed}"])
    if not cfg.pretrain.teacher or is_current(clone_path(env_name, folder), cfg):
        return False
    print(f"{env_name}: behaviour cloning alone for seed {spec.shipped_seed} (the clone row)")
    _clone_seed((env_name, str(root / spec.config), spec.shipped_seed, str(root), str(folder)))
    return True


def ship(env_name: str, spec: BaselineSpec, folder: Path = CHECKPOINTS) -> Path:
    """``<env>_distilled.json`` and its weights: the shipped seed's (:func:`~.results.ship_seed`)."""
    source = seed_path(env_name, spec.shipped_seed, folder)
    return ship_seed(source, folder / f"{env_name}_distilled.json", {"shipped_seed": spec.shipped_seed})


def evaluate_game(
    env_name: str,
    spec: BaselineSpec,
    *,
    progress: bool,
    folder: Path = CHECKPOINTS,
    workers: int = 1,
    ray_address: str = "",
) -> dict[str, Any]:
    """Every trained seed and every scripted bot on the game's scenario; seeds aggregated."""
    sc = scenario(env_name, spec.scenarios)
    # the name the shipped seed plays under (a game's first publication writes its file only after this evaluation)
    name = f"{game_name(env_name)}_distilled"
    table = table_for(env_name, sc.num_players, sc.options)
    seeds = [k for k in spec.seeds if seed_path(env_name, k, folder).is_file()]
    if not seeds:
        raise FileNotFoundError(f"{env_name}: no trained seed in {folder}: run without --skip-training")
    trained = [PolicyFile(seed_path(env_name, k, folder), table, label=f"{name}@seed{k}") for k in seeds]
    bots = [make(b, env_name) for b in available(env_name) if b not in spec.skip_bots and b not in (name,)]
    if clone_path(env_name, folder).is_file():  # the clone alone, right after behaviour cloning: a row, not a seed
        clone_label = f"{name} clone (seed {spec.shipped_seed}, before PPO)"
        bots.insert(0, PolicyFile(clone_path(env_name, folder), table, label=clone_label))
    start = time.perf_counter()
    report = benchmark_report(
        [*trained, *bots], sc, spec.scenarios, progress=progress, workers=workers, ray_address=ray_address
    )
    report["evaluation_seconds"] = time.perf_counter() - start
    # the same derivation the rendering makes from the matchups (seed_stats), stored beside them
    report["seed_aggregate"] = {
        **seed_stats(report, [p.name for p in trained], list(sc.opponents)),
        "method": f"{SEED_T_METHOD}; {NORMALISED_METHOD}; {PAIRED_METHOD}",
    }
    report["seeds"] = [
        {
            "seed": k,
            "label": p.name,
            "timesteps": p.spec["training"].get("timesteps"),
            "train_wall_seconds": p.spec["training"].get("train_wall_seconds"),
            "pretrain_seconds": (p.spec["training"].get("pretrain") or {}).get("seconds"),
            "evaluations": p.spec["training"].get("evaluations", []),
        }
        for k, p in zip(seeds, trained, strict=True)
    ]
    if spec.accusations:
        from parlour.training.analyses import analysis
        from parlour.training.scenarios import resolve_opponents

        refs = reference_bots([b.name for b in bots]) or ()
        bots_of_note = [b for b in bots if b.name in refs]
        report["accusations"] = analysis(env_name, "accusations").table(
            env_name,
            [*trained, *bots_of_note],
            resolve_opponents(sc),
            num_players=sc.num_players,
            games=sc.deals,
            seed_set=sc.deal_set,
        )
    report["spec_seeds"] = list(spec.seeds)
    report["shipped"] = {"name": name, "seed": spec.shipped_seed}
    report["skipped_bots"] = list(spec.skip_bots)
    report["notes"] = list(spec.notes)
    return report


def plot_learning_curves(report: dict[str, Any], out: Path) -> Path | None:
    """Periodic-evaluation win rate against timesteps, per evaluation opponent: each seed thin, the mean over
    seeds bold, the range over seeds shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seeds = [s for s in report["seeds"] if s["evaluations"]]
    if not seeds:
        return None
    opponents = list(
        dict.fromkeys(k for s in seeds for row in s["evaluations"] for k in row if k not in ("timesteps", "time"))
    )
    fig, axes = plt.subplots(1, len(opponents), figsize=(4.2 * len(opponents), 3.6), squeeze=False, sharey=True)
    for ax, opp in zip(axes[0], opponents, strict=True):
        curves = {}
        for s in seeds:
            xs = [row["timesteps"] for row in s["evaluations"] if opp in row]
            ys = [row[opp]["win_rate"] for row in s["evaluations"] if opp in row]
            curves[s["seed"]] = dict(zip(xs, ys, strict=True))
            ax.plot(xs, ys, lw=0.8, alpha=0.6, label=f"seed {s['seed']}")
        common = sorted(set.intersection(*(set(c) for c in curves.values())))
        if common:
            grid = np.array([[c[x] for x in common] for c in curves.values()])
            ax.plot(common, grid.mean(0), lw=2.2, color="black", label=f"mean of {len(curves)}")
            ax.fill_between(common, grid.min(0), grid.max(0), color="grey", alpha=0.25, label="range over seeds")
        ax.set(title=f"vs {opp}", xlabel="timesteps", ylim=(0, 1))
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("win rate (periodic evaluation)")
    axes[0][-1].legend(fontsize=7)
    fig.suptitle(f"{report['env']}: learning curves of the published config over training seeds", fontsize=10)
    fig.tight_layout()
    atomic_write(out, lambda path: fig.savefig(path, dpi=90, format="png"))  # a link at out is replaced, not followed
    plt.close(fig)
    return out


def regenerate(
    games: list[str] | None,
    *,
    train_models: bool,
    progress: bool,
    jobs: int = 2,
    root: Path | None = None,
    folder: Path = CHECKPOINTS,
    figures: Path = FIGURES,
    workers: int = 1,
    ray_address: str = "",
) -> None:
    """Train (unless ``train_models`` is false), evaluate and publish ``games`` (default: every spec under
    ``root``, the working directory); policy files and results in ``folder``, figures in ``figures``."""
    root = root or Path.cwd()
    table = specs(root)
    unknown = sorted(set(games or []) - set(table))
    if unknown:
        raise ValueError(f"no baselines spec for {unknown}; available: {sorted(table)}")
    for env_name in games or list(table):
        spec_path, spec = table[env_name]
        if train_models:
            train_seeds(env_name, spec, root, jobs, folder)
            train_clone(env_name, spec, root, folder)
        report = evaluate_game(
            env_name, spec, progress=progress, folder=folder, workers=workers, ray_address=ray_address
        )
        if seed_path(env_name, spec.shipped_seed, folder).is_file():
            ship(env_name, spec, folder)
        report["spec"] = str(spec_path.relative_to(root))
        report["config"] = spec.config
        figure = plot_learning_curves(report, figures / f"{env_name}_learning_curves.png")
        report["figure"] = os.path.relpath(figure, root) if figure is not None else None
        atomic_write(results_file(folder, env_name, "distilled"), json.dumps(report, indent=1) + "\n")


def distilled_recipe(env_name: str, seeds: list[int], folder: Path) -> dict[str, Any] | None:
    """What the distilled seeds are made of, from their policy files: the teacher, its games and decisions, the
    feature sets, the PPO steps."""
    files = [seed_path(env_name, k, folder) for k in seeds]
    if not all(f.is_file() for f in files):
        return None
    specs_ = [read_spec(f) for f in files]
    pre = [s["training"].get("pretrain") or {} for s in specs_]
    if not pre[0].get("teacher"):
        return None  # nothing distilled: no header to print
    return {
        "teacher": pre[0].get("teacher"),
        "games": [p.get("games") for p in pre],
        "decisions": [p.get("decisions") for p in pre],
        "features": list(specs_[0]["network"].get("features", [])),
        "timesteps": [s["training"].get("timesteps") for s in specs_],
    }


def render(r: dict[str, Any], folder: Path = CHECKPOINTS) -> list[str]:
    opponents = list(dict.fromkeys(m["opponent"] for m in r["matchups"]))
    trained = [s["label"] for s in r["seeds"]]
    stats = seed_stats(r, trained, opponents)
    missing = [k for k in r["spec_seeds"] if k not in [s["seed"] for s in r["seeds"]]]
    name = r["shipped"]["name"]
    cfg = r["seeds"][0]
    recipe = distilled_recipe(r["env"], [s["seed"] for s in r["seeds"]], folder)
    reads = recipe is not None and bool(recipe["features"])
    lines = [
        "### distilled track: "
        + (f"`{recipe['teacher']}` distilled" if recipe is not None else "the expert distilled")
        + (" (inputs include the expert's inference)" if reads else ""),
        "",
    ]
    if recipe is not None:
        games = int(recipe["games"][0] or 0)
        decisions = sum(int(d or 0) for d in recipe["decisions"]) / len(recipe["decisions"])
        steps = sum(int(t or 0) for t in recipe["timesteps"]) / len(recipe["timesteps"])
        features = ", ".join(f"`{f}`" for f in recipe["features"]) or "none"
        lines += [
            f"**Teacher** `{recipe['teacher']}`; **teacher decisions** {decisions:,.0f} a seed (behaviour cloning on "
            f"{games:,} of its games); **feature sets** {features}"
            + (
                " -- inputs include the expert's inference. "
                if reads
                else " -- its inputs are the observation alone; what it takes from the teacher is imitation. "
            )
            + f"**Budget** a seed: {decisions:,.0f} teacher decisions, then {steps:,.0f} PPO steps"
            + (
                f", each of which calls the expert's inference for its features ({steps:,.0f} calls)"
                if recipe["features"]
                else ""
            )
            + ". Regenerate: `parlour baselines "
            + r["env"]
            + "`.",
            "",
        ]
    lines += [
        f"Scenario set `{r['scenario_set']}`: {r['num_players']} players, deal set `{r['seed_set']}`, {r['deals']} deals × "
        f"{r['num_players']} seats = {r['deals'] * r['num_players']} games per cell. Config `{r['config']}` "
        f"({cfg['timesteps']} timesteps a seed), seeds {[s['seed'] for s in r['seeds']]}; parlour {r['package_version']}."
        + (f" Not in the table: {', '.join(r['skipped_bots'])} (see the spec)." if r.get("skipped_bots") else ""),
        "",
    ]
    if missing:
        have = [s["seed"] for s in r["seeds"]]
        lines += [
            f"**Only seed(s) {have} of the spec's {r['spec_seeds']} are trained so far** (seeds {missing} are not): "
            + (
                "with one seed there is no aggregate over seeds and no seed-to-seed spread to show."
                if len(have) == 1
                else "the aggregate is over the trained seeds only."
            ),
            "",
        ]
    lines += header(r)
    cells = {(m["policy"], m["opponent"]): m for m in r["matchups"]}
    n = len(trained)
    lines += aggregate_rows(name, stats, opponents)
    for s in r["seeds"]:
        tag = " (shipped)" if s["seed"] == r["shipped"]["seed"] else ""
        row = " | ".join(cell(cells[(s["label"], o)]) for o in opponents)
        lines.append(f"| {name} seed {s['seed']}{tag} | {row} |")
    for p in r["policies"]:
        if p not in trained:
            lines.append(f"| {p} | " + " | ".join(cell(cells[(p, o)]) for o in opponents) + " |")
    lines.append("")
    if n > 1:
        lines += [*standing_lines(name, stats, opponents), ""]
    lines += render_goal(r)
    if r.get("accusations"):
        from parlour.training.analyses import analysis

        lines += [
            "**Accusations** (the same deals and seats, replayed from the games' records; *right*: the verdict showed "
            "every smile; *made unsure*: at the moment of accusing, the seat's information still allowed another "
            "solution):",
            "",
            analysis(r["env"], "accusations").format_table(r["accusations"]),
            "",
        ]
    times = ", ".join(
        f"seed {s['seed']} "
        + (
            minutes(s["train_wall_seconds"])
            + (
                f" of PPO after {minutes(s['pretrain_seconds'])} of behaviour cloning"
                if s.get("pretrain_seconds")
                else ""
            )
            if s["train_wall_seconds"]
            else "not recorded (trained before runs kept their wall time)"
        )
        for s in r["seeds"]
    )
    lines.append(
        f"Wall-clock time on our 2-core machine: training {times}; this evaluation {minutes(r.get('evaluation_seconds'))}."
    )
    if r.get("notes"):
        lines += ["", *r["notes"]]
    no_curve = [s["seed"] for s in r["seeds"] if not s["evaluations"]]
    if no_curve:
        lines += [
            "",
            f"Seed(s) {no_curve} were trained before runs stored their periodic evaluations: no learning curve.",
        ]
    if r.get("figure"):
        lines += ["", f"![{r['env']} learning curves]({r['figure']})"]
    lines += ["", "Ratings (OpenSkill, all games above): "]
    lines.append(", ".join(f"{k} {v['ordinal']:.2f}" for k, v in r["ratings"].items()) + ".")
    lines.append("")
    return lines


def goal_comparison(r: dict[str, Any]) -> dict[str, Any] | None:
    """Per table, the trained seeds against the heuristic and expert bots, from the stored per-deal wins.

    The seeds are pooled per deal (every seed plays the same deals in every seat, so a deal's games across seeds
    share their cards: they are one cluster), giving the seeds' win rate with its cell interval
    (:func:`parlour.training.stats.cell_interval`) beside the heuristic's own; ``apart`` says whether the two intervals are disjoint. ``difference`` is the paired
    per-deal difference (seeds' win rate minus the heuristic's on the same deals) with its BCa interval over deals.
    ``gap_closed`` is (seeds − heuristic) / (expert − heuristic), where the expert is above the heuristic."""
    from parlour.training.stats import cell_interval, clustered_interval

    bots = reference_bots(r["policies"])
    if bots is None:
        return None
    heuristic, expert = bots
    cells = {(m["policy"], m["opponent"]): m for m in r["matchups"]}
    trained = [s["label"] for s in r["seeds"]]
    n = r["num_players"]
    tables = {}
    for opponent in dict.fromkeys(m["opponent"] for m in r["matchups"]):
        pooled = np.sum([np.asarray(cells[(p, opponent)]["deal_wins"], float) for p in trained], axis=0)
        per_deal = pooled / (n * len(trained))
        h, e = cells[(heuristic, opponent)], cells[(expert, opponent)]
        h_deal = np.asarray(h["deal_wins"], float) / n
        rate = float(per_deal.mean())
        ci = cell_interval(pooled, n * len(trained))
        diff = per_deal - h_deal
        diff_ci = clustered_interval(diff, proportion=False)
        gap = e["win_rate"] - h["win_rate"]
        tables[opponent] = {
            "seeds_win_rate": rate,
            "seeds_ci": list(ci),
            "heuristic": h["win_rate"],
            "heuristic_ci": list(cell_ci(h)),
            "expert": e["win_rate"],
            "expert_ci": list(cell_ci(e)),
            "apart": bool(ci[0] > cell_ci(h)[1]),
            "difference": float(diff.mean()),
            "difference_ci": list(diff_ci),
            "gap_closed": float((rate - h["win_rate"]) / gap) if gap > 0 else None,
        }
    return {"heuristic": heuristic, "expert": expert, "seeds": len(trained), "tables": tables}


def render_goal(r: dict[str, Any]) -> list[str]:
    goal = goal_comparison(r)
    if goal is None:
        return []
    h, e = goal["heuristic"], goal["expert"]
    k = goal["seeds"]
    lines = [
        f"**Goal check** (the {k} seed{'s' if k > 1 else ''} pooled per deal, {CELL_METHOD}; the difference is "
        f"paired on the same deals, {CLUSTER_METHOD}): does the trained policy beat {h}'s own result at each table with intervals "
        f"apart, and how much of the {h}→{e} gap does it close (target at {h}'s table: {GAP_TARGET:.0%})?",
        "",
        f"| table | trained, {k} seed{'s' if k > 1 else ''} pooled | {h} | difference | intervals apart | {e} | gap closed |",
        "|---|---|---|---|---|---|---:|",
    ]
    for opponent, t in goal["tables"].items():
        gap = "—" if t["gap_closed"] is None else f"{t['gap_closed']:.0%}"
        if opponent == h and t["gap_closed"] is not None:
            gap += " ✓" if t["gap_closed"] >= GAP_TARGET else " ✗"
        lines.append(
            f"| vs {opponent} | {t['seeds_win_rate']:.3f} ({format_ci(t['seeds_ci'])}) | {t['heuristic']:.3f} "
            f"({format_ci(t['heuristic_ci'])}) | {t['difference']:+.3f} ({t['difference_ci'][0]:+.3f}–"
            f"{t['difference_ci'][1]:+.3f}) | {'yes' if t['apart'] else 'no'} | {t['expert']:.3f} "
            f"({format_ci(t['expert_ci'])}) | {gap} |"
        )
    ceiling = [o for o, t in goal["tables"].items() if t["heuristic_ci"][1] >= 1.0]
    if ceiling:
        lines += [
            "",
            f"At the {', '.join(ceiling)} table {h} already wins every game (its interval reaches 1): no policy can "
            "beat it there with intervals apart; matching it is the most there is.",
        ]
    lines.append("")
    return lines
