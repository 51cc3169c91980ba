"""Scripted opponents: a registry of policies that see only what a player sees (and oracles, named so).

>>> from parlour.baselines import make
>>> bot = make("six_suspects_expert")
>>> action = bot.act(observation, action_mask, rng)
"""

from __future__ import annotations

from parlour.baselines.base import Policy, RandomPolicy
from parlour.baselines.six_suspects import SixSuspectsExpert, SixSuspectsHeuristic, SixSuspectsOracle

#: name -> policy class.
BOTS: dict[str, type[Policy]] = {
    cls.name: cls for cls in (RandomPolicy, SixSuspectsHeuristic, SixSuspectsExpert, SixSuspectsOracle)
}


def available(env_name: str | None = None) -> list[str]:
    """Bot names, optionally only those that can play ``env_name``."""
    return [n for n, c in BOTS.items() if env_name is None or c.games is None or env_name in c.games]


def make(name: str, env_name: str | None = None) -> Policy:
    """Create the bot registered as ``name`` (checked against ``env_name`` when given)."""
    if name not in BOTS:
        raise ValueError(f"unknown bot {name!r}; available: {available(env_name)}")
    if env_name is not None and name not in available(env_name):
        raise ValueError(f"bot {name!r} cannot play {env_name}; available for it: {available(env_name)}")
    return BOTS[name]()


__all__ = ["BOTS", "Policy", "RandomPolicy", "available", "make"]
