"""Resume checkpoints that load without running anything: tensors in safetensors, everything else in JSON.

A checkpoint is a folder (``RUN/checkpoints/latest/`` for training, ``RUN/checkpoints/pretrain/`` for behaviour
cloning) holding:

- ``parlour.json``: what it was trained for (the table, the config) and the step it was written at;
- ``state.json``: the trainer's state as a JSON tree (counters, optimizer settings, random-number-generator states),
  in which every array stands as ``{"__tensor__": NAME}``, every tuple as ``{"__tuple__": [...]}`` and every mapping
  with non-string keys as ``{"__items__": [[key, value], ...]}``;
- ``tensors.safetensors``: the arrays (network weights, optimizer moments, torch RNG states) by name.

Reading one parses JSON and safetensors only, so a run folder someone handed over can be resumed without running
anything from it; the trainer rebuilds its model from the run's (validated) config and loads this state into it.
The folder is written beside the last one and renamed over it, so a crash leaves one whole checkpoint.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from parlour.envs.fileio import atomic_write, read_json

META_FILE = "parlour.json"
STATE_FILE = "state.json"
TENSORS_FILE = "tensors.safetensors"
#: Keys that mark the special nodes of ``state.json``.
_TENSOR, _TUPLE, _ITEMS = "__tensor__", "__tuple__", "__items__"


class CheckpointError(ValueError):
    """A checkpoint that cannot be read or used; the message names the file and what is wrong."""


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "detach")


def to_tree(state: Any) -> tuple[Any, dict[str, np.ndarray]]:
    """``state`` (nested dicts, lists, tuples, numbers, strings, NumPy arrays and torch tensors) as a JSON tree and
    the arrays it refers to. Anything else is refused with its path named."""
    tensors: dict[str, np.ndarray] = {}

    def walk(x: Any, path: str) -> Any:
        if x is None or isinstance(x, bool | int | float | str):
            return x
        if isinstance(x, np.generic):
            return x.item()
        if isinstance(x, np.ndarray) or _is_torch(x):
            torch_tensor = _is_torch(x)
            name = f"t{len(tensors)}"
            tensors[name] = np.ascontiguousarray(x.detach().cpu().numpy() if torch_tensor else x)
            return {_TENSOR: name, "torch": torch_tensor} if torch_tensor else {_TENSOR: name}
        if isinstance(x, dict):
            if all(isinstance(k, str) for k in x) and not ({_TENSOR, _TUPLE, _ITEMS} & set(x)):
                return {k: walk(v, f"{path}/{k}") for k, v in x.items()}
            return {_ITEMS: [[walk(k, f"{path}:key"), walk(v, f"{path}/{k}")] for k, v in x.items()]}
        if isinstance(x, tuple):
            return {_TUPLE: [walk(v, f"{path}[{i}]") for i, v in enumerate(x)]}
        if isinstance(x, list):
            return [walk(v, f"{path}[{i}]") for i, v in enumerate(x)]
        raise CheckpointError(f"cannot checkpoint {path or '/'}: a {type(x).__name__} is not data")

    return walk(state, ""), tensors


def from_tree(tree: Any, tensors: dict[str, np.ndarray], source: str) -> Any:
    """The inverse of :func:`to_tree`: arrays back in place (torch tensors where they were), tuples and mappings
    rebuilt. A reference to a missing array is refused, naming ``source``."""

    def walk(x: Any) -> Any:
        if isinstance(x, dict):
            if _TENSOR in x:
                name = x[_TENSOR]
                if not isinstance(name, str) or name not in tensors:
                    raise CheckpointError(f"{source}: refers to an array {name!r} that the tensors file lacks")
                if x.get("torch"):
                    import torch

                    return torch.from_numpy(tensors[name].copy())
                return tensors[name]
            if _TUPLE in x:
                if not isinstance(x[_TUPLE], list):
                    raise CheckpointError(f"{source}: a {_TUPLE} node must hold a list")
                return tuple(walk(v) for v in x[_TUPLE])
            if _ITEMS in x:
                items = x[_ITEMS]
                if not isinstance(items, list) or not all(isinstance(p, list) and len(p) == 2 for p in items):
                    raise CheckpointError(f"{source}: an {_ITEMS} node must hold [key, value] pairs")
                out = {}
                for k, v in items:
                    if not (k is None or isinstance(k, bool | int | float | str)):
                        raise CheckpointError(f"{source}: a mapping key must be a number or a string, got {k!r}")
                    out[k] = walk(v)
                return out
            return {k: walk(v) for k, v in x.items()}
        if isinstance(x, list):
            return [walk(v) for v in x]
        return x

    return walk(tree)


def write_checkpoint(folder: str | Path, meta: dict[str, Any], state: Any) -> Path:
    """Write ``meta`` and ``state`` (see :func:`to_tree`) as the checkpoint folder ``folder``, atomically."""
    import json

    from safetensors.numpy import save_file

    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tree, tensors = to_tree(state)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".tmp", dir=folder.parent))
    old = folder.parent / f".{folder.name}.{os.getpid()}.old"
    try:
        save_file(tensors, str(tmp / TENSORS_FILE))
        atomic_write(tmp / STATE_FILE, json.dumps(tree))
        atomic_write(tmp / META_FILE, json.dumps(meta, indent=2, default=str))
        os.chmod(tmp, 0o755)
        if folder.is_symlink() or folder.is_file():
            folder.unlink()  # a link or file planted where the checkpoint goes is replaced, never followed
        if folder.exists():
            os.replace(folder, old)
        os.replace(tmp, folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)
    return folder


def read_meta(folder: str | Path) -> dict[str, Any]:
    """A checkpoint's ``parlour.json`` (JSON only)."""
    path = Path(folder) / META_FILE
    try:
        meta = read_json(path, "checkpoint description")
    except ValueError as exc:
        raise CheckpointError(str(exc)) from None
    if not isinstance(meta, dict):
        raise CheckpointError(f"{path} is not a checkpoint description (expected a JSON object)")
    steps = meta.get("timesteps", 0)
    if isinstance(steps, bool) or not isinstance(steps, int) or not 0 <= steps < 2**63:
        raise CheckpointError(f"{path}: timesteps must be an integer in [0, 2**63), got {steps!r}")
    return meta


def read_checkpoint(folder: str | Path) -> tuple[dict[str, Any], Any]:
    """``(meta, state)`` of a checkpoint folder; only JSON and safetensors are parsed."""
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    folder = Path(folder)
    meta = read_meta(folder)
    state_path, tensors_path = folder / STATE_FILE, folder / TENSORS_FILE
    try:
        tree = read_json(state_path, "checkpoint state")
    except ValueError as exc:
        raise CheckpointError(str(exc)) from None
    if not tensors_path.is_file():
        raise CheckpointError(f"checkpoint tensors not found: {tensors_path}")
    try:
        tensors = load_file(str(tensors_path))
    except (SafetensorError, OSError, ValueError) as exc:
        raise CheckpointError(f"{tensors_path} is not a safetensors file: {exc}") from None
    return meta, from_tree(tree, tensors, str(state_path))


def is_checkpoint(folder: str | Path) -> bool:
    """Whether ``folder`` holds a checkpoint written by :func:`write_checkpoint`."""
    folder = Path(folder)
    return (folder / META_FILE).is_file() and (folder / STATE_FILE).is_file()


# ----------------------------------------------------------------------------------------- random states
def rng_state() -> dict[str, Any]:
    """The process-wide random states a trainer draws from (Python's, NumPy's legacy global, torch's)."""
    import random

    import torch

    kind, keys, pos, has_gauss, gauss = np.random.get_state()
    version, internal, gauss_next = random.getstate()
    return {
        "python": [version, list(internal), gauss_next],
        "numpy": [kind, keys, int(pos), int(has_gauss), float(gauss)],
        "torch": torch.get_rng_state(),
    }


def set_rng_state(state: dict[str, Any], source: str) -> None:
    """Restore :func:`rng_state`; a malformed one is refused, naming ``source``."""
    import random

    import torch

    try:
        version, internal, gauss_next = state["python"]
        random.setstate((int(version), tuple(int(x) for x in internal), gauss_next))
        kind, keys, pos, has_gauss, gauss = state["numpy"]
        np.random.set_state((str(kind), np.asarray(keys, np.uint32), int(pos), int(has_gauss), float(gauss)))
        torch.set_rng_state(torch.as_tensor(state["torch"], dtype=torch.uint8))
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise CheckpointError(f"{source}: the random states cannot be restored ({exc})") from None
