"""Parlour environments: a registry of versioned PettingZoo AEC environments.

>>> from parlour.envs import make
>>> env = make("six_suspects_v0", num_players=4)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from parlour.envs.core import ParlourEnv

#: env id -> module path of its versioned module (imported lazily so that ``import parlour.envs`` stays cheap).
ENVIRONMENTS: dict[str, str] = {
    "six_suspects_v0": "parlour.envs.six_suspects_v0",
    "goes_to_eleven_v0": "parlour.envs.goes_to_eleven_v0",
    "lady_alice_v1": "parlour.envs.lady_alice_v1",
    "lady_alice_v0": "parlour.envs.lady_alice_v0",  # the previous version, kept for the policies trained on it
    "elevenses_v0": "parlour.envs.elevenses_v0",
}


def make(name: str, **kwargs: Any) -> ParlourEnv[Any]:
    """Create the environment registered as ``name`` with its keyword arguments."""
    if name not in ENVIRONMENTS:
        raise ValueError(f"unknown environment {name!r}; available: {sorted(ENVIRONMENTS)}")
    module = importlib.import_module(ENVIRONMENTS[name])
    env: ParlourEnv[Any] = module.env(**kwargs)
    return env


def replay(record: dict[str, Any]) -> ParlourEnv[Any]:
    """Rebuild the game of a record (``env.unwrapped.record()``) and play its actions; returns the env.

    Raises ``ValueError`` if the record is for an unknown env or version, or if an action is illegal or the
    outcome differs (the record does not reproduce).
    """
    name = record.get("env")
    if name not in ENVIRONMENTS:
        raise ValueError(f"replay: unknown environment {name!r}; available: {sorted(ENVIRONMENTS)}")
    env = make(name, **record["options"])
    if record.get("env_version") != env.env_version:
        raise ValueError(
            f"replay: the record is for {name} version {record.get('env_version')}, this is {env.env_version}"
        )
    env.reset(options={"game_seed": int(record["game_seed"])})
    for i, step in enumerate(record["actions"]):
        seat = int(step["seat"])
        if env.agent_selection != env.possible_agents[seat]:
            raise ValueError(f"replay: step {i} is for seat {seat} but {env.agent_selection} is to act")
        env.step(int(step["action"]))
    if record.get("outcome") is not None and env.record()["outcome"] != record["outcome"]:
        raise ValueError("replay: the outcome differs from the record's")
    return env


def __getattr__(name: str) -> Any:
    # ``ParlourEnv`` on first use: ``import parlour.envs.<game>.rules`` must not import gymnasium and PettingZoo.
    if name == "ParlourEnv":
        from parlour.envs.core import ParlourEnv

        return ParlourEnv
    raise AttributeError(f"module 'parlour.envs' has no attribute {name!r}")


__all__ = ["ENVIRONMENTS", "ParlourEnv", "make", "replay"]
