"""Play policies against each other: one game, or a seat-rotated match with a results table."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from parlour.baselines.base import Policy
from parlour.envs import make as make_env
from parlour.envs.core import ParlourEnv
from parlour.envs.fileio import atomic_write

#: z for a two-sided 95% interval.
Z95 = 1.959963984540054


def wilson_interval(successes: float, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion (well-behaved at 0 and 1 and for small samples)."""
    if trials <= 0:
        return (0.0, 1.0)
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """Mean and normal-approximation 95% interval ``(mean, low, high)`` (sample standard deviation)."""
    x = np.asarray(values, float)
    if len(x) == 0:
        return (0.0, 0.0, 0.0)
    m = float(x.mean())
    if len(x) == 1:
        return (m, m, m)
    half = z * float(x.std(ddof=1)) / math.sqrt(len(x))
    return (m, m - half, m + half)


def play_game(env: ParlourEnv[Any], seats: Sequence[Policy], seed: int, rng: np.random.Generator) -> dict[str, Any]:
    """Play one game from ``env.reset(seed=seed)``; returns each seat's total reward and the outcome."""
    env.reset(seed=seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    outcome: dict[str, Any] = {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        totals[agent] += reward
        if term or trunc:
            outcome = info.get("outcome", outcome)
            env.step(None)
            continue
        policy = seats[env.possible_agents.index(agent)]
        if policy.needs_env:
            action = policy.act_with_env(env, agent, rng)
        else:
            action = policy.act(obs["observation"], obs["action_mask"], rng)
        env.step(action)
    return {"rewards": [totals[a] for a in env.possible_agents], "outcome": outcome}


def save_record(
    env: ParlourEnv[Any],
    path: Path,
    players: Sequence[str],
    extra: dict[str, Any] | None = None,
    *,
    overwrite: bool = True,
) -> Path:
    """Write the game just played as a record (``env.record()`` plus the policy in each seat and ``extra``) that
    ``parlour replay`` steps through and :func:`parlour.envs.replay` reproduces.

    Written atomically through a temporary file with a unique name (:func:`parlour.envs.fileio.atomic_write`): a
    reader sees the whole record or none, and a link at ``path`` is replaced, never written through. With
    ``overwrite=False`` anything already at ``path`` is left alone and ``FileSafetyError`` raised."""
    record = env.record() | {"players": list(players)} | (extra or {})
    atomic_write(path, json.dumps(record, indent=1), replace=overwrite)
    return path


def file_safe(name: str) -> str:
    """A policy label as part of a file name."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


@dataclass
class BotStats:
    name: str
    games: int = 0
    wins: int = 0
    score: float = 0.0
    rewards: list[float] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        lo, hi = wilson_interval(self.wins, self.games)
        m, mlo, mhi = mean_interval(self.rewards)
        return {
            "bot": self.name,
            "games": self.games,
            "win_rate": self.wins / max(1, self.games),
            "win_ci": (lo, hi),
            "score_per_game": self.score / max(1, self.games),
            "mean_reward": m,
            "reward_ci": (mlo, mhi),
        }


def deal_seeds(seed: int, games: int) -> list[int]:
    """The fixed list of deal seeds of a match (the same for every bot line-up)."""
    return [int(s) for s in np.random.SeedSequence(seed).generate_state(games, dtype=np.uint64) >> np.uint64(1)]


def run_match(
    env_name: str,
    bots: Sequence[str],
    *,
    num_players: int,
    games: int,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    progress: bool = False,
    trust_pickle: bool = False,
    records: Path | None = None,
    workers: int = 1,
    ray_address: str = "",
) -> list[dict[str, Any]]:
    """Play ``games`` games; seat ``s`` of game ``g`` is ``bots[(s + g) % len(bots)]`` (seat rotation). Each game's
    random draws are seeded by the match seed and the game's index, so ``workers > 1`` (Ray workers, each playing a
    shard of the games) gives the same table.

    ``records``: a folder to save every game's record in (``game_00000.json``, ...: see :func:`save_record`).

    ``bots`` are policy specs (bot or shipped names, policy files, ``module:NAME`` or ``path/to/file.py:NAME``), each checked against the
    table before the first game. Returns one row per bot: games played (seat appearances), win rate with a Wilson
    95% interval, score per game (the game's own points) and mean reward with a 95% interval.
    """
    from parlour.baselines import resolve

    if not bots:
        raise ValueError("run_match: give at least one bot")
    if games < 1:
        raise ValueError(f"run_match: games={games} is out of range: expected an integer >= 1")
    make_env(env_name, num_players=num_players, **(env_kwargs or {}))  # bad keywords are refused before anything
    policies = {  # the resolver checks each against this table
        name: resolve(name, env_name, num_players, env_kwargs, trust_pickle=trust_pickle)
        for name in dict.fromkeys(bots)
    }
    stats = {name: BotStats(policy.name) for name, policy in policies.items()}
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=games, desc=f"{env_name} match", unit="game")
    from parlour.training.distributed import map_shards

    play = partial(
        _play_games, env_name, list(bots), policies, num_players, seed, deal_seeds(seed, games), env_kwargs, records,
        bar if workers == 1 else None,
    )  # fmt: skip
    for names, winners, scores, played, rewards in map_shards(
        play, list(range(games)), workers, address=ray_address, progress=bar
    ):
        for s, name in enumerate(names):
            st = stats[name]
            st.games += 1
            st.wins += s in winners
            st.score += scores[s] / played
            st.rewards.append(rewards[s])
    if bar is not None:
        bar.close()
    return [st.row() for st in stats.values()]


def _play_games(
    env_name: str,
    bots: list[str],
    policies: dict[str, Policy],
    num_players: int,
    seed: int,
    deals: list[int],
    env_kwargs: dict[str, Any] | None,
    records: Path | None,
    progress: Any,
    indices: Sequence[int],
) -> list[tuple[list[str], set[int], list[float], int, list[float]]]:
    """Games ``indices`` of a match: per game the seated names, winners, scores, games in it and rewards."""
    env = make_env(env_name, num_players=num_players, **(env_kwargs or {}))
    out = []
    for g in indices:
        names = [bots[(s + g) % len(bots)] for s in range(num_players)]
        seats = [policies[n] for n in names]
        result = play_game(env, seats, deals[g], np.random.default_rng([seed, g]))  # each game seeded alone
        if records is not None:
            save_record(env, records / f"game_{g:05d}.json", [p.name for p in seats])
        outcome = result["outcome"]
        scores = [float(x) for x in outcome.get("scores", [0] * num_players)]
        out.append((names, set(outcome.get("winners", [])), scores, max(1, len(outcome.get("games", [None]))),
                    [float(r) for r in result["rewards"]]))  # fmt: skip
        if progress is not None:
            progress.update(1)
    return out


def format_table(rows: Sequence[dict[str, Any]]) -> str:
    """A Markdown results table."""
    lines = [
        "| bot | games | win rate (95% CI) | score/game | mean reward (95% CI) |",
        "|---|---:|---|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['bot']} | {r['games']} | {r['win_rate']:.3f} ({r['win_ci'][0]:.3f}–{r['win_ci'][1]:.3f}) "
            f"| {r['score_per_game']:.3f} | {r['mean_reward']:+.3f} ({r['reward_ci'][0]:+.3f}–{r['reward_ci'][1]:+.3f}) |"
        )
    return "\n".join(lines)
