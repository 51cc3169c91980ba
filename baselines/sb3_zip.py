"""SB3 zip checkpoints as Parlour reads them: the ``parlour.json`` member (read as JSON: nothing is unpickled), and
the zip as a policy (:class:`PickledCheckpointPolicy`: loading it unpickles it, so only behind ``--trust-pickle``).
Here, on the bots' side, so that :func:`parlour.baselines.resolve` reaches no trainer module; SB3 is imported only
when a zip is loaded."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from parlour.baselines.base import Table
from parlour.baselines.extras import require_train_extra
from parlour.baselines.features import field_index, with_features
from parlour.baselines.policy_file import PolicyFileError, TrainedPolicy
from parlour.baselines.registry import lookup

#: The zip member that holds a checkpoint's metadata (env, table, features, config).
META_NAME = "parlour.json"


def read_meta(path: str | Path) -> dict[str, Any]:
    """The ``parlour.json`` member of a checkpoint zip (read as JSON; nothing is unpickled)."""
    path = Path(path)
    if not path.is_file():
        raise PolicyFileError(f"checkpoint not found: {path}")
    try:
        with zipfile.ZipFile(path) as zf:
            meta: dict[str, Any] = json.loads(zf.read(META_NAME))
    except (zipfile.BadZipFile, KeyError, json.JSONDecodeError) as exc:
        raise PolicyFileError(f"{path} is not a Parlour checkpoint (no readable {META_NAME}): {exc}") from None
    return meta


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
