"""Trained policies: exporting an SB3 model as a safe policy file, and (only when trusted) SB3's own zips.

The format we ship and load by default is :mod:`parlour.baselines.policy_file` (safetensors + a JSON spec, read
without unpickling); runs resume from pickle-free checkpoints (:mod:`parlour.training.checkpoints`). A finished run
also keeps SB3's own zip, ``model.zip``, for fine-tuning with SB3, with one more member, ``parlour.json``, describing
its table. Loading any zip unpickles it, so as a policy it is refused unless the user passes ``--trust-pickle``
(:class:`parlour.baselines.sb3_zip.PickledCheckpointPolicy`); ``parlour export`` turns a zip one trusts into a policy file.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from parlour.baselines.policy_file import (
    PolicyFileError,
    mlp_network,
    save_policy,
    table_of,
)
from parlour.baselines.sb3_zip import META_NAME, read_meta
from parlour.envs.core import package_version
from parlour.envs.fileio import atomic_write

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
