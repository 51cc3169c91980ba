"""Trained policies as :class:`~parlour.baselines.base.Policy` objects, and checkpoints that know their game.

A Parlour checkpoint is sb3-contrib's ``MaskablePPO`` zip with one more member, ``parlour.json``: the env id and
version, the player count, the rule options, the observation size and the package version. Loading a checkpoint
for another game or player count is refused with a message saying which.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from parlour.baselines.base import Policy
from parlour.envs.core import package_version

META_NAME = "parlour.json"


class CheckpointError(ValueError):
    """A checkpoint that cannot be used here."""


def checkpoint_meta(env: Any, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The metadata stored with a checkpoint trained on ``env`` (a ParlourEnv)."""
    return {
        "env": env.metadata["name"],
        "env_version": env.env_version,
        "num_players": env.num_players,
        "options": {k: v for k, v in env.options.items() if k != "num_players"},
        "observation_size": env.observation_layout.size,
        "num_actions": env.num_actions,
        "package_version": package_version(),
        **(extra or {}),
    }


def save_checkpoint(model: Any, path: str | Path, meta: dict[str, Any]) -> Path:
    """Save ``model`` with its metadata atomically: written beside the target, then renamed over it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp.zip")
    model.save(tmp)
    with zipfile.ZipFile(tmp, "a") as zf:
        zf.writestr(META_NAME, json.dumps(meta, indent=2, default=str))
    os.replace(tmp, path)
    return path


def ship_checkpoint(source: str | Path, target: str | Path) -> Path:
    """Copy a checkpoint for shipping: the same policy, without the optimiser's running moments (a third of the
    size). Playing and evaluating are unchanged; training from it restarts Adam's statistics."""
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(source, device="cpu")
    policy = model.policy
    kwargs = {"lr": model.lr_schedule(1), **policy.optimizer_kwargs}
    policy.optimizer = policy.optimizer_class(policy.parameters(), **kwargs)
    return save_checkpoint(model, target, read_meta(source))


def read_meta(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint not found: {path}")
    try:
        with zipfile.ZipFile(path) as zf:
            meta: dict[str, Any] = json.loads(zf.read(META_NAME))
    except (zipfile.BadZipFile, KeyError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{path} is not a Parlour checkpoint (no readable {META_NAME}): {exc}") from None
    return meta


def check_compatible(path: str | Path, meta: dict[str, Any], env_name: str, num_players: int) -> None:
    if meta.get("env") != env_name or meta.get("num_players") != num_players:
        raise CheckpointError(
            f"checkpoint {path} was trained for {meta.get('env')} with {meta.get('num_players')} players; "
            f"it cannot play {env_name} with {num_players} players"
        )


class CheckpointPolicy(Policy):
    """A trained MaskablePPO policy. Greedy by default; ``deterministic=False`` samples with the caller's rng."""

    needs_env = False

    def __init__(
        self,
        path: str | Path,
        env_name: str | None = None,
        num_players: int | None = None,
        *,
        deterministic: bool = True,
        label: str | None = None,
    ) -> None:
        import torch
        from sb3_contrib import MaskablePPO

        self.path = Path(path)
        self.meta = read_meta(self.path)
        if env_name is not None and num_players is not None:
            check_compatible(self.path, self.meta, env_name, num_players)
        self.games = (self.meta["env"],)  # type: ignore[misc]
        self.model = MaskablePPO.load(self.path, device="cpu")
        self.deterministic = deterministic
        self.name = label or str(self.path)  # type: ignore[misc]
        self._torch = torch

    def probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        torch = self._torch
        with torch.no_grad():
            obs = torch.as_tensor(observation[None], dtype=torch.float32)
            dist = self.model.policy.get_distribution(obs, action_masks=action_mask[None].astype(bool))
            probs: np.ndarray = dist.distribution.probs[0].numpy()  # type: ignore[union-attr]
        return probs

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        probs = self.probabilities(observation, action_mask)
        if self.deterministic:
            return int(np.argmax(np.where(action_mask.astype(bool), probs, -1.0)))
        probs = np.where(action_mask.astype(bool), probs, 0.0)
        return int(rng.choice(len(probs), p=probs / probs.sum()))

    def __getstate__(self) -> dict[str, Any]:
        # SubprocVecEnv pickles opponents: ship the path, reload on the other side.
        return {"path": str(self.path), "deterministic": self.deterministic, "name": self.name}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], deterministic=state["deterministic"], label=state["name"])  # type: ignore[misc]


def resolve_policy(spec: str, env_name: str, num_players: int, *, deterministic: bool = True) -> Policy:
    """A bot name or a checkpoint path (``*.zip``) as a policy that can play ``env_name`` with ``num_players``."""
    from parlour.baselines import BOTS, available, make

    if spec in BOTS:
        return make(spec, env_name)
    if spec.endswith(".zip") or Path(spec).is_file():
        return CheckpointPolicy(spec, env_name, num_players, deterministic=deterministic)
    raise ValueError(f"unknown policy {spec!r}: expected one of {available(env_name)} or a checkpoint path (*.zip)")
