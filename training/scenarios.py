"""Versioned benchmark scenario sets: the tables BASELINES.md reports, fixed so that other numbers can sit beside ours.

A scenario is one game's evaluation: the player count, the opponents that fill the other seats (one table per
opponent), the evaluation deal set and how many of its deals, and the env keywords of the table. A policy is
seated once per deal in every seat, against each opponent. ``parlour benchmark`` and ``parlour baselines`` both
evaluate through :func:`benchmark_report`, so a bot benchmarked by a user gets exactly its BASELINES row.

Never change a published set: add ``v2`` instead. Results carry their set's name, and results of different sets
are not compared. A set need not hold every game: ``v2`` holds only Elevenses (its ``v1`` scenario, on 200 deals
instead of 50). A game's current set -- the one its BASELINES.md section publishes, and the default of
``parlour benchmark`` -- is the newest set that holds it (:func:`current`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from parlour.baselines.base import Policy


@dataclass(frozen=True)
class Scenario:
    env: str
    num_players: int
    #: One table per opponent: the policy in one seat, this opponent in all the others.
    opponents: tuple[str, ...]
    #: Deals of the evaluation deal set; each is played once with the policy in every seat.
    deals: int
    deal_set: str = "v1"
    #: Env keywords of the table (rules at their defaults here; the reward keyword does not change a win rate).
    options: dict[str, Any] = field(default_factory=dict)


def _scenario_sets() -> dict[str, dict[str, Scenario]]:
    """The published scenario sets, by version: each game declares its scenario in each set in its
    :class:`~parlour.baselines.spec.GameSpec` (``benchmark``), for every env id it plays."""
    from parlour.baselines import GAME_SPECS

    sets: dict[str, dict[str, Scenario]] = {}
    for game in GAME_SPECS.values():
        for version, t in game.benchmark.items():
            for env_name in game.env_ids:
                sets.setdefault(version, {})[env_name] = Scenario(env_name, t.num_players, t.opponents, t.deals)
    return sets


#: The published scenario sets, by version. A set, once published, never changes for a game already in it.
SCENARIO_SETS: dict[str, dict[str, Scenario]] = _scenario_sets()
#: The newest scenario set that holds every game (``parlour bench --eval-workers`` plays its scenarios).
LATEST = "v1"


def current(env_name: str) -> str:
    """The newest scenario set that holds ``env_name``: the one BASELINES.md publishes for it, and the set used when
    none is named."""
    held = [v for v, games in SCENARIO_SETS.items() if env_name in games]
    if not held:
        raise ScenarioError(f"no scenario set holds {env_name}; the sets hold {sorted(SCENARIO_SETS[LATEST])}")
    return max(held, key=lambda v: int(v.lstrip("v")))


class ScenarioError(ValueError):
    """An unknown scenario set or game, or results of different sets put side by side."""


def scenario(env_name: str, version: str | None = None) -> Scenario:
    """The scenario of ``env_name`` in set ``version`` (default: the game's :func:`current` set)."""
    if version is None:
        version = current(env_name)
    if version not in SCENARIO_SETS:
        raise ScenarioError(f"unknown scenario set {version!r}; available: {sorted(SCENARIO_SETS)}")
    games = SCENARIO_SETS[version]
    if env_name not in games:
        raise ScenarioError(f"scenario set {version} has no {env_name}; it has {sorted(games)}")
    return games[env_name]


def check_same_set(a: dict[str, Any], b: dict[str, Any], what: str) -> None:
    """Refuse to compare results of different scenario sets or games."""
    if a.get("scenario_set") != b.get("scenario_set") or a.get("env") != b.get("env"):
        raise ScenarioError(
            f"cannot compare {what}: one is {a.get('env')} on scenario set {a.get('scenario_set')!r}, the other "
            f"{b.get('env')} on {b.get('scenario_set')!r}; results are comparable only on the same set"
        )


def resolve_opponents(sc: Scenario) -> list[Policy]:
    from parlour.baselines import resolve

    return [resolve(o, sc.env, sc.num_players, sc.options) for o in sc.opponents]


def benchmark_report(
    policies: Sequence[Policy],
    sc: Scenario,
    version: str,
    *,
    progress: bool = False,
    workers: int = 1,
    ray_address: str = "",
) -> dict[str, Any]:
    """Every policy against every opponent of the scenario (:func:`~parlour.training.evaluation.matchups.run_evaluation`),
    labelled with its scenario set."""
    from parlour.training.evaluation.matchups import run_evaluation

    report = run_evaluation(
        sc.env,
        list(policies),
        resolve_opponents(sc),
        num_players=sc.num_players,
        games=sc.deals,
        seed_set=sc.deal_set,
        env_kwargs=sc.options,
        progress=progress,
        workers=workers,
        ray_address=ray_address,
    )
    report["scenario_set"] = version
    return report


def games_per_deal(m: dict[str, Any]) -> int:
    """How many games a stored matchup played on each deal (one per seat): its games over its deals."""
    return int(round(m["games"] / len(m["deal_wins"])))


def cell_ci(m: dict[str, Any]) -> tuple[float, float]:
    """A matchup's 95% win-rate interval, computed from its stored per-deal wins
    (:func:`parlour.training.stats.cell_interval`); a matchup stored without them keeps its stored interval."""
    from parlour.training.stats import cell_interval

    wins = m.get("deal_wins")
    if not wins:
        return (float(m["win_ci"][0]), float(m["win_ci"][1]))
    return cell_interval(wins, games_per_deal(m))


def cell(m: dict[str, Any], interval: bool = True) -> str:
    """A BASELINES table cell: win rate and its 95% interval (:func:`cell_ci`; ``interval=False``: the rate alone)."""
    if not interval:
        return f"{m['win_rate']:.3f}"
    lo, hi = cell_ci(m)
    return f"{m['win_rate']:.3f} ({lo:.3f}–{hi:.3f})"


def rows(report: dict[str, Any], policies: Sequence[str] | None = None, *, intervals: bool = True) -> list[str]:
    """BASELINES-format Markdown rows (``| policy | cell | cell | cell |``) for ``policies`` of a report
    (``intervals=False``: the rates alone, for runs on too few deals)."""
    cells = {(m["policy"], m["opponent"]): m for m in report["matchups"]}
    opponents = list(dict.fromkeys(m["opponent"] for m in report["matchups"]))
    out = []
    for p in policies if policies is not None else list(report["policies"]):
        out.append(f"| {p} | " + " | ".join(cell(cells[(p, o)], intervals) for o in opponents) + " |")
    return out


def header(report: dict[str, Any]) -> list[str]:
    opponents = list(dict.fromkeys(m["opponent"] for m in report["matchups"]))
    return ["| policy | " + " | ".join(f"vs {o}" for o in opponents) + " |", "|---|" + "---|" * len(opponents)]
