"""Lady Alice's ``accusations`` analysis (declared in its GameSpec): accusations read back from game records: are a policy's accusations right, and were they sure?

An accusation is *right* when its verdict shows every smile (the accuser wins). It was *sure* when, at the moment
the seat chose to accuse, every solution consistent with what that seat knew agreed on a winning accusation (the
expert's test, :data:`parlour.baselines.lady_alice.belief_features`'s certainty flag); otherwise the seat still
held at least one wrong solution when it accused. ``parlour accusations`` plays the benchmark games with records
and prints these figures for each policy beside the bots'.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parlour.baselines.base import Policy
from parlour.baselines.lady_alice import belief_features
from parlour.envs import make
from parlour.envs.lady_alice import rules
from parlour.training.evaluation.games import file_safe

#: Index of the certainty flag in the belief features.
_SURE = rules.NUM_CLUES + rules.NUM_CATEGORIES


@dataclass
class Accusations:
    """One policy's accusations over a set of games."""

    policy: str
    games: int = 0
    sure: list[bool] = field(default_factory=list)  # per accusation: was it sure when chosen
    right: list[bool] = field(default_factory=list)  # per accusation: did it win

    def summary(self) -> dict[str, Any]:
        k = len(self.right)
        unsure_right = [r for r, s in zip(self.right, self.sure, strict=True) if not s]
        return {
            "policy": self.policy,
            "games": self.games,
            "accusations": k,
            "per_game": k / self.games if self.games else 0.0,
            "right": sum(self.right) / k if k else None,
            "unsure": (k - sum(self.sure)) / k if k else None,
            "right_when_unsure": sum(unsure_right) / len(unsure_right) if unsure_right else None,
        }


def read_accusations(games: Iterable[tuple[dict[str, Any], int]], policy: str) -> Accusations:
    """Replay each Lady Alice game record and collect the accusations of the seat given with it (``policy``'s)."""
    out = Accusations(policy)
    for record, seat in games:
        seats = {seat}
        out.games += 1
        env = make(record["env"], **record["options"])
        env.reset(options={"game_seed": int(record["game_seed"])})
        pending: list[bool] = []
        for step in record["actions"]:
            if step["seat"] in seats and step["action"] == rules.ACCUSE:
                features = belief_features(env.observe(step["agent"])["observation"])
                pending.append(bool(features[_SURE]))
            env.step(int(step["action"]))
        made = [r for r in env.game.history if r.accusation and r.seat in seats]
        if len(made) != len(pending):  # every accusation chosen is completed (the game cannot end mid-accusation)
            raise ValueError(
                f"record of game {record['game_seed']}: {len(pending)} accusations begun, {len(made)} made"
            )
        out.sure += pending
        out.right += [r.smiles == rules.smiles_needed(env.num_players) for r in made]
    return out


def format_table(rows: list[dict[str, Any]]) -> str:
    def pct(v: float | None) -> str:
        return "—" if v is None else f"{v:.3f}"

    lines = [
        "| policy | opponent | games | accusations per game | right | made unsure | right when unsure |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['policy']} | {r['opponent']} | {r['games']} | {r['per_game']:.3f} | {pct(r['right'])} | "
            f"{pct(r['unsure'])} | {pct(r['right_when_unsure'])} |"
        )
    return "\n".join(lines)


def table(
    env_name: str,
    policies: Sequence[Policy],
    opponents: Sequence[Policy],
    *,
    num_players: int,
    games: int,
    seed_set: str = "v1",
) -> list[dict[str, Any]]:
    """Each policy at a table of each opponent on the evaluation deals (as ``parlour evaluate`` seats them),
    played with records, and its accusations read back: one row per pair."""
    from parlour.training.evaluation.matchups import play_matchup
    from parlour.training.play import load_record

    rows = []
    for policy in policies:
        for opponent in opponents:
            with tempfile.TemporaryDirectory() as tmp:
                play_matchup(
                    env_name, policy, opponent, num_players=num_players, games=games, seed_set=seed_set,
                    records=Path(tmp),
                )  # fmt: skip
                folder = Path(tmp) / f"{file_safe(policy.name)}_vs_{file_safe(opponent.name)}"
                played = [
                    (load_record(p), int(m.group(1)))
                    for p in sorted(folder.glob("*.json"))
                    if (m := re.search(r"_seat(\d+)\.json$", p.name))
                ]
            rows.append({**read_accusations(played, policy.name).summary(), "opponent": opponent.name})
    return rows
