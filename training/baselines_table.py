"""``parlour baselines``: train the published policies over several seeds, evaluate them, rewrite ``BASELINES.md``.

Each game has ``configs/<game>/baselines.yaml``: the training config, the training seeds, the benchmark scenario set
(:mod:`parlour.training.scenarios`: player count, opponents, deals) and the seed that ships as ``<game>_distilled``
(fixed before training, so the shipped policy is never the luckiest seed). For each game the command:

1. trains every seed whose policy file is missing or was trained from another config (seeds run in parallel
   processes, ``--jobs``; a run folder left by an interrupted run is resumed), exporting
   ``baselines/checkpoints/<env>_distilled_seed<K>.json`` + ``.safetensors``; ``<env>_distilled.json`` is the shipped
   seed's spec;
2. evaluates every seed and every scripted bot on the scenario (:func:`~parlour.training.scenarios.benchmark_report`),
   with deal-clustered intervals;
3. aggregates the seeds (:mod:`parlour.training.stats`: mean and IQM with stratified bootstrap intervals, probability
   of improvement over the bots), draws the learning curves (``baselines/figures/<env>_learning_curves.png``) and
   stores everything in ``baselines/checkpoints/<env>_results.json``;

then renders ``BASELINES.md`` from all stored results.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

from parlour.baselines import CHECKPOINT_DIR, available, game_name, make
from parlour.baselines.policy_file import PolicyFile, PolicyFileError, read_spec, read_weights, save_policy, table_for
from parlour.envs.fileio import FileSafetyError, FolderLock, atomic_write, read_json
from parlour.training.scenarios import benchmark_report, cell, cell_ci, games_per_deal, header, scenario
from parlour.training.stats import (
    CELL_METHOD,
    CLUSTER_METHOD,
    NORMALISED_METHOD,
    PAIRED_METHOD,
    SEED_T_METHOD,
    format_ci,
)

CHECKPOINTS = CHECKPOINT_DIR
FIGURES = CHECKPOINT_DIR.parent / "figures"
#: Config keys that do not change the trained weights (when and how often a run evaluates or checkpoints itself,
#: whether it may load pickles): a seed trained under other values of these is still current.
NOT_TRAINING = {
    "eval": None,
    "trust_pickle": None,
    "track": None,  # what the policy is called, not how it was trained (the teacher and features are kept)
    "train": ("eval_every", "checkpoint_every"),
    "rllib": ("ray_address",),
}


@dataclass
class BaselineSpec:
    env: str = ""
    #: The training config of the published policy (relative to the repository root).
    config: str = ""
    #: Training seeds; every one is trained, evaluated and reported.
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2])
    #: The seed whose policy ships as ``<game>_distilled`` (chosen before training).
    shipped_seed: int = 0
    #: The benchmark scenario set (:data:`parlour.training.scenarios.SCENARIO_SETS`).
    scenarios: str = "v1"
    #: Bots left out of the table (say why in the spec; e.g. too slow for this many games).
    skip_bots: list[str] = field(default_factory=list)
    #: Sentences printed under the game's table (what a reader must know that the figures do not say).
    notes: list[str] = field(default_factory=list)
    #: Lady Alice: also report each seed's and each reference bot's accusations at every table (how often they are
    #: right, how often made while another solution was still possible; :mod:`parlour.training.analyses`).
    accusations: bool = False
    #: The game's rl track and exploitability table (absent: not published for this game).
    rl: RLSpec | None = None
    exploit: ExploitSpec | None = None


@dataclass
class SweepSpec:
    """A small tuning sweep of one rl family: one setting changed at a time from its config, on seeds kept apart
    from the published ones, at a reduced budget; scored by the area under the learning curve at the heuristic's
    table."""

    #: The family whose config is swept (a key of ``rl.algorithms``).
    family: str = ""
    #: Config key -> the values tried instead of the config's own (each a value as an override writes it).
    grid: dict[str, list[str]] = field(default_factory=dict)
    seeds: list[int] = field(default_factory=lambda: [100])
    #: Learner steps of each sweep run (evaluated at ten points of it).
    steps: int = 200_000
    #: An ablation instead of a grid (``rl.ablation``): rung label -> every override of that rung, in order, each
    #: rung adding one thing to the one above it (the last is the family's config as published: no override).
    ladder: dict[str, list[str]] = field(default_factory=dict)
    #: The family's config where it is not (yet) one of ``rl.algorithms``: a family's recipe is fixed from its
    #: ablation before its published seeds train (empty: ``rl.algorithms[family]``).
    config: str = ""


@dataclass
class RLSpec:
    """A game's rl track (``rl:`` in its ``baselines.yaml``; :mod:`parlour.training.rl_track`)."""

    #: Algorithm family -> its training config (a ``track: rl`` config, relative to the repository root).
    algorithms: dict[str, str] = field(default_factory=dict)
    #: Training seeds of every family; the aggregate is over all of them.
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2, 3, 4])
    #: The family and seed that ship as ``<game>_rl`` (chosen before training).
    shipped_algorithm: str = ""
    shipped_seed: int = 0
    #: Deals of the cross-play table (every seed at a table of every other seed; once per seat).
    cross_play_deals: int = 25
    notes: list[str] = field(default_factory=list)
    #: The tuning sweep (``parlour baselines --track sweep``), on seeds kept apart from ``seeds``.
    sweep: SweepSpec | None = None
    #: The ablation (``parlour baselines --track ablation``): a ``ladder`` of rungs, each adding one part of the
    #: family's recipe, on seeds kept apart from ``seeds``.
    ablation: SweepSpec | None = None


@dataclass
class ExploitSpec:
    """A game's approximate-exploitability table (``exploit:`` in its ``baselines.yaml``; :mod:`parlour.training.exploit`)."""

    #: The policies and bots to train best responses against (names :func:`parlour.baselines.resolve` accepts).
    targets: list[str] = field(default_factory=list)
    #: Learner steps of each best response (MaskablePPO from scratch, the game's rl-track config).
    steps: int = 300_000
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2])
    #: Deals of the evaluation deal set each best response is scored on (once per seat).
    games: int = 100
    notes: list[str] = field(default_factory=list)
    #: Games of behaviour cloning of the target each best response starts from (0: from scratch); a response that
    #: starts as a copy of the target starts no worse than it.
    warm_games: int = 0
    #: Learner steps between the best responses' periodic evaluations (0: none): their learning curve.
    eval_every: int = 0
    #: Compute the bound (:func:`parlour.training.exploit.exploitability_bound`): the trained responses and every
    #: published policy and bot of the game, chosen on the benchmark's deals and reported on fresh ones.
    bound: bool = False


def specs(root: Path) -> dict[str, tuple[Path, BaselineSpec]]:
    from omegaconf import OmegaConf

    from parlour.training.analyses import offering
    from parlour.training.config import ConfigError

    out = {}
    for path in sorted((root / "configs").glob("*/baselines.yaml")):
        try:
            spec: BaselineSpec = OmegaConf.to_object(  # type: ignore[assignment]
                OmegaConf.merge(OmegaConf.structured(BaselineSpec), OmegaConf.load(path))
            )
        except Exception as exc:  # noqa: BLE001 - any OmegaConf error is reported with the file
            raise ConfigError(f"{path}: {str(exc).splitlines()[0]}") from None
        if spec.shipped_seed not in spec.seeds:
            raise ConfigError(f"{path}: shipped_seed={spec.shipped_seed} is not one of seeds={spec.seeds}")
        if spec.accusations and spec.env not in offering("accusations"):
            raise ConfigError(
                f"{path}: accusations: true is for the games that offer the analysis ({offering('accusations')}; "
                f"{spec.env} has no accusations)"
            )
        if spec.rl is not None:
            rl = spec.rl
            if not rl.algorithms:
                raise ConfigError(f"{path}: rl.algorithms is empty: name each family's track: rl config")
            if rl.shipped_algorithm not in rl.algorithms:
                raise ConfigError(
                    f"{path}: rl.shipped_algorithm={rl.shipped_algorithm!r} is not one of rl.algorithms="
                    f"{sorted(rl.algorithms)}"
                )
            if rl.shipped_seed not in rl.seeds:
                raise ConfigError(f"{path}: rl.shipped_seed={rl.shipped_seed} is not one of rl.seeds={rl.seeds}")
            for key, sweep in (("sweep", rl.sweep), ("ablation", rl.ablation)):
                if sweep is None:
                    continue
                if sweep.family not in rl.algorithms and not sweep.config:
                    raise ConfigError(
                        f"{path}: rl.{key}.family={sweep.family!r} is not one of rl.algorithms={sorted(rl.algorithms)} "
                        f"(or give rl.{key}.config)"
                    )
                if set(sweep.seeds) & set(rl.seeds):
                    raise ConfigError(
                        f"{path}: rl.{key}.seeds={sweep.seeds} share {sorted(set(sweep.seeds) & set(rl.seeds))} with "
                        f"rl.seeds={rl.seeds}: {'an' if key[0] in 'aeiou' else 'a'} {key} runs on seeds kept apart from the "
                        "published ones"
                    )
                if (key == "ablation") != bool(sweep.ladder) or (key == "ablation" and sweep.grid):
                    raise ConfigError(
                        f"{path}: rl.{key} takes "
                        + ("a ladder (rung label -> overrides), no grid" if key == "ablation" else "a grid, no ladder")
                    )
        out[spec.env] = (path, spec)
    if not out:
        raise FileNotFoundError(
            f"no configs/*/baselines.yaml under {root}: run parlour baselines from the repository root"
        )
    return out


def chosen(root: Path, games: list[str] | None, has: Any, what: str) -> list[tuple[str, Path, BaselineSpec]]:
    """The specs under ``root`` for which ``has(spec)`` holds, in order, limited to ``games`` when given (a game
    without one is refused, naming ``what`` it lacks and the games that have it)."""
    table = {env: sp for env, sp in specs(root).items() if has(sp[1])}
    unknown = sorted(set(games or []) - set(table))
    if unknown:
        raise ValueError(f"no {what} in configs/<game>/baselines.yaml for {unknown}; available: {sorted(table)}")
    return [(env, *table[env]) for env in games or list(table)]


def seed_path(env_name: str, seed: int, folder: Path = CHECKPOINTS) -> Path:
    return folder / f"{env_name}_distilled_seed{seed}.json"


def training_part(config: dict[str, Any]) -> dict[str, Any]:
    """The part of a resolved config (as a dict) that determines the trained weights."""
    out = {k: v for k, v in config.items() if k not in NOT_TRAINING or NOT_TRAINING[k] is not None}
    for section, keys in NOT_TRAINING.items():
        if keys is not None and section in out:
            out[section] = {k: v for k, v in out[section].items() if k not in keys}
    return out


def is_current(path: Path, cfg: Any) -> bool:
    """Whether the policy file at ``path`` was trained from ``cfg`` (up to :data:`NOT_TRAINING`; keys the file's
    config lacks count as their defaults)."""
    if not path.is_file():
        return False
    from parlour.training.config import config_record, with_defaults

    trained = with_defaults(read_spec(path).get("training", {}).get("config", {}))
    return trained is not None and training_part(trained) == training_part(config_record(cfg))


#: Config keys a run may differ in from the config asked for and still be that config's run: how often it
#: checkpoints and how many threads it uses change nothing it produces. (``train.total_timesteps`` is compared on
#: its own: a larger budget continues a run that matches in everything else.)
UNCHANGING = ("train.checkpoint_every", "train.torch_threads")


@dataclass(frozen=True)
class Reuse:
    """What a command that reuses runs may do with a run folder for the config it is asked for (:func:`reuse`)."""

    #: ``new`` (no run there), ``finished`` (it finished this config: its result stands), ``resume`` (stopped, or
    #: finished a smaller budget, and matches in everything else: continue it), ``mismatch`` (another config's run:
    #: neither reused nor resumed under this config's name).
    state: str
    #: Dotted key -> (the run's value, the value asked for): why it is a ``mismatch``.
    changes: dict[str, tuple[Any, Any]] = field(default_factory=dict)

    def describe(self) -> str:
        """The differing keys in one line."""
        return "; ".join(f"{k}: {old!r} in the run, {new!r} asked" for k, (old, new) in self.changes.items())


def reuse(run: Path, cfg: Any) -> Reuse:
    """Whether the run folder ``run`` holds ``cfg``'s run (issue 37, "reuse only what matches"): its saved config
    (``RUN/config.yaml``) is compared with ``cfg``, key by key, up to :data:`UNCHANGING`.

    A budget larger than the run's continues it (``resume``) if everything else matches; a budget smaller than what
    the run trained, or any other difference, is a ``mismatch``. The saved config is read, not validated: comparing
    it must neither import what it names nor refuse a run's own ``file.py:NAME`` opponents."""
    from parlour.training.config import read_config
    from parlour.training.run import RunError, checkpoint_step, config_changes, is_finished, is_run

    if not is_run(run):
        return Reuse("new")
    saved_path = run / "config.yaml"
    if saved_path.is_symlink():
        raise RunError(f"{saved_path} is a symbolic link; refusing to read it (a run folder holds none)")
    saved = read_config(saved_path)
    changes = {k: v for k, v in config_changes(saved, cfg).items() if k not in UNCHANGING}
    budget = changes.pop("train.total_timesteps", None)
    if changes:
        return Reuse("mismatch", changes if budget is None else {**changes, "train.total_timesteps": budget})
    if budget is None and is_finished(run, cfg):
        return Reuse("finished")
    if budget is not None and (budget[0] > budget[1] or is_finished(run, cfg)):
        # it trained toward another budget, past the one asked (a rollout can overshoot): its result is not this
        # budget's, and it cannot be continued to it
        return Reuse("mismatch", {"train.total_timesteps": budget})
    if is_finished(run, saved):
        return Reuse("resume")  # a larger budget: continue it
    step = checkpoint_step(run) or 0
    if step > cfg.train.total_timesteps:
        return Reuse("mismatch", {"train.total_timesteps": (saved.train.total_timesteps, cfg.train.total_timesteps)})
    return Reuse("resume")


def refuse_mismatch(run: Path, state: Reuse, what: str, remedy: str) -> None:
    """Raise ``RunError`` in one line if ``run`` holds another config's run (``state`` from :func:`reuse`)."""
    from parlour.training.run import RunError

    if state.state == "mismatch":
        raise RunError(
            f"{run} holds {what} trained from another config ({state.describe()}); it is neither reused nor "
            f"resumed: {remedy}"
        )


def train_or_reuse(cfg: Any, run: Path, state: Reuse, command: str) -> dict[str, Any]:
    """A reused run's metrics (``state``: what :func:`run_reuse` found), training it first unless it is finished:
    afresh, or resumed toward the config's budget. No final evaluation: the track evaluates every seed itself."""
    from parlour.training.train import train

    if state.state == "finished":
        return run_metrics(run)
    return train(cfg, run, resume=state.state == "resume", command=command, progress=False, final_eval=False)


def run_metrics(run: Path) -> dict[str, Any]:
    """A finished run's ``metrics.json``, refused in one line naming it unless it is a mapping."""
    metrics = read_json(run / "metrics.json", "metrics file")
    if not isinstance(metrics, dict):
        raise ValueError(f"{run / 'metrics.json'} is not a valid metrics file (not a JSON object)")
    return metrics


def _fresh_or_reused(run: Path, cfg: Any, what: str) -> Reuse:
    """The distilled track's run folder for ``cfg``: another config's run there is deleted (through
    :func:`parlour.training.train.delete_run`: only a run folder Parlour made, and only while no process holds it)
    and trained afresh. The distilled track retrains rather than refuses: its run folders are the command's working
    copies, never published (what it publishes is the exported policy file, already found stale from its config)."""
    from parlour.training.run import delete_run

    state = reuse(run, cfg)
    if state.state == "mismatch":
        print(f"{run}: {what} was started from another config ({state.describe()}); training it afresh")
    leftover = state.state == "new" and run.is_dir() and any(p.name != FolderLock.NAME for p in run.iterdir())
    if state.state == "mismatch" or leftover:  # leftover: a run stopped before it wrote its config
        delete_run(run, "parlour baselines")
        return Reuse("new")
    return state


def _train_seed(job: tuple[str, str, int, str, str]) -> dict[str, Any]:
    """Train one seed in its run folder (resuming one left by an interrupted run of the same config) and export its
    policy file."""
    from parlour.training.config import load_config
    from parlour.training.run import POLICY_STEM

    env_name, config_path, seed, root, folder = job
    cfg = load_config(config_path, [f"seed={seed}"])
    run = Path(root) / "runs" / "baselines" / env_name / f"seed{seed}"
    state = _fresh_or_reused(run, cfg, f"seed {seed}")
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
    return folder / f"{env_name}_distilled_clone.json"


def _clone_seed(job: tuple[str, str, int, str, str]) -> None:
    """Behaviour cloning alone for one seed (the same teacher games and epochs as its full run, so the same
    network PPO started from), exported as the game's clone."""
    from parlour.training.config import load_config
    from parlour.training.run import CLONE_STEM
    from parlour.training.train import train

    env_name, config_path, seed, root, folder = job
    cfg = load_config(config_path, [f"seed={seed}"])
    run = Path(root) / "runs" / "baselines" / env_name / f"clone-seed{seed}"
    state = _fresh_or_reused(run, cfg, f"the clone of seed {seed}")
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
    """``<env>_distilled.json``: the shipped seed's spec, naming that seed's weights file."""
    source = seed_path(env_name, spec.shipped_seed, folder)
    target = folder / f"{env_name}_distilled.json"
    data = read_spec(source)
    data["training"]["shipped_seed"] = spec.shipped_seed
    return atomic_write(target, json.dumps(data, indent=1, default=str) + "\n")


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
) -> Path:
    """Train (unless ``train_models`` is false), evaluate and publish ``games`` (default: every spec under
    ``root``, the working directory); policy files and results in ``folder``, figures in ``figures``."""
    root = root or Path.cwd()
    check_baselines_md(root / "BASELINES.md")  # refused before hours of training, not after
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
        atomic_write(folder / f"{env_name}_results.json", json.dumps(report, indent=1) + "\n")
    out = write_baselines_md(root / "BASELINES.md", render(folder))
    print(out.read_text())
    return out


def check_baselines_md(out: Path) -> None:
    """Refuse, in one line, a symbolic link at ``BASELINES.md``: writing through it would overwrite what it points to,
    and replacing it would delete a link someone made on purpose (the committed file is a regular one). Anything else
    there is Parlour's own page, rewritten."""
    if out.is_symlink():
        raise FileSafetyError(
            f"{out} is a symbolic link (to {os.readlink(out)}); refusing to write through it or replace it: remove the "
            "link (or put a regular file in its place) and run the command again"
        )


def write_baselines_md(out: Path, text: str) -> Path:
    """Write ``BASELINES.md`` atomically (:func:`check_baselines_md` first); returns ``out``."""
    check_baselines_md(out)
    return atomic_write(out, text)


def seed_stats(r: dict[str, Any], labels: list[str], opponents: list[str]) -> dict[str, Any]:
    """What a table says about the training seeds ``labels`` of a stored result ``r``, derived from its matchups
    alone (each cell's win rate and per-deal wins), so a rendering never reads a stale stored aggregate:

    - ``per_table``: the mean over seeds at each table with its Student-t interval (:func:`stats.seed_interval`);
    - ``normalised``: each seed's normalised score averaged over the tables, then over seeds (none without the
      random and expert bots' rows);
    - ``standing[bot][table]``: the paired per-deal comparison with the heuristic and the expert bots
      (:func:`stats.paired_comparison`; none without them)."""
    from parlour.training.stats import normalised, paired_comparison, seed_interval

    cells = {(m["policy"], m["opponent"]): m for m in r["matchups"]}
    rates = np.array([[cells[(p, o)]["win_rate"] for o in opponents] for p in labels], float)
    out: dict[str, Any] = {
        "seeds": len(labels),
        "per_table": {o: seed_interval(rates[:, i], (0.0, 1.0)) for i, o in enumerate(opponents)},
        "normalised": None,
        "standing": {},
    }
    refs = reference_bots(list(dict.fromkeys(m["policy"] for m in r["matchups"])))
    if refs is None:
        return out
    random_bot = "random" if all(("random", o) in cells for o in opponents) else None
    if random_bot is not None:
        low = np.array([cells[(random_bot, o)]["win_rate"] for o in opponents])
        high = np.array([cells[(refs[1], o)]["win_rate"] for o in opponents])
        try:
            out["normalised"] = seed_interval(normalised(rates, low, high).mean(axis=1))
        except ValueError:
            out["normalised"] = None  # a table where random and the expert tie: nothing to normalise by
    for bot in refs:
        out["standing"][bot] = {}
        for o in opponents:
            wins = [cells[(p, o)]["deal_wins"] for p in labels]
            out["standing"][bot][o] = paired_comparison(
                wins, cells[(bot, o)]["deal_wins"], games_per_deal(cells[(bot, o)])
            )
    return out


def aggregate_rows(name: str, stats: dict[str, Any], opponents: list[str]) -> list[str]:
    """A table's seed-aggregate row (``stats`` from :func:`seed_stats`): the mean over seeds with its Student-t
    interval; none for one seed."""
    n = stats["seeds"]
    if n < 2:
        return []
    values = [stats["per_table"][o] for o in opponents]
    return [
        f"| **{name}**, mean over {n} seeds | "
        + " | ".join(f"{a['value']:.3f} ({format_ci(a['ci'])})" for a in values)
        + " |"
    ]


def standing_text(comparison: dict[str, Any], bot: str) -> str:
    """``above X`` / ``below X`` / ``level with X`` with the paired difference and its interval."""
    lo, hi = comparison["ci"]
    word = {"above": "above", "below": "below", "level": "level with"}[comparison["standing"]]
    return f"{word} {bot} ({comparison['difference']:+.3f}, {lo:+.3f} to {hi:+.3f})"


def standing_lines(name: str, stats: dict[str, Any], opponents: list[str]) -> list[str]:
    """Where a family stands at each table against the heuristic and the expert (paired), and its normalised
    cross-table score."""
    parts = []
    for o in opponents:
        agg = stats["per_table"][o]
        against = ", ".join(standing_text(stats["standing"][b][o], b) for b in stats["standing"])
        parts.append(
            f"at the {o} table {agg['value']:.3f} ({format_ci(agg['ci'])})" + (f", {against}" if against else "")
        )
    tail = normalised_text(stats)
    return [f"- `{name}`: " + "; ".join(parts) + (f"; {tail}" if tail else "") + "."]


def normalised_text(stats: dict[str, Any]) -> str:
    """The normalised cross-table aggregate, or an empty string without one."""
    agg = stats.get("normalised")
    if not agg or stats["seeds"] < 2:
        return ""
    return f"normalised over the tables {agg['value']:.3f} ({format_ci(agg['ci'])})"


def minutes(seconds: float | None) -> str:
    """A wall time as printed in BASELINES.md: whole minutes, or seconds under one (never "0 min")."""
    if seconds is None:
        return "?"
    return f"{seconds:.0f} s" if seconds < 59.5 else f"{seconds / 60:.0f} min"


#: The keys of a stored result that hold wall-clock measurements (durations, timestamps): everything else in a results
#: file is a function of the configs, the seeds and the code, so a regeneration on any machine reproduces it
#: byte for byte once these are set aside (:func:`without_timings`; ``tests/test_regeneration.py``).
TIMING_KEYS = frozenset(
    {"evaluation_seconds", "cross_play_seconds", "train_wall_seconds", "pretrain_seconds", "train_hours", "time"}
)


def without_timings(value: Any) -> Any:
    """``value`` (a stored result, or any part of one) with every :data:`TIMING_KEYS` entry removed, at any depth:
    what two regenerations of the same result must agree on exactly."""
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


#: Each kind of stored result (see :func:`_results`) -> the keys its file must hold and their types.
RESULT_KEYS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "distilled": {
        "env": str,
        "num_players": int,
        "matchups": list,
        "policies": dict,
        "seeds": list,
        "seed_aggregate": dict,
        "spec_seeds": list,
        "shipped": dict,
        "ratings": dict,
    },
    "rl": {
        "env": str,
        "num_players": int,
        "matchups": list,
        "policies": dict,
        "families": dict,
        "spec_seeds": list,
        "shipped": dict,
    },
    "sweep": {"env": str, "family": str, "seeds": list, "steps": int, "settings": list, "rows": list, "levels": dict},
    "ablation": {
        "env": str,
        "family": str,
        "seeds": list,
        "steps": int,
        "settings": list,
        "rows": list,
        "levels": dict,
    },
    "exploit": {"env": str, "steps": int, "seeds": list, "games": int, "targets": list},
    "heldout": {"env": str, "matchups": list, "families": dict, "bots": list, "table": str},
}
#: What a results file that holds the right keys but not the right things in them raises while it is read.
MALFORMED = (KeyError, TypeError, ValueError, IndexError, AttributeError, ZeroDivisionError)


def results_file(folder: Path, env_name: str, kind: str) -> Path:
    """Where the stored result of ``kind`` (``distilled``, ``rl``, ``sweep``, ``exploit``, ``heldout``) for
    ``env_name`` lives."""
    return folder / (f"{env_name}_results.json" if kind == "distilled" else f"{env_name}_{kind}_results.json")


def read_results(path: Path, kind: str, keys: tuple[str, ...] | None = None) -> dict[str, Any]:
    """A stored results file of ``kind``; a missing, unreadable or malformed one -- not JSON, not an object, a key
    missing or of the wrong type -- raises ``ValueError`` in one line naming the file and what is wrong. ``keys``:
    check only these of :data:`RESULT_KEYS` (what the reader uses)."""
    data = read_json(path, f"{kind} results file")
    if not isinstance(data, dict):
        raise ValueError(f"{path} is not a valid {kind} results file (not a JSON object)")
    for key, kind_of in RESULT_KEYS[kind].items():
        if keys is not None and key not in keys:
            continue
        if key not in data:
            raise ValueError(f"{path} is not a valid {kind} results file (no {key!r})")
        if not isinstance(data[key], kind_of):
            want = kind_of.__name__ if isinstance(kind_of, type) else " or ".join(t.__name__ for t in kind_of)
            raise ValueError(
                f"{path} is not a valid {kind} results file ({key!r} is a {type(data[key]).__name__}, not a {want})"
            )
    if any(not isinstance(t, dict) or not isinstance(t.get("policy"), str) for t in data.get("targets", [])):
        raise ValueError(f"{path} is not a valid {kind} results file (a target is not an object with a 'policy')")
    return data


def malformed(path: Path | str, kind: str, exc: BaseException) -> ValueError:
    """The one-line error for a results file whose contents do not hold what rendering it needs."""
    what = f"no {exc}" if isinstance(exc, KeyError) else str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return ValueError(f"{path} is not a valid {kind} results file ({what})")


def _results(folder: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """Every stored result in ``folder`` by env, then kind: ``distilled`` (``<env>_results.json``), ``rl``
    (``<env>_rl_results.json``), ``sweep`` (``<env>_sweep_results.json``), ``exploit``
    (``<env>_exploit_results.json``), ``heldout`` (``<env>_heldout_results.json``); each checked by
    :func:`read_results`."""
    import re

    from parlour.envs import ENVIRONMENTS

    pattern = re.compile(r"(.+_v\d+)_(?:(rl|sweep|ablation|exploit|heldout)_)?results\.json")
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for path in folder.glob("*_results.json"):
        m = pattern.fullmatch(path.name)
        if m is not None:
            kind = m.group(2) or "distilled"
            out.setdefault(m.group(1), {})[kind] = read_results(path, kind)
    order = list(ENVIRONMENTS)
    return dict(sorted(out.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))


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
        "both rl families train at the random and heuristic tables; the distilled track met it) -- then at the "
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
    """The mixed table's row of :func:`at_a_glance` (:mod:`parlour.training.heldout`)."""
    from parlour.training.heldout import parity

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


def render(folder: Path) -> str:
    """BASELINES.md from every stored result in ``folder`` (:func:`_results`)."""
    from parlour.training import exploit, heldout, rl_track

    lines = [
        "# Published baselines",
        "",
        "Every game has up to four parts, each regenerated by the command written in it (from the repository root,",
        "from the committed `configs/<game>/baselines.yaml` and the training configs it names):",
        "",
        "- **rl track** (`parlour baselines --track rl`): what reinforcement learning reaches from the environment",
        "  alone -- its observation, its mask and the game's outcome -- at a fixed budget of learner steps, over five",
        "  training seeds and two algorithm families, with learning curves, sample efficiency and a cross-play table.",
        "  This is the reference for a researcher benchmarking an RL algorithm. It ships as `<game>_rl`.",
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
    results = _results(folder)
    for env, parts in results.items():
        if (spec := current.get(env)) is not None:
            for part, owner in (("distilled", spec), ("rl", spec.rl), ("exploit", spec.exploit)):
                if part in parts and owner is not None:
                    parts[part]["notes"] = list(owner.notes)
    lines += at_a_glance(results, folder)
    renderers = {
        "rl": rl_track.render,
        "sweep": rl_track.render_sweep,
        "ablation": rl_track.render_sweep,
        "distilled": lambda r: _render_game(r, folder),
        "heldout": heldout.render,
        "exploit": exploit.render,
    }
    for env, parts in results.items():
        lines += [f"## {env}", ""]
        for kind, draw in renderers.items():
            if kind in parts:
                try:
                    lines += draw(parts[kind])
                except PolicyFileError:
                    raise  # a seed's policy file, named by its own message
                except MALFORMED as exc:  # a file with the right keys but not what they must hold
                    raise malformed(results_file(folder, env, kind), kind, exc) from None
    return "\n".join(lines)


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


def _render_game(r: dict[str, Any], folder: Path = CHECKPOINTS) -> list[str]:
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
    lines += _render_goal(r)
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


#: The issue-15 goal a published baseline is held to, per table: beat the heuristic bot's own result there with
#: deal-clustered intervals apart, and close at least this share of the heuristic-to-expert gap at the heuristic's
#: table.
GAP_TARGET = 0.5


def reference_bots(names: list[str]) -> tuple[str, str] | None:
    """The game's heuristic and expert bots among ``names`` (``<game>_heuristic``, ``<game>_expert``)."""
    heuristic = [p for p in names if p.endswith("_heuristic")]
    expert = [p for p in names if p.endswith("_expert")]
    return (heuristic[0], expert[0]) if len(heuristic) == 1 and len(expert) == 1 else None


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


def _render_goal(r: dict[str, Any]) -> list[str]:
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
