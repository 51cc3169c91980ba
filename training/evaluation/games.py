"""The one game loop of every evaluation: a game played from a seeded deal by the policies in its seats, with its
record; the deal seeds of a match and of the versioned evaluation deal sets; a shard of planned games (what
``parlour match``, ``parlour evaluate``, ``parlour benchmark`` and ``parlour baselines`` all play through, on one
process or sharded over Ray workers by :mod:`parlour.training.distributed`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from parlour.baselines.base import MixedTable, Policy
from parlour.envs import make as make_env
from parlour.envs.core import ParlourEnv
from parlour.envs.fileio import FileSafetyError, atomic_write

#: Versioned evaluation deal sets: name -> base seed of :func:`deal_seeds`. Never change a published entry; add one.
EVAL_SEED_SETS: dict[str, int] = {
    "v1": 20261129,
    # fresh deals on which a choice made on "v1" is reported (the exploitability bound: the best of several
    # responses chosen and reported on the same deals would report the luckiest)
    "report-v1": 20261205,
}


def play_game(env: ParlourEnv[Any], seats: Sequence[Policy], seed: int, rng: np.random.Generator) -> dict[str, Any]:
    """Play one game from ``env.reset(seed=seed)``; returns each seat's total reward, its number of decisions (the
    steps a learner in that seat would take: the rl track states its budget in games with it) and the outcome."""
    for p in seats:
        if isinstance(p, MixedTable):  # refused before the first step, not at the mixed table's first turn
            raise ValueError(
                f"{p.name} is a table of several players, not one: it can fill the other seats of a matchup"
            )
    env.reset(seed=seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    decisions = dict.fromkeys(env.possible_agents, 0)
    outcome: dict[str, Any] = {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        totals[agent] += reward
        if term or trunc:
            outcome = info.get("outcome", outcome)
            env.step(None)
            continue
        policy = seats[env.possible_agents.index(agent)]
        decisions[agent] += 1
        if policy.needs_env:
            action = policy.act_with_env(env, agent, rng)
            if env.game_over:  # the policy ended the game itself (a language agent that forfeited)
                continue
        else:
            action = policy.act(obs["observation"], obs["action_mask"], rng)
        env.step(action)
    result: dict[str, Any] = {
        "rewards": [totals[a] for a in env.possible_agents],
        "decisions": [decisions[a] for a in env.possible_agents],
        "outcome": outcome,
    }
    exchanges = _exchanges(env, seats)
    if exchanges is not None:
        result["exchanges"] = exchanges
        result["agents"] = _agent_summaries(env, seats, exchanges)
    return result


def _exchanges(env: ParlourEnv[Any], seats: Sequence[Policy]) -> list[dict[str, Any]] | None:
    """The prompts and answers of the language agents at the table in the game just played (``None``: none sat)."""
    talkers = list({id(p): p for p in seats if hasattr(p, "take_exchanges")}.values())
    if not talkers:
        return None
    found = [e for p in talkers for e in p.take_exchanges(env)]
    order = {a: i for i, a in enumerate(env.possible_agents)}
    return sorted(found, key=lambda e: order[e["agent"]]) if len(talkers) > 1 else found


def _agent_summaries(
    env: ParlourEnv[Any], seats: Sequence[Policy], exchanges: list[dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Per language-agent seat: its requests, refused answers, tokens and latency in this game."""
    out = {}
    for agent, policy in zip(env.possible_agents, seats, strict=True):
        if hasattr(policy, "game_summary"):
            out[agent] = policy.game_summary([e for e in exchanges if e["agent"] == agent])
    return out


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


def check_new_file(flag: str, path: Path, overwrite: bool) -> None:
    """Refuse, in one line before anything is played, to write the output file ``path`` (given by ``flag``, if any) where
    something already is, unless ``overwrite``; a folder there is refused either way. (The write itself goes through
    :func:`~parlour.envs.fileio.atomic_write`, which replaces a link rather than writing through it.)"""
    named = f"{flag} {path}" if flag else str(path)
    if path.is_dir() and not path.is_symlink():
        raise FileSafetyError(f"{named} is a folder; give the name of a file to write")
    if (path.exists() or path.is_symlink()) and not overwrite:
        raise FileSafetyError(f"{named} exists already; pass --overwrite to replace it, or choose another path")


def check_records_folder(folder: Path, overwrite: bool) -> None:
    """Refuse, in one line before anything is played, a ``--records`` folder that holds anything already (unless
    ``overwrite``: then a record of the same name is replaced, and the others are left as they are), a link (its
    records would land wherever it points) or something that is not a folder."""
    if folder.is_symlink():
        raise FileSafetyError(f"--records {folder} is a symbolic link; refusing to write through it")
    if folder.exists() and not folder.is_dir():
        raise FileSafetyError(f"--records {folder} is not a folder")
    if folder.is_dir() and any(folder.iterdir()) and not overwrite:
        raise FileSafetyError(
            f"--records {folder} exists already and is not empty; pass --overwrite to replace the records of the same "
            "names, or choose another folder"
        )


def file_safe(name: str) -> str:
    """A policy label as part of a file name."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def deal_seeds(seed: int, games: int) -> list[int]:
    """The fixed list of deal seeds of a match (the same for every bot line-up)."""
    return [int(s) for s in np.random.SeedSequence(seed).generate_state(games, dtype=np.uint64) >> np.uint64(1)]


def eval_deals(seed_set: str, games: int) -> list[int]:
    """The first ``games`` deal seeds of the versioned evaluation deal set ``seed_set``."""
    if seed_set not in EVAL_SEED_SETS:
        raise ValueError(f"unknown evaluation seed set {seed_set!r}; available: {sorted(EVAL_SEED_SETS)}")
    return deal_seeds(EVAL_SEED_SETS[seed_set], games)


@dataclass(frozen=True)
class PlannedGame:
    """One game of a shard: the policy in each seat, the deal's seed, the seed of the game's own random draws (the
    policies' choices), where to save its record (``None``: not saved) and whether that may replace a file already
    there (``--overwrite``; otherwise one there is refused, even one that appeared while the games were played)."""

    seats: Sequence[Policy]
    deal: int
    draws: Sequence[int]
    record: Path | None = None
    replace: bool = False


def play_planned(
    env_name: str,
    num_players: int,
    env_kwargs: dict[str, Any] | None,
    plan: Callable[[int], list[PlannedGame]],
    progress: Any,
    indices: Sequence[int],
) -> list[tuple[int, int, dict[str, Any]]]:
    """Play the games ``plan(i)`` of every index ``i`` of a shard on one env: ``(i, k, result)`` for the ``k``-th
    game of index ``i``, ``result`` as :func:`play_game` returns it. ``plan`` and its games are picklable (a shard
    may run on a Ray worker); each game's draws depend on its own seeds alone, so any sharding gives the same
    games."""
    env = make_env(env_name, num_players=num_players, **(env_kwargs or {}))
    out = []
    for i in indices:
        for k, game in enumerate(plan(i)):
            result = play_game(env, game.seats, game.deal, np.random.default_rng(list(game.draws)))
            # the prompts and answers go to the game's record only (the results keep each agent's counts)
            talk = {"exchanges": result.pop("exchanges"), "agents": result["agents"]} if "exchanges" in result else {}
            if game.record is not None:
                save_record(env, game.record, [p.name for p in game.seats], talk, overwrite=game.replace)
            out.append((i, k, result))
            if progress is not None:
                progress.update(1)
    return out
