"""``parlour match``: scripted opponents (or any policies) against each other with seat rotation, and a results table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from parlour.baselines.base import Policy
from parlour.envs import make as make_env
from parlour.training.evaluation.games import PlannedGame, deal_seeds, play_planned
from parlour.training.stats import mean_interval, wilson_interval


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
    overwrite: bool = False,
    workers: int = 1,
    ray_address: str = "",
) -> list[dict[str, Any]]:
    """Play ``games`` games; seat ``s`` of game ``g`` is ``bots[(s + g) % len(bots)]`` (seat rotation). Each game's
    random draws are seeded by the match seed and the game's index, so ``workers > 1`` (Ray workers, each playing a
    shard of the games) gives the same table.

    ``records``: a folder to save every game's record in (``game_00000.json``, ...: see :func:`save_record`); a
    record file already there is refused unless ``overwrite``.

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

    plan = partial(_rotation, list(bots), policies, num_players, seed, deal_seeds(seed, games), records, overwrite)
    play = partial(play_planned, env_name, num_players, env_kwargs, plan, bar if workers == 1 else None)
    for g, _, result in map_shards(play, list(range(games)), workers, address=ray_address, progress=bar):
        outcome = result["outcome"]
        winners = set(outcome.get("winners", []))
        scores = [float(x) for x in outcome.get("scores", [0] * num_players)]
        played = max(1, len(outcome.get("games", [None])))  # a match of several games scores per game
        for s in range(num_players):
            st = stats[bots[(s + g) % len(bots)]]
            st.games += 1
            st.wins += s in winners
            st.score += scores[s] / played
            st.rewards.append(float(result["rewards"][s]))
    if bar is not None:
        bar.close()
    return [st.row() for st in stats.values()]


def _rotation(
    bots: list[str],
    policies: dict[str, Policy],
    num_players: int,
    seed: int,
    deals: list[int],
    records: Path | None,
    overwrite: bool,
    g: int,
) -> list[PlannedGame]:
    """Game ``g`` of a match: seat ``s`` is ``bots[(s + g) % len(bots)]``; its draws are seeded by the match seed and
    ``g`` alone."""
    seats = [policies[bots[(s + g) % len(bots)]] for s in range(num_players)]
    record = records / f"game_{g:05d}.json" if records is not None else None
    return [PlannedGame(seats, deals[g], (seed, g), record, overwrite)]


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
