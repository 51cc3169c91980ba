"""Trained policies: exporting an SB3 model as a safe policy file, and (only when trusted) SB3's own zips.

The format we ship and load by default is :mod:`parlour.baselines.policy_file` (safetensors + a JSON spec, read
without unpickling); runs resume from pickle-free checkpoints (:mod:`parlour.training.checkpoints`). A finished run
also keeps SB3's own zip, ``model.zip``, for fine-tuning with SB3, with one more member, ``parlour.json``, describing
its table. Loading any zip unpickles it, so as a policy it is refused unless the user passes ``--trust-pickle``
(:class:`PickledCheckpointPolicy`); ``parlour export`` turns a zip one trusts into a policy file.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from parlour.baselines.base import Table
from parlour.baselines.features import field_index, lookup, with_features
from parlour.baselines.policy_file import (
    PolicyFileError,
    TrainedPolicy,
    mlp_network,
    save_policy,
    table_of,
)
from parlour.envs.core import package_version
from parlour.envs.fileio import atomic_write

META_NAME = "parlour.json"
#: torch.nn activation class name -> the policy file's name for it.
_ACTIVATION_NAMES = {"ReLU": "relu", "Tanh": "tanh"}

# The zip's metadata and a policy file's table are one notion: a zip found to be unusable raises the same error.
CheckpointError = PolicyFileError


def checkpoint_meta(env: Any, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The metadata stored with a checkpoint trained on ``env`` (a ParlourEnv): its table and the version."""
    return {**table_of(env).as_dict(), "package_version": package_version(), **(extra or {})}


def save_checkpoint(model: Any, path: str | Path, meta: dict[str, Any]) -> Path:
    """Save ``model`` as SB3's own zip (for users who fine-tune with SB3) with its metadata, atomically: written to a
    fresh temporary file beside the target, then renamed over it."""

    def write(tmp: Path) -> None:
        model.save(tmp)
        with zipfile.ZipFile(tmp, "a") as zf:
            zf.writestr(META_NAME, json.dumps(meta, indent=2, default=str))

    return atomic_write(Path(path), write)


def network_of(policy: Any, features: list[str] | None = None, fields: list[str] | None = None) -> dict[str, Any]:
    """The policy file's ``network`` entry for an SB3 actor-critic policy (MLP on flattened observations, which
    are the env's observation followed by the feature sets ``features``)."""
    from stable_baselines3.common.torch_layers import FlattenExtractor

    if not isinstance(policy.features_extractor, FlattenExtractor):
        raise PolicyFileError(
            f"cannot export a policy with features extractor {type(policy.features_extractor).__name__}: "
            "the policy file format knows the MLP actor-critic on flattened observations"
        )
    arch = policy.net_arch
    pi, vf = (arch["pi"], arch["vf"]) if isinstance(arch, dict) else (list(arch), list(arch))
    activation = _ACTIVATION_NAMES.get(policy.activation_fn.__name__)
    if activation is None:
        raise PolicyFileError(f"cannot export activation {policy.activation_fn.__name__}: expected ReLU or Tanh")
    skip = bool(getattr(policy.mlp_extractor, "skip", 0))
    return mlp_network(pi, vf, activation, features or [], skip_features=skip, observation_fields=fields or [])


def export_policy(model: Any, path: str | Path, meta: dict[str, Any], training: dict[str, Any]) -> Path:
    """Write ``model``'s policy (an SB3 ``MaskablePPO``) as a safe policy file; ``meta`` is its table
    (:func:`checkpoint_meta`; its ``features`` the feature sets the model's input carries), ``training`` what the
    spec records of its training. Returns the spec's path."""
    tensors = {k: v.detach().cpu().numpy() for k, v in model.policy.state_dict().items()}
    network = network_of(model.policy, meta.get("features"), meta.get("observation_fields"))
    spec = {**meta, "network": network, "training": training}
    return save_policy(path, tensors, spec)


def read_meta(path: str | Path) -> dict[str, Any]:
    """The ``parlour.json`` member of a checkpoint zip (read as JSON; nothing is unpickled)."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint not found: {path}")
    try:
        with zipfile.ZipFile(path) as zf:
            meta: dict[str, Any] = json.loads(zf.read(META_NAME))
    except (zipfile.BadZipFile, KeyError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{path} is not a Parlour checkpoint (no readable {META_NAME}): {exc}") from None
    return meta


def training_record(meta: dict[str, Any], timesteps: int | None = None, **more: Any) -> dict[str, Any]:
    """The ``training`` entry of a policy file exported from a checkpoint with metadata ``meta``."""
    config = meta.get("config") or {}
    return {
        "algorithm": "MaskablePPO (sb3-contrib)",
        "seed": config.get("seed"),
        "timesteps": timesteps if timesteps is not None else meta.get("timesteps"),
        "config": config,
        **more,
    }


def export_zip(source: str | Path, target: str | Path) -> Path:
    """Convert a checkpoint zip one trusts (loading it unpickles it) into a policy file; returns the spec's path."""
    from sb3_contrib import MaskablePPO

    meta = read_meta(source)
    model = MaskablePPO.load(source, device="cpu")
    table = {k: meta[k] for k in ("env", "env_version", "num_players", "options", "observation_size", "num_actions")}
    return export_policy(
        model,
        target,
        {
            **table,
            "package_version": meta.get("package_version"),
            "features": meta.get("features", []),
            "observation_fields": meta.get("observation_fields", []),
        },
        training_record(meta),
    )


class PickledCheckpointPolicy(TrainedPolicy):
    """A MaskablePPO zip loaded with SB3 (unpickling it: only for files the user trusts). Its ``parlour.json``
    is checked against ``table`` before anything is unpickled."""

    def __init__(
        self,
        path: str | Path,
        table: Table | None = None,
        *,
        deterministic: bool = True,
        label: str | None = None,
    ) -> None:
        from parlour.training import require_train_extra

        require_train_extra(f"loading the SB3 zip {path}")
        import torch
        from sb3_contrib import MaskablePPO

        self.path = Path(path)
        self.spec = read_meta(self.path)
        self.name = label or str(self.path)  # type: ignore[misc]
        if table is not None:
            self.check_table(table)
        self.table = table
        self.games = (self.spec["env"],)  # type: ignore[misc]
        self.features = lookup(self.spec.get("features", []), self.spec["env"])
        s = self.spec
        self.keep = field_index(s["env"], s["num_players"], s["options"], s.get("observation_fields", []))
        self.model = MaskablePPO.load(self.path, device="cpu")
        self.deterministic = deterministic
        self._torch = torch

    @property
    def meta(self) -> dict[str, Any]:
        return self.spec

    def probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        torch = self._torch
        with torch.no_grad():
            x = with_features(self.features, observation, self.keep, action_mask)
            obs = torch.as_tensor(x[None], dtype=torch.float32)
            dist = self.model.policy.get_distribution(obs, action_masks=action_mask[None].astype(bool))
            probs: np.ndarray = dist.distribution.probs[0].numpy()  # type: ignore[union-attr]
        return probs

    def __getstate__(self) -> dict[str, Any]:
        # SubprocVecEnv pickles opponents: ship the path, reload (the user trusted it) on the other side.
        return {"path": str(self.path), "table": self.table, "deterministic": self.deterministic, "name": self.name}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(  # type: ignore[misc]
            state["path"], state["table"], deterministic=state["deterministic"], label=state["name"]
        )
