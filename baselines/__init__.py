"""Scripted opponents: a registry of policies that see only what a player sees (and oracles, named so).

>>> from parlour.baselines import make
>>> bot = make("six_suspects_expert")
>>> action = bot.act(observation, action_mask, rng)
"""

from __future__ import annotations

from pathlib import Path

from parlour.baselines import search
from parlour.baselines.base import Policy, RandomPolicy
from parlour.baselines.elevenses import ElevensesExpert, ElevensesHeuristic
from parlour.baselines.elevenses import rollout_action as elevenses_rollout
from parlour.baselines.goes_to_eleven import GoesToElevenExpert, GoesToElevenHeuristic
from parlour.baselines.goes_to_eleven import rollout_action as goes_to_eleven_rollout
from parlour.baselines.lady_alice import LadyAliceExpert, LadyAliceHeuristic
from parlour.baselines.lady_alice import finish as lady_alice_finish
from parlour.baselines.lady_alice import rollout_action as lady_alice_rollout
from parlour.baselines.search import DeterminizedSearch
from parlour.baselines.six_suspects import SixSuspectsExpert, SixSuspectsHeuristic, SixSuspectsOracle

#: name -> policy class.
BOTS: dict[str, type[Policy]] = {
    cls.name: cls
    for cls in (
        RandomPolicy,
        SixSuspectsHeuristic,
        SixSuspectsExpert,
        SixSuspectsOracle,
        GoesToElevenHeuristic,
        GoesToElevenExpert,
        LadyAliceHeuristic,
        LadyAliceExpert,
        ElevensesHeuristic,
        ElevensesExpert,
        DeterminizedSearch,
    )
}

search.ROLLOUT_POLICIES["goes_to_eleven_v0"] = goes_to_eleven_rollout
search.ROLLOUT_POLICIES["lady_alice_v0"] = lady_alice_rollout
search.ROLLOUT_POLICIES["elevenses_v0"] = elevenses_rollout
#: Lady Alice playouts stop about a round later and are scored as at the turn cap.
search.ROLLOUT_HORIZONS["lady_alice_v0"] = search.Horizon(steps=12, finish=lady_alice_finish)

#: Folder of the shipped trained policies (``<env>_ppo.zip``, made by ``parlour baselines``).
CHECKPOINT_DIR = Path(__file__).resolve().parent / "checkpoints"
#: Shipped trained policy name -> env id. Loading one needs the ``train`` extra (PyTorch, sb3-contrib).
SHIPPED: dict[str, str] = {
    "six_suspects_ppo": "six_suspects_v0",
    "goes_to_eleven_ppo": "goes_to_eleven_v0",
    "lady_alice_ppo": "lady_alice_v0",
    "elevenses_ppo": "elevenses_v0",
}


def shipped_checkpoint(env_name: str) -> str | None:
    """The name of the shipped trained policy for ``env_name``, if there is one."""
    return next((n for n, e in SHIPPED.items() if e == env_name), None)


def _shipped_available(name: str) -> bool:
    """The file is there and the ``train`` extra that loads it is installed."""
    from importlib.util import find_spec

    return (CHECKPOINT_DIR / f"{SHIPPED[name]}_ppo.zip").is_file() and find_spec("sb3_contrib") is not None


def available(env_name: str | None = None) -> list[str]:
    """Bot names, optionally only those that can play ``env_name`` (shipped trained policies included)."""
    bots = [n for n, c in BOTS.items() if env_name is None or c.games is None or env_name in c.games]
    return bots + [n for n, e in SHIPPED.items() if (env_name in (None, e)) and _shipped_available(n)]


def make(name: str, env_name: str | None = None) -> Policy:
    """Create the bot registered as ``name`` (checked against ``env_name`` when given)."""
    if name not in BOTS and name not in SHIPPED:
        raise ValueError(f"unknown bot {name!r}; available: {available(env_name)}")
    if env_name is not None and name not in available(env_name):
        raise ValueError(f"bot {name!r} cannot play {env_name}; available for it: {available(env_name)}")
    if name in SHIPPED:
        from parlour.training.policies import CheckpointPolicy

        return CheckpointPolicy(CHECKPOINT_DIR / f"{SHIPPED[name]}_ppo.zip", SHIPPED[name], label=name)
    return BOTS[name]()


__all__ = ["BOTS", "SHIPPED", "Policy", "RandomPolicy", "available", "make", "shipped_checkpoint"]
