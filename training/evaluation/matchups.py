"""Evaluation with fixed, versioned deals and seat rotation; confidence intervals; cross-play; ratings.

A *matchup* ``P vs O`` seats policy ``P`` once and fills every other seat with ``O``. Each deal of the evaluation
set is played once with ``P`` in every seat, so ``P`` plays each seat equally often on the same cards. Every random
choice is seeded from the deal set, the matchup and the seat, so the same command gives the same numbers.

The games of one deal share their cards, so they are not independent: win rates carry 95% Wilson intervals at the
design-effect sample size and mean rewards 95% intervals from a bootstrap over deals (:mod:`parlour.training.stats`). Per-seat rates (one game per deal) keep
Wilson intervals. Each matchup also stores its wins per deal, so its interval can be recomputed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from parlour.baselines.base import MixedTable, Policy
from parlour.baselines.policy_file import table_of
from parlour.envs import make as make_env
from parlour.envs.core import package_version
from parlour.envs.fileio import atomic_write
from parlour.training.evaluation.games import EVAL_SEED_SETS, PlannedGame, eval_deals, file_safe, play_planned
from parlour.training.stats import (
    CELL_METHOD,
    CLUSTER_METHOD,
    cell_interval,
    clustered_interval,
    format_ci,
    per_cluster_means,
    wilson_interval,
)


@dataclass
class Matchup:
    policy: str
    opponent: str
    wins: list[bool] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    seats: list[int] = field(default_factory=list)
    #: For every game, the index of its deal in the deal set (the bootstrap's cluster).
    deals: list[int] = field(default_factory=list)
    #: For every game, whether each seat won.
    table: list[list[bool]] = field(default_factory=list)
    #: For every game, the decisions the policy's seat took (its steps, as a learner in that seat counts them).
    decisions: list[int] = field(default_factory=list)
    #: For every game where the policy is a language agent: its requests, refused answers, tokens and latency.
    talk: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        n = len(self.wins)
        deal_wins = np.bincount(self.deals, weights=self.wins).astype(int).tolist() if n else []
        played: np.ndarray = np.bincount(np.unique(self.deals, return_inverse=True)[1], weights=self.wins)
        lo, hi = cell_interval(played, n // len(played)) if n else (0.0, 1.0)
        m = float(np.mean(self.rewards)) if n else 0.0
        mlo, mhi = clustered_interval(per_cluster_means(self.rewards, self.deals), proportion=False)
        per_seat = {}
        for s in sorted(set(self.seats)):
            idx = [i for i, x in enumerate(self.seats) if x == s]
            w = sum(self.wins[i] for i in idx)
            slo, shi = wilson_interval(w, len(idx))
            per_seat[str(s)] = {"games": len(idx), "win_rate": w / len(idx), "win_ci": [slo, shi]}
        return {
            "policy": self.policy,
            "opponent": self.opponent,
            "games": n,
            "win_rate": sum(self.wins) / max(1, n),
            "win_ci": [lo, hi],
            # what an interval that took the games as independent would say (for comparison only)
            "win_ci_wilson": list(wilson_interval(sum(self.wins), n)),
            "mean_reward": m,
            "reward_ci": [mlo, mhi],
            "per_seat": per_seat,
            "deal_wins": deal_wins,
            **({"mean_decisions": float(np.mean(self.decisions))} if self.decisions else {}),
            **({"language_agent": language_summary(self.talk)} if self.talk else {}),
        }


def language_summary(games: list[dict[str, Any]]) -> dict[str, Any]:
    """A language agent's costs over a matchup's games (each :meth:`LanguagePolicy.game_summary`): totals, and per
    game the mean requests, refused answers and tokens (``None`` where the agent reported none)."""
    n = len(games)
    out: dict[str, Any] = {"games": n, "forfeits": sum(bool(g.get("forfeited")) for g in games)}
    for key in ("requests", "invalid", "prompt_tokens", "completion_tokens", "latency_s"):
        values = [g[key] for g in games]
        total = None if any(v is None for v in values) else float(sum(values))
        out[key] = total
        out[f"{key}_per_game"] = None if total is None else total / n
    probed = [g["probes"] for g in games if "probes" in g]
    if probed:
        from parlour.baselines.probe import summary

        out["probe"] = summary([a for p in probed for a in p["answers"]], sum(p["asked"] for p in probed))
    return out


def play_matchup(
    env_name: str,
    policy: Policy,
    opponent: Policy,
    *,
    num_players: int,
    games: int,
    seed_set: str = "v1",
    env_kwargs: dict[str, Any] | None = None,
    progress: Any = None,
    records: Path | None = None,
    overwrite: bool = False,
    workers: int = 1,
    ray_address: str = "",
) -> Matchup:
    """``policy`` in each seat in turn, ``opponent`` in all the others, on ``games`` deals of the seed set.

    ``records``: a folder to save every game's record in (``<policy>_vs_<opponent>/deal0000_seat0.json``, ...); a
    record file already there is refused unless ``overwrite``.
    ``workers > 1`` plays the deals in shards on Ray workers (:mod:`parlour.training.distributed`): the same games,
    the same result."""
    env = make_env(env_name, num_players=num_players, **(env_kwargs or {}))
    table = table_of(env)
    for p in (policy, opponent):
        p.check_table(table)  # a policy trained for another table is refused before the first step
    deals = eval_deals(seed_set, games)
    plan = partial(_seat_rotation, policy, opponent, num_players, seed_set, deals, records, overwrite)
    play = partial(play_planned, env_name, num_players, env_kwargs, plan, progress if workers == 1 else None)
    from parlour.training.distributed import map_shards

    result = Matchup(policy.name, opponent.name)
    for d, seat, game in map_shards(
        play, list(range(len(deals))), workers, address=ray_address, progress=progress, per_item=num_players
    ):
        winners = set(game["outcome"].get("winners", []))
        result.wins.append(seat in winners)
        result.table.append([s in winners for s in range(num_players)])
        result.rewards.append(float(game["rewards"][seat]))
        result.seats.append(seat)
        result.deals.append(d)
        result.decisions.append(int(game["decisions"][seat]))
        talk = game.get("agents", {}).get(env.possible_agents[seat])
        if talk is not None:
            forfeited = game["outcome"].get("forfeit", {}).get("agent") == env.possible_agents[seat]
            result.talk.append(talk | {"forfeited": forfeited})
    return result


def _seat_rotation(
    policy: Policy,
    opponent: Policy,
    num_players: int,
    seed_set: str,
    deals: list[int],
    records: Path | None,
    overwrite: bool,
    d: int,
) -> list[PlannedGame]:
    """Deal ``d`` of the set, once with ``policy`` in each seat; each game's draws depend on its deal and seat
    alone."""
    folder = records / f"{file_safe(policy.name)}_vs_{file_safe(opponent.name)}" if records is not None else None
    base = EVAL_SEED_SETS[seed_set]
    return [
        PlannedGame(
            [policy if s == seat else _other(opponent, (s - seat) % num_players - 1, d) for s in range(num_players)],
            deals[d],
            (base, d, seat),
            folder / f"deal{d:04d}_seat{seat}.json" if folder is not None else None,
            overwrite,
        )
        for seat in range(num_players)
    ]


def _other(opponent: Policy, position: int, d: int) -> Policy:
    """Who sits in the ``position``-th other seat (clockwise from the evaluated seat) on deal ``d``: the opponent, or
    the member of a mixed table whose turn it is there (:meth:`MixedTable.seated`)."""
    return opponent.seated(position, d) if isinstance(opponent, MixedTable) else opponent


def rate(matchups: Sequence[Matchup]) -> dict[str, dict[str, float]]:
    """OpenSkill (Plackett-Luce) ratings from every matchup game, in a fixed order.

    Each game gives one head-to-head result between the seated policy and each opponent seat: the one that won
    ranks first; both or neither is a draw. (Counting seats one by one keeps a policy that fills several seats
    from being credited with every one of them.)
    """
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings: dict[str, Any] = {}
    for m in matchups:
        for name in (m.policy, m.opponent):
            ratings.setdefault(name, model.rating(name=name))
    # Interleave the matchups game by game: sequential rating updates depend on order, and a policy whose games
    # all came first would be judged against opponents whose ratings had not settled yet.
    games = [
        (m, m.seats[g], m.table[g])
        for g in range(max((len(m.table) for m in matchups), default=0))
        for m in matchups
        if g < len(m.table) and m.policy != m.opponent
    ]
    for m, seat, table in games:
        for other, other_won in enumerate(table):
            if other == seat:
                continue
            won = table[seat]
            ranks = [1.0, 1.0] if won == other_won else ([1.0, 2.0] if won else [2.0, 1.0])
            new = model.rate([[ratings[m.policy]], [ratings[m.opponent]]], ranks=ranks)
            ratings[m.policy], ratings[m.opponent] = new[0][0], new[1][0]
    return {
        name: {"mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal()}
        for name, r in sorted(ratings.items(), key=lambda kv: -kv[1].ordinal())
    }


def run_evaluation(
    env_name: str,
    policies: Sequence[Policy],
    opponents: Sequence[Policy] | None = None,
    *,
    num_players: int,
    games: int,
    seed_set: str = "v1",
    env_kwargs: dict[str, Any] | None = None,
    progress: bool = False,
    records: Path | None = None,
    overwrite: bool = False,
    workers: int = 1,
    ray_address: str = "",
) -> dict[str, Any]:
    """Every policy against every opponent (default: the policies themselves, a cross-play matrix);
    ``records``: a folder to save every game's record in (a record file already there is refused unless
    ``overwrite``); ``workers``: Ray workers to shard each matchup's deals
    over (see :func:`play_matchup`)."""
    opponents = list(policies) if opponents is None else list(opponents)
    pairs = [(p, o) for p in policies for o in opponents]
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(pairs) * games * num_players, desc=f"evaluate {env_name}", unit="game")
    matchups = [
        play_matchup(
            env_name,
            p,
            o,
            num_players=num_players,
            games=games,
            seed_set=seed_set,
            env_kwargs=env_kwargs,
            progress=bar,
            records=records,
            overwrite=overwrite,
            workers=workers,
            ray_address=ray_address,
        )
        for p, o in pairs
    ]
    if bar is not None:
        bar.close()
    summaries = [m.summary() for m in matchups]
    per_policy = {}
    for p in policies:
        mine = [m for m in matchups if m.policy == p.name]
        wins = [w for m in mine for w in m.wins]
        rewards = [r for m in mine for r in m.rewards]
        deals = [d for m in mine for d in m.deals]  # the same deal against every opponent: one cluster
        pooled = np.bincount(np.unique(deals, return_inverse=True)[1], weights=wins) if wins else np.zeros(0)
        lo, hi = cell_interval(pooled, len(wins) // len(pooled)) if wins else (0.0, 1.0)
        mlo, mhi = clustered_interval(per_cluster_means(rewards, deals), proportion=False)
        per_policy[p.name] = {
            "games": len(wins),
            "win_rate": sum(wins) / max(1, len(wins)),
            "win_ci": [lo, hi],
            "mean_reward": float(np.mean(rewards)) if rewards else 0.0,
            "reward_ci": [mlo, mhi],
        }
    return {
        "env": env_name,
        "num_players": num_players,
        "env_kwargs": dict(env_kwargs or {}),
        "seed_set": seed_set,
        "deals": games,
        "interval_method": f"win rates: {CELL_METHOD}; mean rewards: {CLUSTER_METHOD}",
        "package_version": package_version(),
        "matchups": summaries,
        "policies": per_policy,
        "cross_play": {
            p.name: {o.name: s["win_rate"] for o, s in zip(opponents, summaries[i * len(opponents) :], strict=False)}
            for i, p in enumerate(policies)
        },
        "ratings": rate(matchups),
    }


def format_report(report: dict[str, Any]) -> str:
    """Markdown: the matchup table, the cross-play matrix and the ratings."""
    lines = [
        f"{report['env']}, {report['num_players']} players, deal set {report['seed_set']} "
        f"({report['deals']} deals × {report['num_players']} seats per matchup), parlour {report['package_version']}",
        f"Intervals: {report.get('interval_method', CLUSTER_METHOD)}.",
        "",
        "| policy | opponent (other seats) | games | win rate | 95% CI | mean reward | 95% CI |",
        "|---|---|---:|---:|---|---:|---|",
    ]
    for s in report["matchups"]:
        lines.append(
            f"| {s['policy']} | {s['opponent']} | {s['games']} | {s['win_rate']:.3f} | {format_ci(s['win_ci'])} "
            f"| {s['mean_reward']:+.3f} | {s['reward_ci'][0]:+.3f}–{s['reward_ci'][1]:+.3f} |"
        )
    opponents = list(next(iter(report["cross_play"].values())).keys())
    lines += ["", "Cross-play (row's win rate against a table of the column):", ""]
    lines.append("| | " + " | ".join(opponents) + " |")
    lines.append("|---|" + "---:|" * len(opponents))
    for p, row in report["cross_play"].items():
        lines.append(f"| {p} | " + " | ".join(f"{row[o]:.3f}" for o in opponents) + " |")
    lines += ["", "Win rate by seat (all opponents):", ""]
    seats = list(range(report["num_players"]))
    lines.append("| policy | " + " | ".join(f"seat {s}" for s in seats) + " |")
    lines.append("|---|" + "---:|" * len(seats))
    for p in report["policies"]:
        cells = []
        for s in seats:
            games = wins = 0.0
            for m in report["matchups"]:
                if m["policy"] == p and str(s) in m["per_seat"]:
                    g = m["per_seat"][str(s)]
                    games += g["games"]
                    wins += g["win_rate"] * g["games"]
            cells.append(f"{wins / games:.3f}" if games else "-")
        lines.append(f"| {p} | " + " | ".join(cells) + " |")
    lines += ["", "Ratings (OpenSkill Plackett-Luce; ordinal = mu − 3·sigma):", ""]
    lines.append("| policy | mu | sigma | ordinal |")
    lines.append("|---|---:|---:|---:|")
    for name, r in report["ratings"].items():
        lines.append(f"| {name} | {r['mu']:.2f} | {r['sigma']:.2f} | {r['ordinal']:.2f} |")
    return "\n".join(lines)


def write_report(
    report: dict[str, Any], out_dir: Path, stem: str = "evaluation", *, overwrite: bool = True
) -> tuple[Path, Path]:
    """Write ``<stem>.json`` and ``<stem>.md`` into ``out_dir``; with ``overwrite=False`` a file already at either
    name is refused (``FileSafetyError``), never replaced. A link there is replaced, never written through."""
    out_dir.mkdir(parents=True, exist_ok=True)
    js, md = report_paths(out_dir, stem)
    atomic_write(js, json.dumps(report, indent=2), replace=overwrite)
    atomic_write(md, format_report(report) + "\n", replace=overwrite)
    return js, md


def report_paths(out_dir: Path, stem: str = "evaluation") -> tuple[Path, Path]:
    """The files :func:`write_report` writes."""
    return out_dir / f"{stem}.json", out_dir / f"{stem}.md"
