"""The ``configs/<game>/baselines.yaml`` schema: the distilled track's seeds and scenario, and the parts of the rl
track (families, sweep, ablation) and the exploitability bounds; read once per game by :func:`specs`. Also where the
published files go: what ships in :data:`CHECKPOINTS` (the import package's folder), every seed's policy file, the run
records and the figures in the repository's archive (:data:`ARCHIVE`), outside the import package."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parlour.baselines import CHECKPOINT_DIR

#: What ships in the wheel: the shipped policies (``<env>_<track>.json`` and the weights each names) and the published
#: results (``<env>_<results>.json``), nothing else.
CHECKPOINTS = CHECKPOINT_DIR
#: The archive behind the published tables, relative to the repository's root: every seed's policy file
#: (``seeds/``), the published runs' records (``runs/``) and the figures (``figures/``). A data folder under ``docs/``
#: that no module imports and the wheel does not carry (``parlour baselines`` reads and writes it in a clone).
ARCHIVE = Path("docs") / "archive"
#: The figures of the published tables (in a clone of the repository).
FIGURES = CHECKPOINT_DIR.parent.parent / ARCHIVE / "figures"


def archive_beside(folder: Path) -> Path | None:
    """The archive that goes with the published results in ``folder`` -- ``<repo>/docs/archive`` for
    ``<repo>/baselines/checkpoints`` -- if there is one there; ``None`` for any other folder (a test's, a user's),
    which then holds its own seeds' files."""
    archive = folder.resolve().parent.parent / ARCHIVE
    return archive if archive.is_dir() else None


def seeds_folder(folder: Path) -> Path:
    """Where the per-seed policy files that go with the results in ``folder`` live: the archive's ``seeds/`` beside
    the package's checkpoints, else ``folder`` itself."""
    archive = archive_beside(folder)
    return archive / "seeds" if archive is not None else folder


def figures_folder(folder: Path) -> Path:
    """Where the figures that go with the results in ``folder`` go: the archive's ``figures/``, else ``figures``
    beside ``folder``."""
    archive = archive_beside(folder)
    return archive / "figures" if archive is not None else folder.parent / "figures"


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
    #: rung adding one thing to the one above it (the last is ``config`` as it is: no override).
    ladder: dict[str, list[str]] = field(default_factory=dict)
    #: The config swept or ablated where it is not one of ``rl.algorithms`` (an ablation's base: the family as first
    #: designed; empty: ``rl.algorithms[family]``).
    config: str = ""
    #: An ablation's outcome: the family's published config, fixed from the ablation's rows before its published
    #: seeds train (the row with the largest area under its curve at the heuristic's table).
    fixes: str = ""


@dataclass
class RLSpec:
    """A game's rl track (``rl:`` in its ``baselines.yaml``; :mod:`parlour.training.publish.rl`)."""

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
    """A game's approximate-exploitability table (``exploit:`` in its ``baselines.yaml``; :mod:`parlour.training.publish.exploit`)."""

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
    #: Compute the bound (:func:`parlour.training.publish.exploit.exploitability_bound`): the trained responses and every
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
    return seeds_folder(folder) / f"{env_name}_distilled_seed{seed}.json"
