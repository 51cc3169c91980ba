"""Resume checkpoints that load without running anything: tensors in safetensors, everything else in JSON.

A checkpoint is a folder (``RUN/checkpoints/latest/`` for training, ``RUN/checkpoints/pretrain/`` for behaviour
cloning) holding:

- ``parlour.json``: what it was trained for (the table, the config) and the step it was written at;
- ``state.json``: the trainer's state as a JSON tree (counters, optimizer settings, random-number-generator states),
  in which every array stands as ``{"__tensor__": NAME}``, every tuple as ``{"__tuple__": [...]}`` and every mapping
  with non-string keys as ``{"__items__": [[key, value], ...]}``;
- ``tensors.safetensors``: the arrays (network weights, optimizer moments, torch RNG states) by name, each of a
  plain numeric or bool dtype (:data:`DTYPES`), which ``state.json`` records beside its name.

Reading one parses JSON and safetensors only, so a run folder someone handed over can be resumed without running
anything from it; the trainer rebuilds its model from the run's (validated) config and loads this state into it.
An array of another dtype than the one recorded, or of a dtype outside :data:`DTYPES`, is refused in one line.

The folder is written beside the last one and renamed over it, so a crash leaves one whole checkpoint (or, killed
between the two renames, the last one as ``.NAME.PID.old`` beside it, which :func:`is_checkpoint` points to). A
write that fails (a full disk) is one :class:`CheckpointWriteError` line and leaves the last checkpoint as it was.
Every file is written 0644 and the folder 0755, like the rest of a run folder.
"""

from __future__ import annotations

import glob
import math
import os
import re
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


#: The files of a whole checkpoint.
FILES = (META_FILE, STATE_FILE, TENSORS_FILE)
#: The dtypes an array of a checkpoint may have: plain numbers and bools (what safetensors and torch both hold).
DTYPES = frozenset(
    ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64")
)


class CheckpointError(ValueError):
    """A checkpoint that cannot be read or used; the message names the file and what is wrong."""


class CheckpointWriteError(CheckpointError, OSError):
    """A checkpoint that could not be written (a full disk, a read-only folder); the message names the folder and the
    reason, and the last checkpoint there is kept. Both a :class:`CheckpointError` and an :class:`OSError` (with
    the failure's ``errno`` where one is known)."""


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
            try:
                array = np.ascontiguousarray(x.detach().cpu().numpy() if torch_tensor else x)
            except TypeError as exc:  # torch's bfloat16 and the like have no NumPy dtype
                raise CheckpointError(f"cannot checkpoint {path or '/'}: {exc}") from None
            if array.dtype.name not in DTYPES:
                raise CheckpointError(
                    f"cannot checkpoint {path or '/'}: an array of dtype {array.dtype} is not plain numbers"
                )
            tensors[name] = array
            node = {_TENSOR: name, "dtype": array.dtype.name}
            return node | {"torch": True} if torch_tensor else node
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


def _array(node: dict[str, Any], tensors: dict[str, np.ndarray], source: str, arrays: str) -> Any:
    """The array a ``{"__tensor__": NAME, "dtype": ...}`` node refers to, checked: a plain dtype, the one recorded
    (checkpoints written before dtypes were recorded have none to compare), and one torch holds for a torch node."""
    name = node[_TENSOR]
    if not isinstance(name, str) or name not in tensors:
        raise CheckpointError(f"{source}: refers to an array {name!r} that the tensors file lacks")
    array = tensors[name]
    if not isinstance(array, np.ndarray) or array.dtype.name not in DTYPES:
        kind = array.dtype if isinstance(array, np.ndarray) else type(array).__name__
        raise CheckpointError(
            f"{arrays}: array {name!r} is of dtype {kind}, not plain numbers ({', '.join(sorted(DTYPES))})"
        )
    recorded = node.get("dtype", array.dtype.name)
    if recorded != array.dtype.name:
        raise CheckpointError(
            f"{arrays}: array {name!r} is of dtype {array.dtype}, but {source} records it as {recorded!r}"
        )
    if not node.get("torch"):
        return array
    import torch

    try:
        return torch.from_numpy(array.copy())  # the same dtype: from_numpy never converts
    except TypeError as exc:  # a dtype this torch does not hold (older torches lack uint16/32/64)
        raise CheckpointError(
            f"{arrays}: array {name!r} of dtype {array.dtype} cannot be a torch tensor ({exc})"
        ) from None


def from_tree(tree: Any, tensors: dict[str, np.ndarray], source: str, arrays: str | None = None) -> Any:
    """The inverse of :func:`to_tree`: arrays back in place (torch tensors where they were, of the dtype recorded),
    tuples and mappings rebuilt. A reference to a missing array, an array of a dtype outside :data:`DTYPES` or
    other than the one recorded, and a torch tensor of a dtype torch lacks are refused, naming ``source`` (the tree's
    file) or, for what is wrong with an array, ``arrays`` (the tensors' file; default ``source``)."""

    def walk(x: Any) -> Any:
        if isinstance(x, dict):
            if _TENSOR in x:
                return _array(x, tensors, source, arrays or source)
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


def _reason(exc: BaseException) -> tuple[str, int | None]:
    """Why a write failed, in words (``no space left on device``), and its errno where one is known: an OSError's
    own, or the one safetensors' Rust error quotes (``IoError(Os { code: 28, ... })``)."""
    code = exc.errno if isinstance(exc, OSError) else None
    if code is None:
        found = re.search(r"\bcode: (\d+)", str(exc))
        code = int(found.group(1)) if found else None
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower(), code
    if code is not None:
        return os.strerror(code).lower(), code
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0], code


def _write_error(folder: Path, exc: BaseException) -> CheckpointWriteError:
    reason, code = _reason(exc)
    error = CheckpointWriteError(
        f"cannot write the checkpoint {folder}: {reason} (the last checkpoint there, if any, is kept)"
    )
    error.errno = code
    return error


def write_checkpoint(folder: str | Path, meta: dict[str, Any], state: Any) -> Path:
    """Write ``meta`` and ``state`` (see :func:`to_tree`) as the checkpoint folder ``folder``, atomically: into a
    fresh folder beside it, renamed over it when whole. A write that fails (a full disk, a read-only folder) raises
    :class:`CheckpointWriteError`, one line naming ``folder`` and the reason, and ``folder`` keeps what it held."""
    import json

    from safetensors import SafetensorError
    from safetensors.numpy import save_file

    folder = Path(folder)
    tree, tensors = to_tree(state)  # what is not data is refused before anything is written
    state_text, meta_text = json.dumps(tree), json.dumps(meta, indent=2, default=str)
    old = folder.parent / f".{folder.name}.{os.getpid()}.old"
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".tmp", dir=folder.parent))
    except OSError as exc:
        raise _write_error(folder, exc) from None
    try:
        # through atomic_write: 0644 like every file of a run folder (safetensors itself writes 0600)
        atomic_write(tmp / TENSORS_FILE, lambda path: save_file(tensors, str(path)))
        atomic_write(tmp / STATE_FILE, state_text)
        atomic_write(tmp / META_FILE, meta_text)
        os.chmod(tmp, 0o755)
        if folder.is_symlink() or folder.is_file():
            folder.unlink()  # a link or file planted where the checkpoint goes is replaced, never followed
        if folder.exists():
            # a stale one of an earlier process of this pid would refuse the rename
            shutil.rmtree(old, ignore_errors=True)
            os.replace(folder, old)
        try:
            os.replace(tmp, folder)
        except OSError:
            if old.is_dir() and not folder.exists():
                os.replace(old, folder)  # the last checkpoint back where it was
            raise
    except (OSError, SafetensorError) as exc:
        raise _write_error(folder, exc) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if folder.is_dir():  # else the last checkpoint is only there: is_checkpoint points to it
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
    """``(meta, state)`` of a checkpoint folder; only JSON and safetensors are parsed. Anything wrong with it -- a
    file missing or unreadable, an array of a dtype outside :data:`DTYPES` or other than ``state.json`` records --
    raises :class:`CheckpointError`, one line naming the file."""
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
    except Exception as exc:  # noqa: BLE001 - SafetensorError, or a TypeError/AttributeError for a dtype NumPy lacks
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise CheckpointError(f"{tensors_path} is not a safetensors file of plain numbers: {first}") from None
    return meta, from_tree(tree, tensors, str(state_path), str(tensors_path))


def is_checkpoint(folder: str | Path) -> bool:
    """Whether ``folder`` holds a checkpoint written by :func:`write_checkpoint`, never taking a damaged one for none.

    - False only when there is no checkpoint: no ``folder`` (and no last checkpoint left beside it by an interrupted
      write), or an empty folder;
    - True when it holds all of :data:`FILES` (whether they read is :func:`read_checkpoint`'s to say);
    - else :class:`CheckpointError`, one line naming the folder and what is wrong: a file of :data:`FILES` missing,
      a file or a dangling link where the folder goes, or no folder but the last checkpoint left as
      ``.NAME.PID.old`` by a write killed between its two renames.

    So ``--resume`` refuses a damaged checkpoint instead of training from step 0 over it: callers let the error
    through (the command line prints a ValueError as one line)."""
    folder = Path(folder)
    if not folder.exists():
        if folder.is_symlink():
            raise CheckpointError(f"{folder} is a link to nothing, not a checkpoint folder")
        left = [p for p in sorted(folder.parent.glob(f".{glob.escape(folder.name)}.*.old")) if _whole(p)]
        if left:
            raise CheckpointError(
                f"{folder} is missing but {left[0]} holds the last checkpoint (a write was interrupted): rename it to "
                f"{folder.name} to resume from it, or delete it to start over"
            )
        return False
    if not folder.is_dir():
        raise CheckpointError(f"{folder} is a file, not a checkpoint folder")
    missing = [name for name in FILES if not (folder / name).is_file()]
    if not missing:
        return True
    if not any(folder.iterdir()):
        return False
    raise CheckpointError(
        f"{folder} is a damaged checkpoint: it lacks {', '.join(missing)}; refusing to take it for no checkpoint "
        "(move it away to start over)"
    )


def _whole(folder: Path) -> bool:
    return folder.is_dir() and all((folder / name).is_file() for name in FILES)


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


#: The length of a Mersenne Twister's key (NumPy's legacy generator; Python's state is these and a position).
MT_KEYS = 624


def _integer(value: Any, low: int, high: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or not low <= value <= high:
        raise ValueError(f"{what} must be an integer in [{low}, {high}], got {value!r}")
    return int(value)


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.number) or not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number, got {value!r}")
    return float(value)


def _array_of(value: Any, dtype: str, shape: tuple[int, ...] | None, what: str) -> np.ndarray:
    """``value`` as a NumPy array (a torch tensor's own) if it is one of ``dtype`` and ``shape`` (None: any 1-D)."""
    array = value.detach().cpu().numpy() if _is_torch(value) else value
    if not isinstance(array, np.ndarray) or array.dtype.name != dtype or array.ndim != 1:
        kind = f"{array.dtype} array of shape {array.shape}" if isinstance(array, np.ndarray) else type(value).__name__
        raise ValueError(f"{what} must be a 1-D {dtype} array, got a {kind}")
    if shape is not None and array.shape != shape:
        raise ValueError(f"{what} must be a 1-D {dtype} array of shape {shape}, got shape {array.shape}")
    return array


def set_rng_state(state: dict[str, Any], source: str) -> None:
    """Restore :func:`rng_state`; a malformed one is refused, naming ``source``, before any state changes: Python's
    a version and 625 unsigned 32-bit integers, NumPy's ``MT19937`` with 624 uint32 keys, torch's a 1-D uint8
    array of the length torch's own has; never converted from another dtype."""
    import random

    import torch

    try:
        if not isinstance(state, dict):
            raise TypeError(f"expected a mapping, got a {type(state).__name__}")
        version, internal, gauss_next = state["python"]
        if not isinstance(internal, list | tuple) or len(internal) != MT_KEYS + 1:
            raise ValueError(f"python's state must hold {MT_KEYS + 1} integers")
        keys = [_integer(x, 0, 2**32 - 1, "python's state") for x in internal[:-1]]
        python = (
            _integer(version, 2, 3, "python's version"),
            (*keys, _integer(internal[-1], 0, MT_KEYS, "python's position")),
            None if gauss_next is None else _number(gauss_next, "python's gauss_next"),
        )
        kind, mt, pos, has_gauss, gauss = state["numpy"]
        if kind != "MT19937":
            raise ValueError(f"numpy's generator must be 'MT19937', got {kind!r}")
        legacy = (
            kind,
            _array_of(mt, "uint32", (MT_KEYS,), "numpy's keys"),
            _integer(pos, 0, MT_KEYS, "numpy's position"),
            _integer(has_gauss, 0, 1, "numpy's has_gauss"),
            _number(gauss, "numpy's gauss"),
        )
        size = tuple(torch.get_rng_state().shape)  # checked here, so that no state changes unless all three can
        torch_state = torch.from_numpy(_array_of(state["torch"], "uint8", size, "torch's state").copy())
        random.setstate(python)
        np.random.set_state(legacy)
        torch.set_rng_state(torch_state)
    except (KeyError, TypeError, ValueError, RuntimeError, OverflowError) as exc:
        raise CheckpointError(f"{source}: the random states cannot be restored ({exc})") from None
